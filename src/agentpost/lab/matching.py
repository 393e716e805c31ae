"""D_SC and D_FTD matched in tasks, rows *and* supervised tokens (issue #34, item 3).

SCVD supervises only the teacher's commands after the student's candidate; FTD supervises every
teacher command. Matching each D_SC row with the FTD row of the same task closest in size (what
the lab did first) still left FTD with half as many supervised tokens again (15,139 vs 10,010 on
261 pairs): an FTD row always holds a candidate of its own. ``assign`` works on token counts only:

1. each D_SC row takes the unused FTD row of its task closest to its own count (ties: the
   earlier row); a row whose task has none left is dropped;
2. while the totals differ by more than ``tol`` of the larger one (``imbalance``), it makes the
   one change that brings them closest: swap one pair's FTD row for an unused row of the same
   task, or, when no swap helps, drop the pair whose removal helps most (a pair whose FTD row
   is longer than its D_SC row by a larger factor than the totals are). Every change strictly
   shrinks the imbalance, so it stops; where no change helps (e.g. every pair in the same
   proportion) it stops short of ``tol``, and the caller reports the totals it got.

Swaps come first, so pairs are dropped only when the FTD pool of the same tasks cannot balance
the totals. The rows kept are still the same tasks, one FTD row per D_SC row. Both steps select:
swaps favour the teacher's shorter paths in D_FTD, drops remove pairs whose D_SC row is short
(a kept candidate: check, submit) against a long FTD row, so D_SC keeps a larger share of
repairs; ``lab.scvd_data.collect`` reports the counts before and after.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence


def imbalance(s: int, f: int) -> float:
    """|f − s| / max(f, s): how far two token totals are apart, relative (0 for two zeros)."""
    return abs(f - s) / max(f, s) if max(f, s) else 0.0


def assign(
    sc: Sequence[tuple[str, int]], pool: dict[str, Sequence[int]], tol: float = 0.01
) -> list[int | None]:
    """For each D_SC row ``(task, supervised tokens)``: the index of its FTD row in
    ``pool[task]`` (FTD rows' supervised tokens), or None where the pair is dropped. No FTD row
    is used twice; at least one pair is kept when any can be."""
    used: dict[str, set[int]] = {t: set() for t in pool}
    pick: list[int | None] = []
    for task, n in sc:
        free = [j for j in range(len(pool.get(task, ()))) if j not in used.get(task, set())]
        if not free:
            pick.append(None)
            continue
        j = min(free, key=lambda k: (abs(pool[task][k] - n), k))
        used[task].add(j)
        pick.append(j)
    rows = [(i, t, n) for i, (t, n) in enumerate(sc)]
    while True:
        kept = [(i, t, n, pool[t][j]) for i, t, n in rows if (j := pick[i]) is not None]
        s, f = sum(k[2] for k in kept), sum(k[3] for k in kept)
        now = imbalance(s, f)
        if now <= tol:
            return pick
        best: tuple[float, int, int | None] | None = None  # (imbalance after, row, new index)
        for i, t, _, m in kept:
            for k in range(len(pool[t])):
                if k not in used[t]:
                    after = imbalance(s, f - m + pool[t][k])
                    if after < now and (best is None or after < best[0]):
                        best = (after, i, k)
        if best is None and len(kept) > 1:  # no swap helps: drop the pair that helps most
            for i, _, n, m in kept:
                after = imbalance(s - n, f - m)
                if after < now and (best is None or after < best[0]):
                    best = (after, i, None)
        if best is None:
            return pick
        _, i, k = best
        task = sc[i][0]
        used[task].discard(pick[i])  # type: ignore[arg-type]
        if k is not None:
            used[task].add(k)
        pick[i] = k
