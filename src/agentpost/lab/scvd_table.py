"""The SCVD table of the lab: per-rollout numerators and denominators of spec b.6's metrics,
intervals over seeds and tasks (``lab.stats``), and the verdicts of ``lab.directions.SCVD``.

Eligible sets (spec b.6): VTR over I_c = 1; EDR over valid y_c = 0; VPR over z = no-error; RSR
over y_c = 0 and z = error; W2R/R2W over the valid-y_c set; ICA with a missing y_c as 0 and
PASS@1 over all rollouts; turns per successful rollout = Σ turns·y_f / Σ y_f.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentpost.lab import directions, stats

RATES = (
    "pass1",
    "ICA",
    "VTR",
    "EDR",
    "VPR",
    "RSR",
    "W2R",
    "R2W",
)  # shares of rollouts: Wilson-floored intervals (``stats.estimate``)
METRICS = ("pass1", "ICA", "VTR", "EDR", "VPR", "RSR", "W2R", "R2W", "turns", "tokens",
           "turns_success")  # fmt: skip


def _cell_values(r: dict) -> dict[str, tuple[float, float]]:
    """(numerator, denominator) of each metric for one rollout (spec b.6 eligible sets; ICA
    with missing y_c as 0, PASS@1 over all rollouts; W2R/R2W over the valid-y_c set)."""
    nan = float("nan")
    yc, yf, z = r["y_c"], float(r["y_f"]), r["z"]
    valid = r["I_c"] and r["I_v"] and yc is not None
    out = {"pass1": (yf, 1.0), "ICA": (float(yc == 1), 1.0),
           "VTR": (float(r["I_v"]), 1.0) if r["I_c"] else (nan, nan),
           "EDR": (float(z == "error"), 1.0) if valid and yc == 0 else (nan, nan),
           "VPR": (float(yc == 1), 1.0) if valid and z == "no-error" else (nan, nan),
           "RSR": (yf, 1.0) if valid and yc == 0 and z == "error" else (nan, nan),
           "W2R": (float(yc == 0 and yf == 1), 1.0) if valid else (nan, nan),
           "R2W": (float(yc == 1 and yf == 0), 1.0) if valid else (nan, nan),
           "turns": (float(r["turns"]), 1.0), "tokens": (float(r["tokens"]), 1.0),
           "turns_success": (float(r["turns"]) * yf, yf)}  # fmt: skip
    return out


def cells(runs: dict[int, list[dict]], tasks: list[str], k: int) -> dict[str, tuple]:
    seeds = sorted(runs)
    t_ix = {t: i for i, t in enumerate(tasks)}
    shape = (len(seeds), len(tasks), k)
    num = {m: np.full(shape, np.nan) for m in METRICS}
    den = {m: np.full(shape, np.nan) for m in METRICS}
    for s, seed in enumerate(seeds):
        for r in runs[seed]:
            i, j = t_ix[r["task"]], r["sample"]
            for m, (a, b) in _cell_values(r).items():
                num[m][s, i, j], den[m][s, i, j] = a, b
    return {m: (num[m], den[m]) for m in METRICS}


def table(arms: dict[str, dict[int, list[dict]]], tasks: list[str], k: int, n_boot: int,
          seed: int = 0) -> dict[str, Any]:  # fmt: skip
    c = {a: cells(runs, tasks, k) for a, runs in arms.items()}
    n_seeds = len(next(iter(arms.values())))
    d = stats.draws(n_seeds, len(tasks), n_boot, seed)
    rows: dict[str, Any] = {}
    for arm, cc in c.items():
        row: dict[str, Any] = {m: stats.estimate(*cc[m], d, m in RATES) for m in METRICS}
        if arm != "base" and "base" in c:
            for m in METRICS:
                row[m]["delta_vs_base"] = stats.difference(cc[m], c["base"][m], d)
        row["n"] = int(np.sum(~np.isnan(cc["pass1"][0])))
        rows[arm] = row
    verdicts = []
    for dr in directions.SCVD:
        if dr.b is None:
            est = stats.estimate(*c[dr.a][dr.metric], d, dr.metric in RATES)
        else:
            est = stats.difference(c[dr.a][dr.metric], c[dr.b][dr.metric], d)
        verdicts.append({**dr.to_json(), "estimate": est,
                         "verdict": directions.verdict(dr, est["ci95"])})  # fmt: skip
    return {"arms": rows, "directions": verdicts}
