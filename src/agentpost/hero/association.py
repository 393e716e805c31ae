"""Low-entropy turns vs unproductive turns (spec b.9.2).

Input: per turn its group (task), entropy h and behaviour flags. Per group the threshold is the
20th percentile of h over the group's turns (pooled over all its rollouts); a turn is *low* if
h ≤ q. Reported: per bucket the rate of each behaviour and of unproductive turns, the mean h of
unproductive vs productive turns, and the point-biserial correlation r between the unproductive
indicator and h (Pearson r with a 0/1 variable; negative r = unproductive turns have lower
entropy), with a percentile bootstrap CI. The bootstrap resamples *trajectories* (clusters),
since turns of one trajectory are not independent (toolkit choice; the statistic is
[unspecified] in the paper).

Layer: pure.
"""

from __future__ import annotations

import numpy as np

from agentpost.hero.terms import segment_percentile
from agentpost.intervals import MIN_N, RESAMPLES

BEHAVIOURS = ("repeated_call", "over_exploration", "tool_error", "unproductive")


def point_biserial(flag: np.ndarray, h: np.ndarray) -> float | None:
    """Pearson r between a 0/1 ``flag[n]`` and ``h[n]``; None when either is constant."""
    x, y = flag.astype(np.float64), h.astype(np.float64)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def association(
    group: np.ndarray,
    traj: np.ndarray,
    h: np.ndarray,
    flags: dict[str, np.ndarray],
    *,
    percentile: float = 20.0,
    n_boot: int = RESAMPLES,
    seed: int = 0,
    ci: float = 0.95,
) -> dict:
    """Shapes: ``group[K]`` group ordinal, ``traj[K]`` trajectory ordinal, ``h[K]``,
    ``flags[name][K]`` bool for each name in ``BEHAVIOURS``. Returns a JSON-ready dict."""
    k = len(h)
    out: dict = {
        "turns": int(k),
        "percentile": percentile,
        "buckets": {},
        "mean_entropy": {},
        "point_biserial_r": None,
        "r_ci": None,
        "n_boot": n_boot,
        "ci": ci,
    }
    if k == 0:
        return out
    ngroups = int(group.max()) + 1
    q = segment_percentile(h, group, ngroups, percentile)
    low = h <= q[group]
    for name, mask in (("low", low), ("rest", ~low)):
        n = int(mask.sum())
        out["buckets"][name] = {
            "turns": n,
            **{f"{b}_rate": (float(flags[b][mask].mean()) if n else None) for b in BEHAVIOURS},
        }
    un = flags["unproductive"]
    out["mean_entropy"] = {
        "unproductive": float(h[un].mean()) if un.any() else None,
        "productive": float(h[~un].mean()) if (~un).any() else None,
    }
    out["point_biserial_r"] = point_biserial(un, h)
    out["r_ci"] = _bootstrap_ci(traj, un, h, n_boot=n_boot, seed=seed, ci=ci)
    return out


def _bootstrap_ci(
    traj: np.ndarray, flag: np.ndarray, h: np.ndarray, *, n_boot: int, seed: int, ci: float
) -> list[float] | None:
    """Percentile CI of r, resampling trajectories with replacement."""
    ids = np.unique(traj)
    if len(ids) < MIN_N or n_boot <= 0 or point_biserial(flag, h) is None:
        return None  # below intervals.MIN_N trajectories: too few for an interval
    rng = np.random.default_rng(seed)
    # the turns of trajectory j are order[start[j]:start[j] + size[j]] (ascending, as
    # np.flatnonzero(traj == ids[j]) gives them): one sort, not one scan of K turns per trajectory
    order = np.argsort(traj, kind="stable")
    size = np.unique(traj, return_counts=True)[1]
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    stats = []
    for _ in range(n_boot):
        js = rng.integers(0, len(ids), len(ids))
        n = size[js]
        ends = np.cumsum(n)
        # the concatenation of the picked trajectories' turns, in the order they were drawn
        pick = order[np.repeat(start[js] - ends + n, n) + np.arange(ends[-1])]
        r = point_biserial(flag[pick], h[pick])
        if r is not None:
            stats.append(r)
    if not stats:
        return None
    a = (1 - ci) / 2 * 100
    lo, hi = np.percentile(stats, [a, 100 - a])
    return [float(lo), float(hi)] if hi - lo > 1e-12 else None  # never a zero-width 95% CI
