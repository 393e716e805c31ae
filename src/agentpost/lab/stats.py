"""Intervals for the lab's tables: a two-level bootstrap over seeds and tasks, paired across arms.

A lab figure is a mean over (seed, task, sample) cells, or a ratio of two such sums (tokens per
*successful* rollout = Σ C·y / Σ y). Run-to-run variance matters as much as task variance at
this scale, so each bootstrap replicate draws the seeds with replacement and, independently,
the tasks with replacement, and recomputes every arm's figure on the same draw: a difference
between two arms is then paired by seed and task (the arms ran from the same checkpoint with the
same seeds on the same tasks). Percentile 95% intervals. With one seed the seed level has
nothing to resample and the interval is over tasks only; ``Cell`` arrays say how many of each.

Shapes: ``num[S, T, K]`` and ``den[S, T, K]`` (seed, task, sample); a plain mean has
``den = 1``. NaN cells (a metric undefined for that rollout) count in neither sum.

Layer: pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
MIN_N = 10  # fewer defined rollouts than this: "too few", no interval


@dataclass(frozen=True)
class Draws:
    """Bootstrap indices: ``seeds[B, S]`` and ``tasks[B, T]``."""

    seeds: np.ndarray
    tasks: np.ndarray


def draws(n_seeds: int, n_tasks: int, n_boot: int, seed: int = 0) -> Draws:
    rng = np.random.default_rng(seed)
    return Draws(rng.integers(0, n_seeds, (n_boot, n_seeds)),
                 rng.integers(0, n_tasks, (n_boot, n_tasks)))  # fmt: skip


def _sums(a: np.ndarray, d: Draws) -> np.ndarray:
    """Σ over the drawn (seed, task) cells and all samples, per replicate: [B]."""
    a = np.nan_to_num(a, nan=0.0)
    per = a.sum(axis=2)  # [S, T]
    return per[d.seeds[:, :, None], d.tasks[:, None, :]].sum(axis=(1, 2))


def ratio(num: np.ndarray, den: np.ndarray) -> float:
    ok = ~(np.isnan(num) | np.isnan(den))
    total = den[ok].sum()
    return float(num[ok].sum() / total) if total > 0 else float("nan")


def replicates(num: np.ndarray, den: np.ndarray, d: Draws) -> np.ndarray:
    """The figure on every replicate: [B] (NaN where a replicate's denominator is 0)."""
    bad = np.isnan(num) | np.isnan(den)
    n, m = _sums(np.where(bad, np.nan, num), d), _sums(np.where(bad, np.nan, den), d)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m > 0, n / np.where(m > 0, m, 1), np.nan)


def interval(reps: np.ndarray) -> list[float] | None:
    """Percentile interval, or None when fewer than half the replicates are defined."""
    ok = reps[~np.isnan(reps)]
    if len(ok) < max(1, len(reps) // 2):
        return None
    a = (1 - LEVEL) / 2
    return [float(np.quantile(ok, a)), float(np.quantile(ok, 1 - a))]


def _n(num: np.ndarray, den: np.ndarray) -> int:
    return int(np.sum(~(np.isnan(num) | np.isnan(den)) & (den > 0)))


def estimate(num: np.ndarray, den: np.ndarray, d: Draws, rate: bool = False) -> dict:
    """{mean, ci95, n} of one arm's figure; ``ci95`` None ("too few") below ``MIN_N`` defined
    rollouts. A ``rate`` (a share of rollouts) also gets at least the Wilson interval of its
    pooled count, so a rate of 0 or 1 never shows a zero-width interval."""
    n = _n(num, den)
    out = {"mean": ratio(num, den), "ci95": None, "n": n}
    if n < MIN_N:
        out["too_few"] = True
        return out
    ci = interval(replicates(num, den, d))
    if rate:
        from agentpost.scvd.calibration import wilson

        ok = ~(np.isnan(num) | np.isnan(den))
        w = wilson(int(round(num[ok].sum())), int(round(den[ok].sum())))
        if w is not None:
            ci = [min(ci[0], w[0]), max(ci[1], w[1])] if ci else w
    out["ci95"] = ci if ci is None or ci[1] > ci[0] else None  # never a zero-width interval
    return out


def difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
               d: Draws) -> dict:  # fmt: skip
    """{mean, ci95} of figure(a) − figure(b), paired on the same draws. No interval ("too
    few") below ``MIN_N`` rollouts in either arm, and none where every replicate gives the same
    difference (two arms that never differ on any drawn cell: a zero-width "95% CI" would claim
    a certainty the data cannot give)."""
    out = {"mean": ratio(*a) - ratio(*b), "ci95": None}
    if min(_n(*a), _n(*b)) < MIN_N:
        out["too_few"] = True
        return out
    ci = interval(replicates(*a, d) - replicates(*b, d))
    out["ci95"] = ci if ci is None or ci[1] > ci[0] else None
    return out
