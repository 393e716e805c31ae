"""The HERO terms both advantage implementations share: gate, coarse value, percentile, reselect.

Kept in one place so the loop reference and the vectorized code compute every float the same
way (the equivalence test can then ask for near bit-equality).

Layer: pure.
"""

from __future__ import annotations

import numpy as np


def gate(p: np.ndarray | float, tau: float, lam: float) -> np.ndarray:
    """w(p) = λ · clip((p − τ)/(1 − τ), 0, 1) (spec b.4). ``p`` any shape; τ ≥ 1 means w = λ·[p ≥ 1]."""
    p = np.asarray(p, dtype=np.float64)
    if tau >= 1.0:
        return np.where(p >= 1.0, float(lam), 0.0)
    return lam * np.clip((p - tau) / (1.0 - tau), 0.0, 1.0)


def coarse_value(c: np.ndarray, m: np.ndarray, n: np.ndarray, form: str) -> np.ndarray:
    """e = f(C/m) elementwise (spec b.5); 0 where the subset is a singleton (n ≤ 1) or m ≤ 0.

    ``form``: ``tanh`` tanh(1 − C/m); ``linear_clip`` clip(1 − C/m, −1, 1);
    ``log`` clip(−ln(C/m), −1, 1).
    """
    c, m, n = np.asarray(c, float), np.asarray(m, float), np.asarray(n)
    ok = (n > 1) & (m > 0)
    r = c / np.where(ok, m, 1.0)
    if form == "tanh":
        e = np.tanh(1.0 - r)
    elif form == "linear_clip":
        e = np.clip(1.0 - r, -1.0, 1.0)
    elif form == "log":
        with np.errstate(divide="ignore"):
            e = np.clip(-np.log(r), -1.0, 1.0)
    else:
        raise ValueError(f"unknown coarse_form {form!r}; known: tanh, linear_clip, log")
    return np.where(ok, e, 0.0)


def percentile_sorted(v: np.ndarray, pct: float) -> float:
    """Linear-interpolation percentile of an ascending array (numpy's default method)."""
    n = len(v)
    if n == 0:
        return float("nan")
    pos = (n - 1) * pct / 100.0
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    return float(v[lo] + (v[hi] - v[lo]) * (pos - lo))


def segment_percentile(h: np.ndarray, seg: np.ndarray, nseg: int, pct: float) -> np.ndarray:
    """[nseg] linear percentile of ``h[K]`` within each segment ``seg[K]``; nan for empty ones."""
    order = np.lexsort((h, seg))
    v = h[order]
    cnt = np.bincount(seg, minlength=nseg)
    start = np.cumsum(cnt) - cnt
    pos = (cnt - 1) * pct / 100.0
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, cnt - 1)
    last = max(len(v) - 1, 0)
    a = v[np.clip(start + lo, 0, last)] if len(v) else np.zeros(nseg)
    b = v[np.clip(start + hi, 0, last)] if len(v) else np.zeros(nseg)
    return np.where(cnt > 0, a + (b - a) * (pos - lo), np.nan)


def reselect(
    h: np.ndarray, pen: np.ndarray, chosen: np.ndarray, selection: str, seed: int, group: int
) -> np.ndarray:
    """Move a group's default penalty multiset ``pen[chosen]`` onto other turns (spec b.11).

    ``random``: k = |chosen| turns drawn uniformly, values in random order
    (``default_rng([seed, group])``). ``highest``: the k highest-entropy turns, the largest
    magnitude on the highest entropy. Shapes: ``h[n]``, ``pen[n]``, ``chosen[n]`` → ``[n]``.
    """
    values = pen[chosen]
    out = np.zeros_like(pen)
    k = len(values)
    if selection == "random":
        rng = np.random.default_rng([seed, group])
        out[rng.choice(len(h), size=k, replace=False)] = rng.permutation(values)
    elif selection == "highest":
        top = np.argsort(-h, kind="stable")[:k]
        out[top] = np.sort(values)
    else:
        raise ValueError(f"unknown selection {selection!r}; known: low, random, highest")
    return out
