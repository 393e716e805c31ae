"""Efficiency variation among resolved rollouts of one task (spec b.9.1).

Per task, over the resolved rollouts with a known token count C_i: C_max/C_min, p90/p10
(linear percentiles) and the coefficient of variation (population std / mean). A ratio is None
when its denominator is 0 or fewer than 2 resolved rollouts exist. ``histogram`` bins the
per-task C_max/C_min across tasks with fixed, documented edges so plots are comparable.

Layer: pure.
"""

from __future__ import annotations

import numpy as np

HIST_EDGES = [1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, float("inf")]


def task_variation(tokens: list[float]) -> dict:
    """Stats of one task's resolved-rollout token counts ``tokens[n]``."""
    c = np.asarray(tokens, dtype=np.float64)
    out: dict = {
        "n_resolved": int(len(c)),
        "cmax_cmin": None,
        "p90_p10": None,
        "cv": None,
        "min_tokens": None,
        "max_tokens": None,
    }
    if len(c) == 0:
        return out
    out["min_tokens"], out["max_tokens"] = float(c.min()), float(c.max())
    if len(c) < 2:
        return out
    lo, hi = np.percentile(c, [10, 90])
    mean = c.mean()
    out["cmax_cmin"] = float(c.max() / c.min()) if c.min() > 0 else None
    out["p90_p10"] = float(hi / lo) if lo > 0 else None
    out["cv"] = float(c.std() / mean) if mean > 0 else None
    return out


def histogram(values: list[float | None], edges: list[float] = HIST_EDGES) -> dict:
    """Counts of the non-null ``values`` in [edges[i], edges[i+1])."""
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    counts, _ = np.histogram(v, bins=np.asarray(edges))
    return {"edges": [e if np.isfinite(e) else None for e in edges], "counts": counts.tolist()}
