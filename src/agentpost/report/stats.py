"""Effect sizes and intervals for the verdict and the run comparison.

- ``rate_ci``: a rate (k of n) with its Wilson interval (``agentpost.intervals``).
- ``mean_ci``: a statistic over units (trajectories) with a percentile bootstrap interval.
- ``risk_difference``: P(resolved | behaviour) − P(resolved | no behaviour), with Newcombe's
  interval for a difference of two independent rates.
- ``paired_bootstrap``: the difference B − A of a statistic over two runs whose units are paired
  by a key (the task): each replicate draws the shared keys with replacement and evaluates the
  statistic on each side's items for those keys, so task difficulty cancels out of the delta.
  ``unpaired_sums`` is the fallback when the runs share too few keys: each side is resampled on
  its own (a two-sample bootstrap), so the interval carries task-to-task variation too.

Bootstrap intervals are 95% percentile intervals over replicates where the statistic is defined
(``None`` values are skipped); ``None`` when fewer than 2 replicates are defined. Every result
carrying an interval also carries ``ci_note``: when there is no interval, why (too few units
below ``intervals.MIN_N``, or zero width: a "95% CI 100% to 100%" is never shown). Seeds make
every number reproducible. The statistic is any function of a list of items, so ratio metrics (TRS, a
share of turns, the SCVD ratios) are recomputed on each replicate instead of averaging per-task
ratios, which would weight short tasks as much as long ones.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from agentpost.intervals import checked, newcombe, wilson

T = TypeVar("T")
Stat = Callable[[list[Any]], float | None]


def interval(values: Sequence[float | None], level: float = 0.95) -> list[float] | None:
    """[lo, hi] percentile interval of the defined ``values``; None with fewer than 2."""
    xs = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if xs.size < 2:
        return None
    a = (1 - level) / 2 * 100
    return [float(np.percentile(xs, a)), float(np.percentile(xs, 100 - a))]


def mean_of(key: str) -> Stat:
    """The mean of ``item[key]`` over items where it is not None (None when none is)."""

    def stat(items: list[dict[str, Any]]) -> float | None:
        xs = [float(i[key]) for i in items if i.get(key) is not None]
        return sum(xs) / len(xs) if xs else None

    return stat


def ratio_of(num: str, den: str) -> Stat:
    """Σ item[num] / Σ item[den] over items where both are known (None when Σ den is 0)."""

    def stat(items: list[dict[str, Any]]) -> float | None:
        pairs = [(i[num], i[den]) for i in items if i.get(num) is not None and i.get(den)]
        d = sum(p[1] for p in pairs)
        return sum(p[0] for p in pairs) / d if d else None

    return stat


def mean_ci(
    items: Sequence[T], stat: Callable[[list[T]], float | None], *, n_boot: int, seed: int
) -> dict[str, Any]:
    """``{"value", "ci", "n"}``: ``stat`` over ``items`` and over ``n_boot`` resamples of them."""
    items = list(items)
    value = stat(items) if items else None
    if not items or n_boot <= 0 or value is None:
        return {"value": value, "ci": None, "n": len(items)}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(items), size=(n_boot, len(items)))
    reps = [stat([items[j] for j in row]) for row in idx]
    return {"value": value, "ci": interval(reps), "n": len(items)}


def rate_ci(k: float, n: int, unit: str = "runs") -> dict[str, Any]:
    """``{"value", "ci", "ci_note", "n"}`` of the rate k / n with its Wilson interval (none
    below ``intervals.MIN_N`` units: the note says too few)."""
    if n <= 0:
        return {"value": None, "ci": None, "ci_note": None, "n": 0}
    ci, note = checked(wilson(k, n), n, unit)
    return {"value": k / n, "ci": ci, "ci_note": note, "n": n}


def risk_difference(
    with_flag: Sequence[bool], without_flag: Sequence[bool], *, n_boot: int, seed: int
) -> dict[str, Any]:
    """Resolution rate of the runs with a behaviour minus that of the runs without it.

    Inputs are the ``resolved`` outcomes of each side. ``value`` is None when a side is empty
    (the behaviour is in every run, or in none: there is nothing to contrast). The interval is
    Newcombe's (from the two Wilson intervals; ``n_boot`` and ``seed`` are kept for the callers'
    signature and unused), none below ``intervals.MIN_N`` runs in all."""
    del n_boot, seed  # a closed form: nothing is resampled
    a = np.asarray(with_flag, dtype=float)
    b = np.asarray(without_flag, dtype=float)
    out: dict[str, Any] = {
        "value": None,
        "ci": None,
        "ci_note": None,
        "n_with": int(a.size),
        "n_without": int(b.size),
    }
    if a.size == 0 or b.size == 0:
        return out
    out["value"] = float(a.mean() - b.mean())
    ci = newcombe(int(a.sum()), int(a.size), int(b.sum()), int(b.size))
    out["ci"], out["ci_note"] = checked(ci, int(a.size + b.size), "runs")
    return out


def paired_bootstrap(
    a: dict[str, list[T]],
    b: dict[str, list[T]],
    stat: Callable[[list[T]], float | None],
    *,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """``stat(B) − stat(A)`` over the keys both sides have, with a paired bootstrap interval.

    ``a[key]``/``b[key]``: the items (e.g. trajectory rows) of one task in each run. Returns
    ``{"a", "b", "delta", "ci", "pairs", "only_a", "only_b"}``; ``pairs`` is the number of shared
    keys, ``only_*`` count keys left out because the other run lacks them."""
    keys = sorted(set(a) & set(b))
    out: dict[str, Any] = {
        "a": None, "b": None, "delta": None, "ci": None, "pairs": len(keys),
        "only_a": len(set(a) - set(b)), "only_b": len(set(b) - set(a)),
    }  # fmt: skip
    if not keys:
        return out
    va = stat([x for k in keys for x in a[k]])
    vb = stat([x for k in keys for x in b[k]])
    out["a"], out["b"] = va, vb
    if va is None or vb is None:
        return out
    out["delta"] = vb - va
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        reps: list[float | None] = []
        for row in rng.integers(0, len(keys), size=(n_boot, len(keys))):
            ks = [keys[j] for j in row]
            ra = stat([x for k in ks for x in a[k]])
            rb = stat([x for k in ks for x in b[k]])
            reps.append(None if ra is None or rb is None else rb - ra)
        out["ci"] = interval(reps)
    return out


# Vectorised forms. A statistic is a function ``f`` of column sums: items carry numeric columns
# (n, m) (e.g. [tokens of flagged turns, all tokens]); a replicate's column sums are
# counts (B, n) @ cols (n, m), with multinomial counts standing for draws with replacement;
# ``f`` maps sums (..., m) to values (...), NaN where undefined. The loop forms above are the
# reference (tests check they agree); these run a thousand replicates over 10⁴ items in about
# a second.

SumStat = Callable[[np.ndarray], np.ndarray]
CHUNK = 250  # replicates per matrix product: (CHUNK, n) counts stay small
CELLS = 2_000_000  # ... and at most this many cells: 100,000 rollouts of one policy stay in 50 MB


def _chunk(n: int) -> int:
    """Replicates per matrix product over ``n`` items (the draws are the same for any chunk:
    the generator yields one stream of integers, row after row)."""
    return max(1, min(CHUNK, CELLS // max(n, 1)))


def ratio(s: np.ndarray) -> np.ndarray:
    """Σ column 0 / Σ column 1; NaN where Σ column 1 is 0. (..., 2) → (...)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s[..., 1] > 0, s[..., 0] / np.where(s[..., 1] > 0, s[..., 1], 1), np.nan)


def mean_columns(values: Sequence[float | None]) -> np.ndarray:
    """(n, 2) columns [value or 0, 1 if known] whose ``ratio`` is the mean of known values."""
    return np.array([[0.0 if v is None else float(v), 0.0 if v is None else 1.0] for v in values]
                    ).reshape(-1, 2)  # fmt: skip


def _value(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def draw_counts(rng: np.random.Generator, b: int, n: int) -> np.ndarray:
    """(b, n): how often each of n items is drawn in each of b resamples of size n."""
    idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(float)


def _replicates(cols: np.ndarray, f: SumStat, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    n = cols.shape[0]
    out = []
    step = _chunk(n)
    for start in range(0, n_boot, step):
        out.append(f(draw_counts(rng, min(step, n_boot - start), n) @ cols))
    return np.concatenate(out) if out else np.empty(0)


def sums_ci(
    cols: np.ndarray, f: SumStat, *, n_boot: int, seed: int, unit: str = "runs"
) -> dict[str, Any]:
    """``{"value", "ci", "ci_note", "n"}`` of ``f`` over items with columns ``cols`` (n, m),
    resampling items; the vectorised ``mean_ci``. No interval below ``intervals.MIN_N`` items or
    of zero width (``ci_note`` says which)."""
    n = int(cols.shape[0])
    if n == 0:
        return {"value": None, "ci": None, "ci_note": None, "n": 0}
    value = _value(float(f(cols.sum(axis=0))))
    if value is None or n_boot <= 0:
        note = None if value is None else "no interval (--bootstrap 0)"
        return {"value": value, "ci": None, "ci_note": note, "n": n}
    reps = _replicates(cols, f, n_boot, np.random.default_rng(seed))
    ci, note = checked(interval([_value(x) for x in reps]), n, unit)
    return {"value": value, "ci": ci, "ci_note": note, "n": n}


def paired_sums(
    a: dict[str, np.ndarray], b: dict[str, np.ndarray], f: SumStat, *, n_boot: int, seed: int
) -> dict[str, Any]:
    """``f(B) − f(A)`` over shared keys, each side's items summed per key (``a[key]`` (m,)),
    with a paired bootstrap over keys; the vectorised ``paired_bootstrap``. No interval below
    ``intervals.MIN_N`` pairs or of zero width (``ci_note`` says which)."""
    keys = sorted(set(a) & set(b))
    out: dict[str, Any] = {
        "a": None, "b": None, "delta": None, "ci": None, "ci_note": None, "pairs": len(keys),
        "only_a": len(set(a) - set(b)), "only_b": len(set(b) - set(a)), "paired": True,
    }  # fmt: skip
    if not keys:
        return out
    ka = np.stack([a[k] for k in keys])  # (K, m)
    kb = np.stack([b[k] for k in keys])
    if _points(out, ka, kb, f) and n_boot > 0:
        rng = np.random.default_rng(seed)
        k = len(keys)
        reps = []
        step = _chunk(k)
        for start in range(0, n_boot, step):
            counts = draw_counts(rng, min(step, n_boot - start), k)  # (chunk, K)
            reps.append(f(counts @ kb) - f(counts @ ka))
        ci = interval([_value(x) for x in np.concatenate(reps)])
        out["ci"], out["ci_note"] = checked(ci, k, "tasks paired")
    return out


def _points(out: dict[str, Any], ka: np.ndarray, kb: np.ndarray, f: SumStat) -> bool:
    """Fill ``out``'s a, b and delta from each side's summed (keys, m) rows; False when either
    side's statistic is undefined (no delta, no interval)."""
    va, vb = _value(float(f(ka.sum(axis=0)))), _value(float(f(kb.sum(axis=0))))
    out["a"], out["b"] = va, vb
    if va is None or vb is None:
        return False
    out["delta"] = vb - va
    return True


def unpaired_sums(
    a: dict[str, np.ndarray], b: dict[str, np.ndarray], f: SumStat, *, n_boot: int, seed: int
) -> dict[str, Any]:
    """``f(B) − f(A)`` over every key of each side, with a two-sample bootstrap: each side's
    keys are redrawn on their own. The fallback for runs that share too few tasks to pair;
    task-to-task variation then stays in the interval (it is wider than a paired one)."""
    out: dict[str, Any] = {
        "a": None, "b": None, "delta": None, "ci": None, "ci_note": None, "pairs": 0,
        "only_a": len(a), "only_b": len(b), "paired": False,
    }  # fmt: skip
    if not a or not b:
        return out
    ka, kb = np.stack(list(a.values())), np.stack(list(b.values()))
    if _points(out, ka, kb, f) and n_boot > 0:
        rng = np.random.default_rng(seed)
        ra = _replicates(ka, f, n_boot, rng)
        rb = _replicates(kb, f, n_boot, rng)
        ci = interval([_value(x) for x in rb - ra])
        out["ci"], out["ci_note"] = checked(ci, min(len(a), len(b)), "tasks a side")
    return out
