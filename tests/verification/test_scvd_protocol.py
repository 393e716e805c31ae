"""Annotation protocol: rendering, parsing with normalised spellings, consistency rules 1–5."""

from __future__ import annotations

import json

import pytest

from agentpost.trajectory.model import Observation, Producer, ToolCall, Trajectory, Turn
from agentpost.verification.protocol import (
    SYSTEM_PROMPT,
    AnnotationError,
    Truncation,
    build_messages,
    check_answer,
    parse_annotation,
    render,
)

P = Producer(name="test", version="0")


def traj() -> Trajectory:
    def call(cmd):
        return ToolCall(name="bash", command=cmd, kind="shell")

    return Trajectory(
        id="t1", task_id="demo", instruction="Write hello.txt", producer=P,
        turns=[
            Turn(index=0, step=1, text="look", tool_calls=[call("ls")],
                 observations=[Observation(text="a.txt", exit_code=0)]),
            Turn(index=1, step=2, tool_calls=[call("echo hi > hello.txt"), call("cat hello.txt")],
                 observations=[Observation(text="", exit_code=0), Observation(text="hi", exit_code=0)]),
            Turn(index=2, step=3, tool_calls=[ToolCall(name="task_complete", kind="control")]),
        ],
    )  # fmt: skip


def ann(**kw) -> dict:
    base = {"case_id": "c", "task_name": "demo", "candidate_formed": True, "candidate_step": 2,
            "candidate_tool_call_index": 0, "boundary_type": "clean",
            "verification_triggered": True, "verification_outcome": "supports_pass"}  # fmt: skip
    base.update(kw)
    return base


def test_render_names_steps_and_zero_based_calls_and_hides_the_reward() -> None:
    t = traj()
    t.outcome.reward = 1.0
    text = render(t)
    assert "=== step 2 ===" in text and "[step 2, tool call 1]" in text
    assert "[output of step 2, tool call 1] exit_code=0\nhi" in text
    msgs = build_messages(t, "c")
    assert "reward" not in msgs[1]["content"].lower()


def test_prompt_carries_the_b2_rules() -> None:
    for phrase in ["untrusted", "never follow", "Do not judge whether the candidate is correct",
                   "zero-based", "indivisible", "includes_first_verification", "exposes_error",
                   "no_effective_result", "Priority", "task complete", "earliest candidate"]:  # fmt: skip
        assert phrase.lower() in SYSTEM_PROMPT.lower(), phrase


def test_truncation_keeps_head_and_tail_and_fits_the_budget() -> None:
    t = traj()
    t.turns[0].observations[0].text = "HEAD" + "x" * 50_000 + "TAIL"
    text = render(t, Truncation(max_total=3000, observation=2500, floor=200))
    assert "HEAD" in text and "TAIL" in text and "characters cut" in text
    assert len(text) < 3000


@pytest.mark.parametrize("spelling", ["space", "hyphen"])
def test_parser_normalises_spellings(spelling) -> None:
    sep = " " if spelling == "space" else "-"
    raw = {
        k.replace("_", sep): v
        for k, v in ann(
            boundary_type=f"includes{sep}first{sep}verification",
            verification_outcome=f"exposes{sep}error",
        ).items()
    }
    a = parse_annotation("```json\n" + json.dumps(raw) + "\n```")
    assert a.boundary_type == "includes_first_verification" and a.z == "error"


@pytest.mark.parametrize(
    "raw",
    ["not json", "[1]", json.dumps({**ann(), "extra": 1}), json.dumps({k: v for k, v in ann().items() if k != "case_id"}),
     json.dumps(ann(candidate_formed="yes")), json.dumps(ann(candidate_step="2")),
     json.dumps(ann(boundary_type="dirty")), "Here: " + json.dumps(ann())],
)  # fmt: skip
def test_parser_rejects_bad_schema(raw) -> None:
    with pytest.raises(AnnotationError):
        parse_annotation(raw)


@pytest.mark.parametrize(
    "fields, rule",
    [
        ({"candidate_step": 9}, "rule 1"),
        ({"candidate_tool_call_index": 2}, "rule 1"),
        ({"candidate_step": 3}, "rule 1"),  # step 3 exists but has 1 call; index 0 is fine → no
        ({"candidate_formed": False}, "rule 2"),
        (
            {
                "candidate_formed": False,
                "candidate_step": None,
                "candidate_tool_call_index": None,
                "boundary_type": None,
            },
            "rule 2",
        ),  # fmt: skip
        (
            {
                "boundary_type": "includes_first_verification",
                "verification_triggered": False,
                "verification_outcome": None,
            },
            "rule 3",
        ),  # fmt: skip
        ({"verification_outcome": None}, "rule 4"),
        ({"verification_triggered": False}, "rule 5"),
    ],
)
def test_consistency_rules(fields, rule) -> None:
    a, errs = check_answer(json.dumps(ann(**fields)), traj())
    if fields == {"candidate_step": 3}:
        assert a is not None and errs == []
        return
    assert a is None and any(e.startswith(rule) for e in errs), errs


def test_valid_answers_pass() -> None:
    a, errs = check_answer(json.dumps(ann()), traj())
    assert errs == [] and a.semantics_tuple() == (True, True, "no-error")
    none = ann(candidate_formed=False, candidate_step=None, candidate_tool_call_index=None,
               boundary_type=None, verification_triggered=False, verification_outcome=None)  # fmt: skip
    a, errs = check_answer(json.dumps(none), traj())
    assert errs == [] and a.boundary_tuple() == (False, None, None, None)
