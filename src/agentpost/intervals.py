"""Intervals that do not overstate, one way for every command.

- A **rate** (k of n) gets the 95% Wilson score interval (``wilson``); the difference of two
  rates from independent samples gets Newcombe's hybrid score interval built from the two
  Wilson intervals (``newcombe``, method 10 of Newcombe 1998). Both stay inside [-1, 1] and are
  honest at k = 0 or k = n, where a percentile bootstrap collapses to a zero-width "95% CI
  100% to 100%".
- A **mean** (or a ratio of sums) gets a percentile bootstrap with ``RESAMPLES`` resamples, the
  one count every command uses (its flag is ``--bootstrap``).
- Below ``MIN_N`` units (tasks, runs, candidates) no interval is given: the output says
  "too few" instead (``too_few``), and an interval of zero width is never shown as a 95% CI
  (``checked``): the reason takes its place.

An interval is ``[low, high]`` or None; when None, a note (a short phrase) says why. A value
that is not recorded or not defined renders as ``UNKNOWN`` in every output (never "-", "?",
"None" or "(no model recorded)").

Layer: pure.
"""

from __future__ import annotations

import math

RESAMPLES = 1000  # bootstrap resamples, everywhere; the flag is --bootstrap
RESAMPLES_FLAG = "--bootstrap"
MIN_N = 5  # fewer units than this: "too few <units>", no interval
Z95 = 1.959963984540054  # the 97.5% point of the standard normal
UNKNOWN = "NA"  # the one rendering of a value that is not recorded or not defined


def wilson(k: int | float, n: int | float, z: float = Z95) -> list[float] | None:
    """95% Wilson score interval [low, high] for ``k`` successes in ``n`` trials; None when
    n = 0. Rather than the normal interval: it stays inside [0, 1] and keeps a width at k = 0
    or k = n."""
    if n <= 0:
        return None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = 0.0 if k <= 0 else max(0.0, mid - half)  # exact at the edges (no 0.9999999999999999)
    hi = 1.0 if k >= n else min(1.0, mid + half)
    return [lo, hi]


def newcombe(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> list[float] | None:
    """95% interval of p1 − p2 for two independent samples (k1 of n1, k2 of n2), Newcombe's
    hybrid score method from the Wilson intervals of each side; None when a side is empty."""
    a, b = wilson(k1, n1, z), wilson(k2, n2, z)
    if a is None or b is None:
        return None
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    lo = d - math.sqrt((p1 - a[0]) ** 2 + (b[1] - p2) ** 2)
    hi = d + math.sqrt((a[1] - p1) ** 2 + (p2 - b[0]) ** 2)
    return [max(-1.0, lo), min(1.0, hi)]


def too_few(n: int, unit: str = "tasks") -> str | None:
    """The note that replaces an interval over ``n`` units below ``MIN_N``, else None."""
    return f"too few {unit} for an interval: {n} < {MIN_N}" if n < MIN_N else None


def checked(
    ci: list[float] | None, n: int, unit: str = "tasks"
) -> tuple[list[float] | None, str | None]:
    """``(ci, note)``: the interval when it may be shown; else None and the reason (too few
    units, no interval computed, or zero width: every resample gave the same value)."""
    few = too_few(n, unit)
    if few:
        return None, few
    if ci is None:
        return None, "no interval"
    if not ci[1] - ci[0] > 1e-12:
        return None, f"no spread across resamples of its {n} {unit}"
    return [float(ci[0]), float(ci[1])], None
