"""The verdict (report.verdict): behaviour costs by hand, ranking, examples, the signal rule, and
the sentences `agentpost summary` prints."""

from __future__ import annotations

import re

from agentpost.report.verdict import verdict
from agentpost.report.verdict_view import lines


def _row(i: int, agent: str, flags: list[str], tokens: list[int | None], resolved: bool,
         task: str | None = None) -> dict:  # fmt: skip
    known = [t for t in tokens if t is not None]
    return {
        "id": f"t{i}::{agent}", "agent": agent, "task_id": task or f"t{i}", "resolved": resolved,
        "turns": len(flags), "tokens": sum(known) if known else None, "turn_flags": flags,
        "turn_tokens": tokens, "unproductive_turns": sum(any(c in f for c in "ROE") for f in flags),
    }  # fmt: skip


def test_behaviour_cost_is_its_share_of_tokens_and_ranks_first() -> None:
    rows = [
        _row(0, "x", ["", "R", "R"], [100, 300, 600], False, "a"),  # 900 of 1000 on repeats
        _row(1, "x", ["", "E"], [500, 500], True, "a"),
        _row(2, "x", ["", ""], [1000, 1000], True, "b"),
    ]
    doc = verdict(rows, {}, [], n_boot=200, seed=0, trajectories="r/t.jsonl", suite="terminal")
    (a,) = doc["agents"]
    first, second = a["behaviours"][0], a["behaviours"][1]
    assert first["kind"] == "repeated_call" and second["kind"] == "tool_error"
    assert first["share"] == 900 / 4000 and first["share_of"] == "tokens"
    assert second["share"] == 500 / 4000
    assert abs(first["prevalence"] - 1 / 3) < 1e-12
    assert first["resolved_diff"]["value"] == -1.0  # the run with repeats failed, the others not
    assert first["examples"] == [{"id": "t0::x", "turn": 1, "turns": 2}]
    assert a["unproductive_token_share"] == 1400 / 4000
    sig = a["signal"]
    assert sig["method"] == "hero" and sig["runnable"] and "--pool-agents" not in sig["command"]
    assert sig["command"] == (
        "agentpost hero advantages r/t.jsonl --agent x --export trl -o hero-x.jsonl"
    )  # task a has 2 rollouts of x: a group of its own
    text = "\n".join(lines(doc))
    assert "repeated calls: 22% of its tokens (too few runs for an interval: 3 < 5)" in text
    assert "t0::x turn 1" in text and "build next: HERO" in text
    assert (
        "self-verification (SCVD): not measured: run `agentpost diagnose r/t.jsonl --agent x "
        "--suite terminal -o diagnose-x`"
    ) in text


def test_without_token_counts_the_share_is_of_turns() -> None:
    rows = [_row(0, "y", ["O", "O", "", ""], [None] * 4, True)]
    (a,) = verdict(rows, {}, [], n_boot=0, seed=0)["agents"]
    top = a["behaviours"][0]
    assert top["kind"] == "over_exploration" and top["share_of"] == "turns" and top["share"] == 0.5
    assert a["unproductive_token_share"] == 0.5  # falls back to the unproductive turn rate
    assert "tokens not recorded" in "\n".join(lines({"agents": [a]}))


def test_unverified_candidates_point_to_scvd_and_insecure_code_to_securevibe() -> None:
    rows = [_row(i, "z", ["", ""], [10, 10], False) for i in range(4)]
    records = {
        r["id"]: {"case_id": r["id"], "decision": {"candidate_step": 1},
                  "record": {"model": "z", "run": "r", "task": r["task_id"], "I_c": True,
                             "I_v": False, "z": None, "y_c": None, "y_f": 0}}
        for r in rows
    }  # fmt: skip
    grades = [{"agent": "s", "task_id": f"k{i}", "func": True, "sec": i == 0, "trajectory": None}
              for i in range(4)]  # fmt: skip
    doc = verdict(rows, records, grades, n_boot=100, seed=0)
    z, s = doc["agents"]
    assert z["verification"]["unverified"] == 1.0 and z["verification"]["candidates"] == 4
    assert z["verification"]["examples_unverified"][0] == {"id": "t0::z", "turn": 1}
    assert z["signal"]["method"] == "scvd"
    assert s["kind"] == "security" and s["security_gap"] == 0.75
    assert s["signal"]["method"] == "securevibe"


def test_no_gap_no_recommendation() -> None:
    rows = [_row(0, "ok", ["", ""], [10, 10], True)]
    rec = {rows[0]["id"]: {"case_id": rows[0]["id"], "record": {"I_c": True, "I_v": True}}}
    (a,) = verdict(rows, rec, [], n_boot=0, seed=0)["agents"]
    assert a["signal"]["method"] is None and "no measured gap reaches 5%" in a["signal"]["why"]
    assert "build next: nothing (" in "\n".join(lines({"agents": [a]}))


def test_an_unmeasured_gap_is_not_read_as_nothing_to_build() -> None:
    """An agent resolving 0% with no diagnose run: the verdict never says "nothing"; it says
    self-verification was not measured and gives the command (with this agent and suite)."""
    rows = [_row(i, "weak", ["", ""], [10, 10], False) for i in range(6)]
    (a,) = verdict(rows, {}, [], n_boot=0, seed=0, trajectories="run/t.jsonl", suite="terminal")[
        "agents"
    ]
    s = a["signal"]
    assert s["method"] is None and s["not_measured"][0]["runnable"]
    assert s["not_measured"][0]["command"] == (
        "agentpost diagnose run/t.jsonl --agent weak --suite terminal -o diagnose-weak"
    )
    text = "\n".join(lines({"agents": [a]}))
    assert "build next: nothing" not in text and "build next: not decided (" in text
    assert "not measured: run `agentpost diagnose run/t.jsonl" in text
    no_suite = verdict(rows, {}, [], n_boot=0, seed=0, trajectories="t.jsonl")["agents"][0]
    m = no_suite["signal"]["not_measured"][0]
    assert not m["runnable"] and "--suite <suite of these tasks>" in m["command"]


def test_hero_is_not_recommended_when_no_group_can_be_formed() -> None:
    """One rollout per task (real logs): HERO's group-relative advantage cannot be computed;
    the verdict says why instead of printing a command that fails. When other agents ran the
    same tasks, the groups pool them (--pool-agents); with 2 rollouts a task, its own groups."""
    single = [_row(i, "solo", ["R", "R", ""], [100, 100, 100], i % 2 == 0) for i in range(6)]
    (a,) = verdict(single, {}, [], n_boot=0, seed=0, trajectories="t.jsonl")["agents"]
    s = a["signal"]
    assert a["unproductive_token_share"] > 0.5 and s["method"] is None
    assert s["blocked"]["hero"].startswith("each of its 6 tasks has one rollout")
    assert "HERO's unproductive share (67%) cannot be acted on: each of its 6 tasks" in s["why"]
    other = [_row(i, "peer", ["", "", ""], [100, 100, 100], True) for i in range(6)]
    docs = verdict(single + other, {}, [], n_boot=0, seed=0, trajectories="t.jsonl")["agents"]
    s = next(x for x in docs if x["agent"] == "solo")["signal"]
    assert s["method"] == "hero" and s["command"].endswith(
        "--agent solo --export trl -o hero-solo.jsonl --pool-agents"
    )
    unknown = [dict(r, resolved=None) for r in single]
    (a,) = verdict(unknown, {}, [], n_boot=0, seed=0)["agents"]
    assert "needs that outcome" in a["signal"]["blocked"]["hero"]


def test_scripted_agents_are_labelled_and_their_advice_marked_as_an_illustration() -> None:
    grades = [{"agent": "scripted/functional-only", "task_id": f"k{i}", "func": True,
               "sec": False, "trajectory": None} for i in range(3)]  # fmt: skip
    (s,) = verdict([], {}, grades, n_boot=0, seed=0)["agents"]
    assert s["signal"]["scripted"] and s["signal"]["method"] == "securevibe"
    assert s["signal"]["command"] == (
        "agentpost security route --suite secure --policy "
        "scripted/functional-only --task k0 --task k1 --task k2"
    )
    text = "\n".join(lines({"agents": [s]}))
    assert "build next (a scripted reference policy, not a model to train" in text
    real = [dict(g, agent="acme-coder") for g in grades]
    (r,) = verdict([], {}, real, n_boot=0, seed=0)["agents"]
    assert not r["signal"]["scripted"] and not r["signal"]["runnable"]
    assert "--base-url <URL serving it> --model acme-coder" in r["signal"]["command"]


def test_no_interval_of_zero_width_and_too_few_below_min_n() -> None:
    """All 23 runs resolve: Wilson gives [85.7%, 100%], never "95% CI 100% to 100%"; 2 or 4
    runs: "too few runs" instead of an interval."""
    for n, want in ((23, "resolves 100% (95% CI 86% to 100%)"),
                    (4, "resolves 100% (too few runs for an interval: 4 < 5)"),
                    (2, "resolves 100% (too few runs for an interval: 2 < 5)")):  # fmt: skip
        rows = [_row(i, "ok", ["", ""], [10, 10], True) for i in range(n)]
        doc = verdict(rows, {}, [], n_boot=200, seed=0)
        text = "\n".join(lines(doc))
        assert want in text, text
        spans = re.findall(r"95% CI (\S+) to (\S+)\)", text)
        assert all(lo != hi for lo, hi in spans), spans


def test_imported_logs_without_outcomes_or_per_turn_tokens_are_read_honestly() -> None:
    """Public logs: one turn of ten reports tokens (the flagged one), no outcome. The share is
    then of turns, not 100% of the few counted tokens, and HERO is not recommended (it needs
    outcomes); the sentence says why."""
    flags = ["E"] + [""] * 9
    rows = [_row(i, "pub", flags, [500] + [None] * 9, False) for i in range(3)]
    for r in rows:
        r["resolved"] = None
    (a,) = verdict(rows, {}, [], n_boot=50, seed=0)["agents"]
    top = a["behaviours"][0]
    assert top["share_of"] == "turns" and abs(top["share"] - 0.1) < 1e-12
    assert a["unproductive_share_of"] == "turns"
    assert a["signal"]["method"] is None and "needs that outcome" in a["signal"]["why"]
    text = "\n".join(lines({"agents": [a]}))
    assert "10% of its turns are unproductive" in text and "outcomes not recorded" in text
