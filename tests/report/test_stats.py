"""Effect sizes and bootstrap intervals (report.stats): values checked by hand, and the paired
bootstrap shown to cancel task difficulty that an unpaired comparison cannot."""

from __future__ import annotations

import numpy as np

from agentpost.report.stats import (
    interval,
    mean_ci,
    mean_of,
    paired_bootstrap,
    ratio_of,
    risk_difference,
)


def test_interval_skips_undefined_replicates_and_needs_two() -> None:
    assert interval([None, 1.0]) is None
    lo, hi = interval([None, 0.0, 1.0, 2.0, float("nan")])
    assert 0.0 <= lo < 0.1 and 1.9 < hi <= 2.0


def test_ratio_of_pools_sums_not_per_item_ratios() -> None:
    items = [{"n": 1, "d": 1}, {"n": 0, "d": 9}]
    assert ratio_of("n", "d")(items) == 0.1  # a mean of ratios would say 0.5
    assert ratio_of("n", "d")([{"n": 1, "d": 0}]) is None
    assert mean_of("x")([{"x": None}]) is None


def test_mean_ci_brackets_the_value_and_is_reproducible() -> None:
    items = [{"x": float(v)} for v in range(20)]
    a = mean_ci(items, mean_of("x"), n_boot=500, seed=3)
    assert a["value"] == 9.5 and a["ci"][0] < 9.5 < a["ci"][1]
    assert a == mean_ci(items, mean_of("x"), n_boot=500, seed=3)
    assert mean_ci([], mean_of("x"), n_boot=10, seed=0) == {"value": None, "ci": None, "n": 0}


def test_risk_difference_by_hand_and_no_contrast_when_a_side_is_empty() -> None:
    """Newcombe's interval (from the two Wilson intervals) of 1/4 − 3/3, checked against the
    closed form; too few runs: no interval, and the note says so."""
    from agentpost.intervals import newcombe, wilson

    d = risk_difference([False, False, True, False], [True, True, True], n_boot=400, seed=0)
    assert d["value"] == -0.75 and d["n_with"] == 4 and d["n_without"] == 3
    lo1, hi1 = wilson(1, 4)
    lo2, hi2 = wilson(3, 3)
    by_hand = [-0.75 - ((0.25 - lo1) ** 2 + (hi2 - 1) ** 2) ** 0.5,
               -0.75 + ((hi1 - 0.25) ** 2 + (1 - lo2) ** 2) ** 0.5]  # fmt: skip
    assert newcombe(1, 4, 3, 3) == by_hand and by_hand[0] < -0.75 < by_hand[1] < 0.0
    assert d["ci"] == by_hand and d["ci_note"] is None
    few = risk_difference([True], [False, False], n_boot=10, seed=0)
    assert few["ci"] is None and few["ci_note"].startswith("too few runs")
    assert risk_difference([True], [], n_boot=10, seed=0)["value"] is None


def test_paired_bootstrap_cancels_task_difficulty() -> None:
    """B spends exactly 10 tokens more than A on every task; tasks differ by thousands. The
    paired interval is [10, 10]; resampling each side alone would be thousands wide."""
    rng = np.random.default_rng(0)
    base = rng.uniform(100, 5000, size=12)
    a = {f"t{i}": [{"tokens": float(x)}] for i, x in enumerate(base)}
    b = {f"t{i}": [{"tokens": float(x) + 10}] for i, x in enumerate(base)}
    b["only-b"] = [{"tokens": 1e9}]
    d = paired_bootstrap(a, b, mean_of("tokens"), n_boot=300, seed=1)
    assert d["pairs"] == 12 and d["only_b"] == 1 and d["only_a"] == 0
    assert abs(d["delta"] - 10) < 1e-9
    assert abs(d["ci"][0] - 10) < 1e-6 and abs(d["ci"][1] - 10) < 1e-6
    unpaired_a = mean_ci([x for v in a.values() for x in v], mean_of("tokens"), n_boot=300, seed=1)
    assert unpaired_a["ci"][1] - unpaired_a["ci"][0] > 500


def test_paired_bootstrap_without_shared_keys_says_so() -> None:
    d = paired_bootstrap({"x": [1]}, {"y": [1]}, lambda xs: float(len(xs)), n_boot=10, seed=0)
    assert d["pairs"] == 0 and d["delta"] is None and d["ci"] is None


def test_vectorised_forms_agree_with_the_loop_reference() -> None:
    """sums_ci ≡ mean_ci and paired_sums ≡ paired_bootstrap on values, and their intervals
    agree within bootstrap noise (different draws, same distribution)."""
    from agentpost.report.stats import mean_columns, paired_sums, ratio, sums_ci

    rng = np.random.default_rng(4)
    xs = [None if i % 7 == 0 else float(v) for i, v in enumerate(rng.exponential(100, 300))]
    loop = mean_ci([{"x": x} for x in xs], mean_of("x"), n_boot=2000, seed=0)
    vec = sums_ci(mean_columns(xs), ratio, n_boot=2000, seed=0)
    assert abs(loop["value"] - vec["value"]) < 1e-9
    width = loop["ci"][1] - loop["ci"][0]
    assert all(abs(a - b) < 0.15 * width for a, b in zip(loop["ci"], vec["ci"], strict=True))
    a = {f"t{i}": [{"n": float(rng.integers(0, 5)), "d": 5.0}] for i in range(40)}
    b = {f"t{i}": [{"n": float(rng.integers(1, 6)), "d": 5.0}] for i in range(40)}
    ref = paired_bootstrap(a, b, ratio_of("n", "d"), n_boot=2000, seed=0)
    sums = {k: np.array([v[0]["n"], v[0]["d"]]) for k, v in a.items()}
    sums_b = {k: np.array([v[0]["n"], v[0]["d"]]) for k, v in b.items()}
    fast = paired_sums(sums, sums_b, ratio, n_boot=2000, seed=0)
    assert abs(ref["delta"] - fast["delta"]) < 1e-12 and ref["pairs"] == fast["pairs"] == 40
    w = ref["ci"][1] - ref["ci"][0]
    assert all(abs(x - y) < 0.15 * w for x, y in zip(ref["ci"], fast["ci"], strict=True))


def test_vectorised_paired_interval_of_a_constant_shift_is_no_95_percent_ci() -> None:
    """Every resample gives exactly 7: a zero-width interval, which is never shown as a 95%
    CI; the note says why. A shift with a little noise keeps a (narrow) interval."""
    from agentpost.report.stats import paired_sums, ratio

    a = {f"t{i}": np.array([100.0 * i, 1.0]) for i in range(1, 30)}
    b = {k: v + np.array([7.0, 0.0]) for k, v in a.items()}
    d = paired_sums(a, b, ratio, n_boot=500, seed=2)
    assert abs(d["delta"] - 7) < 1e-9 and d["ci"] is None and "no spread" in d["ci_note"]
    noisy = {k: v + np.array([7.0 + (int(k[1:]) % 3), 0.0]) for k, v in a.items()}
    d = paired_sums(a, noisy, ratio, n_boot=500, seed=2)
    assert d["ci"][0] < d["delta"] < d["ci"][1] and d["ci"][1] - d["ci"][0] < 2.5


def test_rates_get_wilson_intervals_never_zero_width_and_too_few_below_min_n() -> None:
    """All-success data (the "95% CI 100% to 100%" of a percentile bootstrap): Wilson keeps a
    width; below MIN_N units there is no interval at all, and the note says too few."""
    from agentpost.intervals import MIN_N, wilson
    from agentpost.report.stats import mean_columns, rate_ci, ratio, sums_ci

    r = rate_ci(23, 23, "tasks")
    assert r["ci"][1] == 1.0 and 0.85 < r["ci"][0] < 0.86 and r["ci_note"] is None
    assert wilson(0, 10)[0] == 0.0 and wilson(0, 10)[1] > 0.25
    for n in (2, 4):
        few = rate_ci(n, n, "tasks")
        assert (
            few["ci"] is None and few["ci_note"] == f"too few tasks for an interval: {n} < {MIN_N}"
        )
    same = sums_ci(mean_columns([1.0] * 30), ratio, n_boot=200, seed=0)
    assert same["value"] == 1.0 and same["ci"] is None and "no spread" in same["ci_note"]


def test_unpaired_fallback_resamples_each_side_on_its_own() -> None:
    """Two runs with no task in common: the two-sample interval covers the true difference of
    means (200) and is wider than task noise alone would make a paired one."""
    from agentpost.report.stats import ratio, unpaired_sums

    rng = np.random.default_rng(1)
    a = {f"a{i}": np.array([x, 1.0]) for i, x in enumerate(rng.normal(1000, 50, 40))}
    b = {f"b{i}": np.array([x, 1.0]) for i, x in enumerate(rng.normal(1200, 50, 40))}
    d = unpaired_sums(a, b, ratio, n_boot=800, seed=0)
    assert d["paired"] is False and d["pairs"] == 0 and d["only_a"] == d["only_b"] == 40
    assert d["ci"][0] < 200 < d["ci"][1] and 150 < d["delta"] < 250
