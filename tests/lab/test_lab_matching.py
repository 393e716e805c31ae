"""D_SC / D_FTD matching in tasks, rows and supervised tokens (``lab.matching.assign``)."""

from __future__ import annotations

import random

from agentpost.lab.matching import assign, imbalance


def totals(sc, pool, pick):
    s = sum(n for (_, n), j in zip(sc, pick, strict=True) if j is not None)
    f = sum(pool[t][j] for (t, _), j in zip(sc, pick, strict=True) if j is not None)
    return s, f


def valid(sc, pool, pick):
    used = [(t, j) for (t, _), j in zip(sc, pick, strict=True) if j is not None]
    assert len(used) == len(set(used))  # no FTD row twice
    assert all(0 <= j < len(pool[t]) for t, j in used)


def test_closest_rows_leave_ftd_long_and_a_swap_balances_without_dropping():
    sc = [("a", 20), ("b", 60)]
    pool = {"a": [38, 39], "b": [59, 45]}
    # closest per row (the lab's first matching): 38 + 59 against 80, 21% apart
    assert imbalance(80, 38 + 59) > 0.15
    pick = assign(sc, pool, tol=0.05)
    valid(sc, pool, pick)
    assert pick == [0, 1]  # b's shorter FTD row: 38 + 45 = 83 against 80
    assert imbalance(*totals(sc, pool, pick)) <= 0.05


def test_pairs_are_dropped_only_when_no_swap_can_balance():
    sc = [("a", 20), ("b", 60), ("c", 60), ("d", 20)]
    pool = {"a": [40], "b": [62], "c": [58], "d": [40]}
    pick = assign(sc, pool, tol=0.01)
    valid(sc, pool, pick)
    assert pick == [None, 0, 0, None]  # the two pairs with twice the tokens on the FTD side
    assert totals(sc, pool, pick) == (120, 120)


def test_pairs_in_the_same_proportion_are_all_kept():
    # dropping pairs cannot change a ratio every pair shares: keep them all, report the gap
    sc = [(f"t{i}", 20) for i in range(10)]
    pool = {f"t{i}": [40] for i in range(10)}
    assert assign(sc, pool) == [0] * 10


def test_a_task_without_ftd_rows_is_dropped_and_rows_are_not_reused():
    sc = [("a", 30), ("a", 30), ("a", 30), ("z", 10)]
    pool = {"a": [31, 29]}
    pick = assign(sc, pool)
    valid(sc, pool, pick)
    assert pick[3] is None and sum(j is not None for j in pick[:3]) == 2


def test_a_lab_sized_pool_is_balanced_to_one_percent_keeping_most_pairs():
    # shaped like the lab's collection: kept candidates (check, submit) short, repairs long,
    # three FTD rows per task that always hold a candidate of their own
    rng = random.Random(0)
    sc, pool = [], {}
    for i in range(260):
        t = f"t{i}"
        sc.append((t, rng.choice((14, 20, 22)) if i % 2 else rng.choice((50, 56, 66))))
        pool[t] = [rng.choice((38, 46, 49, 51, 57, 74, 75, 89)) for _ in range(3)]
    first = assign(sc, pool, tol=1.0)  # the closest rows, nothing balanced
    assert imbalance(*totals(sc, pool, first)) > 0.2
    pick = assign(sc, pool, tol=0.01)
    valid(sc, pool, pick)
    assert imbalance(*totals(sc, pool, pick)) <= 0.01
    assert sum(j is not None for j in pick) >= 150
