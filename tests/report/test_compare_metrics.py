"""report.compare on hand-made sides: SCVD ratios and FuncPass/SecPass deltas checked by hand,
and tasks only one side ran left out of the pairs."""

from __future__ import annotations

from agentpost.report.compare import compare, trs_stat


def _rec(task: str, iv: bool, z: str | None, yc: int | None) -> dict:
    return {"model": "m", "run": "r", "task": task, "I_c": True, "I_v": iv, "z": z,
            "y_c": yc if iv else None, "y_f": 1}  # fmt: skip


def test_scvd_and_security_deltas_by_hand() -> None:
    a = {"label": "A", "rows": [], "grades": [
            {"task_id": t, "func": True, "sec": False} for t in ("x", "y", "z", "w")],
         "records": [_rec("x", False, None, None), _rec("y", True, "error", 0),
                     _rec("z", False, None, None), _rec("w", True, "no-error", 1)]}  # fmt: skip
    b = {"label": "B", "rows": [], "grades": [
            {"task_id": t, "func": True, "sec": t != "x"} for t in ("x", "y", "z", "q")],
         "records": [_rec(t, True, "error", 0) for t in ("x", "y", "z", "w")]}  # fmt: skip
    doc = compare(a, b, n_boot=200, seed=0)
    m = {x["metric"]: x for x in doc["metrics"]}
    assert m["VTR"]["a"] == 0.5 and m["VTR"]["b"] == 1.0 and m["VTR"]["delta"] == 0.5
    assert m["EDR"]["a"] == 1.0 and m["EDR"]["b"] == 1.0
    # 3 shared tasks (< MIN_N): unpaired, each side over all its 4 tasks, and too few for an
    # interval; the reason is in the metric
    sec = m["SecPass"]
    assert sec["paired"] is False and sec["shared"] == 3 and "share 3 tasks" in sec["why"]
    assert sec["a"] == 0.0 and sec["b"] == 0.75 and sec["ci"] is None
    assert sec["ci_note"] == "too few tasks a side for an interval: 4 < 5"
    assert m["FuncPass"]["delta"] == 0.0
    assert "resolution rate" not in m  # no trajectory rows on either side: not compared


def test_paired_when_enough_tasks_are_shared() -> None:
    tasks = [f"t{i}" for i in range(8)]
    a = {
        "label": "A",
        "rows": [],
        "records": [],
        "grades": [{"task_id": t, "func": True, "sec": i % 4 == 0} for i, t in enumerate(tasks)],
    }
    b = {"label": "B", "rows": [], "records": [],
         "grades": [{"task_id": t, "func": True, "sec": i % 2 == 0} for i, t in enumerate(tasks)]}  # fmt: skip
    m = {x["metric"]: x for x in compare(a, b, n_boot=400, seed=0)["metrics"]}
    sec = m["SecPass"]
    assert sec["paired"] and sec["pairs"] == 8 and sec["delta"] == 0.25
    lo, hi = sec["ci"]
    assert 0.0 <= lo < 0.25 < hi <= 0.5
    assert m["FuncPass"]["ci"] is None and "no spread" in m["FuncPass"]["ci_note"]


def test_trs_is_recomputed_from_pooled_rows() -> None:
    rows = [{"resolved": True, "tokens": 3e6}, {"resolved": False, "tokens": 1e6}]
    assert abs(trs_stat(rows) - 50 / 3**0.5 * 1) < 1e-9  # R 50%, C = 2M: 50 / sqrt(3)
