"""The pre-flight table's arithmetic (pure) and the regime decision; the wrong-candidate probe on
real sandboxes: a hasty rollout's candidate is exposed by the check and repaired by the oracle."""

from __future__ import annotations

import math

import pytest

from agentpost.lab.preflight import summarise, task_rows


def _rec(task, resolved, cost, path="careful", y_c=None, exposed=None, repaired=None):
    return {"task": task, "resolved": resolved, "cost": cost, "path": path,
            "candidate": True, "y_c": y_c, "exposed": exposed, "repaired": repaired}  # fmt: skip


def test_rows_and_summary():
    recs = [_rec("a", True, 100, "direct"), _rec("a", True, 300), _rec("a", False, 50, "hasty",
            0, True, True), _rec("a", True, 900, "wasteful"),  # fmt: skip
            _rec("b", False, 80, "hasty", 0, True, False), _rec("b", True, 200),
            _rec("b", False, 60, "hasty", 0, False, True), _rec("b", False, 70, "hasty", 0, True,
            True)]  # fmt: skip
    rows = {r["task"]: r for r in task_rows(recs)}
    assert rows["a"]["p"] == 0.75 and rows["a"]["cost_ratio"] == 9.0
    assert rows["b"]["p"] == 0.25 and math.isnan(rows["b"]["cost_ratio"])
    s = summarise(recs)
    assert s["share_in_regime"] == 0.5 and s["median_cost_ratio"] == 9.0
    assert s["wrong_candidates"] == 4 and s["exposed"] == 0.75 and s["repaired"] == 0.75
    assert s["paths"]["hasty"] == 0.5
    assert s["in_regime"] is False  # exposed/repaired below 0.9
    good = [dict(r, exposed=True, repaired=True) if r["y_c"] == 0 else r for r in recs]
    assert summarise(good)["in_regime"] is False  # half the tasks in [0.4, 0.8] is not most
    good += [_rec("c", True, 100, "direct"), _rec("c", True, 250), _rec("c", False, 70, "other"),
             _rec("c", False, 90, "other")]  # fmt: skip
    assert summarise(good)["share_in_regime"] == 2 / 3 and summarise(good)["in_regime"] is True


@pytest.mark.skipif(
    not __import__("agentpost.sandbox.registry", fromlist=["x"]).get_backend("bwrap").available(),
    reason="bubblewrap unavailable",
)
def test_wrong_candidate_probe_on_real_sandboxes(tmp_path):
    from agentpost.lab.env import Memo
    from agentpost.lab.episodes import scripted_episode
    from agentpost.lab.preflight import path_of, wrong_candidate
    from agentpost.lab.tasks import write_family
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.loader import load_suite

    backend = get_backend("bwrap")
    doc = write_family(tmp_path, seed=2, n_train=3, n_heldout=0, one_slot=True)
    outs = {t["id"]: t["params"]["out"] for t in doc["splits"]["train"]}
    memo = Memo(tmp_path / "memo.sqlite")
    for task in load_suite(tmp_path / "train"):
        hasty = scripted_episode(task, "hasty-look", backend, memo)
        assert path_of(task, hasty.commands) == "hasty-look"
        got = wrong_candidate(task, hasty, outs[task.id], backend, memo)
        assert got == {"candidate": True, "y_c": 0, "exposed": True, "repaired": True}, task.id
        ok = scripted_episode(task, "careful", backend, memo)
        assert wrong_candidate(task, ok, outs[task.id], backend, memo)["y_c"] == 1
