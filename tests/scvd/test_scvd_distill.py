"""SCVD training data: hand-off at the boundary call, g_ver insert/remove exactness, loss mask."""

from __future__ import annotations

import pytest

from agentpost.scvd.distill.samples import (
    BEGIN,
    END,
    G_VER,
    insert_g_ver,
    remove_g_ver,
    student_prefix,
    to_messages,
    training_sample,
)
from agentpost.scvd.examples import edge_case
from agentpost.trajectory.model import Turn


def test_prefix_ends_right_after_the_boundary_call() -> None:
    traj, _ = edge_case("same-step-separate-calls")  # step 1: write (0), then run (1)
    pre = student_prefix(traj, 1, 0)
    assert [len(t.tool_calls) for t in pre.turns] == [1, 1]
    assert len(pre.turns[-1].observations) == 1 and len(traj.turns[1].tool_calls) == 2
    assert [len(t.tool_calls) for t in student_prefix(traj, 1, 0, "step").turns] == [1, 2]
    with pytest.raises(ValueError):
        student_prefix(traj, 1, 5)


def test_g_ver_insert_then_remove_is_exact() -> None:
    traj, _ = edge_case("fail-then-repair")
    msgs = to_messages(student_prefix(traj, 0, 0))
    with_g = insert_g_ver(msgs)
    assert with_g[-1]["role"] == "tool" and with_g[-1]["content"].endswith(END)
    assert with_g[-1]["content"].startswith(msgs[-1]["content"])
    assert G_VER in with_g[-1]["content"] and G_VER not in msgs[-1]["content"]
    assert remove_g_ver(with_g) == msgs
    with pytest.raises(ValueError):
        remove_g_ver(msgs)
    for rule in (
        "not evidence",
        "/logs",
        "Ground in the requirements",
        "Repair and re-check",
        "Stop once",
    ):
        assert rule in G_VER


def test_sample_supervises_only_the_teacher_and_needs_a_resolved_final_state() -> None:
    traj, _ = edge_case("fail-then-repair")
    pre = student_prefix(traj, 0, 0)
    teacher = [Turn(index=9, step=9, text="check it", reasoning="think")]
    assert training_sample(pre, teacher, resolved=False) is None
    s = training_sample(pre, teacher, resolved=True)
    roles = [m["role"] for m in s["messages"]]
    assert s["loss_mask"] == [
        int(i >= s["handoff_message"] and r == "assistant") for i, r in enumerate(roles)
    ]
    assert sum(s["loss_mask"]) == 1 and s["messages"][-1]["content"] == "check it"
    assert all(BEGIN not in (m.get("content") or "") for m in s["messages"])
    plain = training_sample(pre, teacher, resolved=True, supervise_reasoning=False)
    assert "reasoning_content" not in plain["messages"][-1]
