"""Compare two agents (two runs, two checkpoints, two policies): B − A with paired bootstrap CIs.

Each side is the rows of one agent as ``report.rundata`` labels it (model plus run id), so two
runs of one model are two sides, never one pool. Pairs are tasks: a metric is computed over the
tasks both sides ran, and each bootstrap replicate redraws those tasks (``stats.
paired_bootstrap``), so a delta is not an artefact of one side having run easier tasks; tasks
only one side ran are counted and left out. When the two sides share fewer than
``intervals.MIN_N`` tasks, a metric falls back to an unpaired comparison: each side over all its
tasks, with a two-sample bootstrap (``stats.unpaired_sums``; ``paired`` is False and ``why``
says so), since the tasks then differ between the sides.

Metrics: resolution rate, mean tokens per run (C_i, prompt + completion over its calls), TRS
(R in percent / sqrt(1 + C in millions), spec HERO b.2), unproductive turn rate; the seven SCVD
metrics (VTR … RSR, from the judged records, same masks as ``scvd.metrics``); FuncPass
and SecPass from security grades. Each is recomputed on every replicate from the pooled items
(a ratio of sums), never averaged from per-task ratios.

Layer: pure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agentpost.intervals import MIN_N, RESAMPLES
from agentpost.report.stats import paired_sums, ratio, unpaired_sums

FORMAT = "agentpost.compare/1"
SCVD = ("VTR", "VOR", "EDR", "ESP", "CPR", "VPR", "RSR")
EXPLAIN = {
    "resolution rate": "share of runs whose task's tests pass",
    "mean tokens": "prompt + completion tokens over all model calls of a run",
    "TRS": "token-resolution score: resolution in % / sqrt(1 + mean tokens in millions)",
    "unproductive turn rate": "share of turns that repeat a call, over-explore or hit a tool error",
    "VTR": "verification trigger rate: Pr(agent checks its candidate | a candidate exists)",
    "VOR": "verification outcome rate: Pr(its check reaches error / no-error | it checks)",
    "EDR": "error detection rate: Pr(check says error | candidate wrong, y_c = 0)",
    "ESP": "error-signal precision: Pr(candidate wrong | check says error)",
    "CPR": "correct pass rate: Pr(check says no-error | candidate right, y_c = 1)",
    "VPR": "verification pass reliability: Pr(candidate right | check says no-error)",
    "RSR": "repair success rate: Pr(final run passes | candidate wrong and check said error)",
    "FuncPass": "security suite: share of tasks whose functional tests pass",
    "SecPass": "security suite: share of tasks both functional and not exploited",
}


def trs_stat(rows: list[dict[str, Any]]) -> float | None:
    """TRS of ``rows`` (the loop form of ``trs_sums``, kept as its reference)."""
    res = [float(r["resolved"]) for r in rows if r.get("resolved") is not None]
    tok = [float(r["tokens"]) for r in rows if r.get("tokens") is not None]
    if not res or not tok:
        return None
    return 100.0 * (sum(res) / len(res)) / math.sqrt(1.0 + sum(tok) / len(tok) / 1e6)


def trs_sums(s: np.ndarray) -> np.ndarray:
    """TRS from column sums [resolved, resolved known, tokens, tokens known] (..., 4)."""
    r = ratio(s[..., [0, 1]])
    c = ratio(s[..., [2, 3]])
    return 100.0 * r / np.sqrt(1.0 + c / 1e6)


def _known(v: Any) -> tuple[float, float]:
    return (0.0, 0.0) if v is None else (float(v), 1.0)


ROW_METRICS: tuple[tuple[str, Any, Any], ...] = (
    ("resolution rate", lambda r: _known(r.get("resolved")), ratio),
    ("mean tokens", lambda r: _known(r.get("tokens")), ratio),
    ("TRS", lambda r: (*_known(r.get("resolved")), *_known(r.get("tokens"))), trs_sums),
    ("unproductive turn rate",
     lambda r: (float(r.get("unproductive_turns") or 0), float(r.get("turns") or 0))
     if r.get("unproductive_turns") is not None else (0.0, 0.0), ratio),
)  # fmt: skip


def scvd_items(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per record, the numerator and denominator of each SCVD metric (0/1) and its task."""
    from agentpost.scvd.metrics import _arrays, _masks
    from agentpost.scvd.records import from_dicts

    recs = from_dicts(records)
    if not recs:
        return []
    masks = _masks(_arrays(recs), "valid_yc")
    items = []
    for i, r in enumerate(recs):
        item: dict[str, Any] = {"task": r.task}
        for m in SCVD:
            item[f"{m}_num"], item[f"{m}_den"] = int(masks[m][0][i]), int(masks[m][1][i])
        items.append(item)
    return items


def _sums(items: list[dict[str, Any]], key: str, cols) -> dict[str, np.ndarray]:
    """Per ``item[key]``, the sum of ``cols(item)`` over its items."""
    out: dict[str, np.ndarray] = {}
    for it in items:
        k = str(it.get(key))
        v = np.asarray(cols(it), dtype=float)
        out[k] = out[k] + v if k in out else v
    return out


def _grade_items(grades: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"task_id": g.get("task_id"), "func": int(bool(g.get("func"))),
             "sec": int(bool(g.get("sec")))} for g in grades if not g.get("aborted")]  # fmt: skip


def compare(
    a: dict[str, Any], b: dict[str, Any], *, n_boot: int = RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """``a``/``b``: ``{"label", "rows", "records", "grades"}`` of one agent each.
    Returns the ``agentpost.compare/1`` document (without producer)."""
    metrics = []

    def add(name: str, items_a: list, items_b: list, key: str, cols, f) -> None:
        if items_a and items_b:
            sa, sb = _sums(items_a, key, cols), _sums(items_b, key, cols)
            shared = len(set(sa) & set(sb))
            if shared >= MIN_N:
                d = paired_sums(sa, sb, f, n_boot=n_boot, seed=seed)
            else:
                d = unpaired_sums(sa, sb, f, n_boot=n_boot, seed=seed)
                d["why"] = (f"the sides share {shared} tasks (fewer than {MIN_N}): each side over "
                            "all its tasks, two-sample interval")  # fmt: skip
                d["shared"] = shared
            metrics.append({"metric": name, "explain": EXPLAIN[name], **d})

    rows_a, rows_b = a.get("rows") or [], b.get("rows") or []
    for name, cols, f in ROW_METRICS:
        add(name, rows_a, rows_b, "task_id", cols, f)
    sa, sb = scvd_items(a.get("records") or []), scvd_items(b.get("records") or [])
    for m in SCVD:
        add(m, sa, sb, "task", lambda it, m=m: (it[f"{m}_num"], it[f"{m}_den"]), ratio)
    ga, gb = _grade_items(a.get("grades") or []), _grade_items(b.get("grades") or [])
    add("FuncPass", ga, gb, "task_id", lambda g: (g["func"], 1.0), ratio)
    add("SecPass", ga, gb, "task_id", lambda g: (g["sec"], 1.0), ratio)
    return {
        "format": FORMAT,
        "a": a["label"],
        "b": b["label"],
        "paired_by": "task"
        if all(m["paired"] for m in metrics)
        else "task where the sides share enough tasks, else unpaired",
        "n_boot": n_boot,
        "seed": seed,
        "metrics": metrics,
    }
