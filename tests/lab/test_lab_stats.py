"""The lab's intervals resample seeds and tasks and pair arms; verdicts follow the written rule."""

from __future__ import annotations

import numpy as np
import pytest

from agentpost.lab import directions, stats


def _arm(rng, p, seeds=3, tasks=20, k=4, seed_sd=0.0):
    shift = rng.normal(0, seed_sd, (seeds, 1, 1))
    y = (rng.random((seeds, tasks, k)) < np.clip(p + shift, 0, 1)).astype(float)
    return y, np.ones_like(y)


def test_the_estimate_is_the_pooled_ratio_and_nan_cells_count_nowhere():
    num = np.array([[[1.0, np.nan], [3.0, 0.0]]])
    den = np.array([[[1.0, np.nan], [1.0, 0.0]]])
    assert stats.ratio(num, den) == pytest.approx(4.0 / 2.0)
    d = stats.draws(1, 2, 200, seed=1)
    est = stats.estimate(num, den, d)
    assert est["mean"] == 2.0 and est["ci95"] is None and est["too_few"]  # 3 < MIN_N rollouts


def test_a_rate_of_zero_gets_a_wilson_interval_not_a_zero_width_one():
    zeros = np.zeros((3, 10, 2))
    d = stats.draws(3, 10, 500, seed=0)
    est = stats.estimate(zeros, np.ones_like(zeros), d, rate=True)
    assert est["ci95"][0] == 0.0 and 0.05 < est["ci95"][1] < 0.1  # Wilson for 0/60
    assert stats.estimate(zeros, np.ones_like(zeros), d)["ci95"] is None  # not a rate: none


def test_seed_variance_widens_the_interval():
    rng = np.random.default_rng(0)
    quiet = _arm(rng, 0.5, seed_sd=0.0)
    noisy = _arm(rng, 0.5, seed_sd=0.25)
    d = stats.draws(3, 20, 2000, seed=0)
    w = [np.diff(stats.estimate(*a, d)["ci95"])[0] for a in (quiet, noisy)]
    assert w[1] > 1.5 * w[0]


def test_paired_difference_is_tighter_than_the_arms_and_separates_a_real_gap():
    rng = np.random.default_rng(1)
    base_y = (rng.random((3, 30, 4)) < 0.5).astype(float)
    better = np.where(rng.random(base_y.shape) < 0.5, 1.0, base_y)  # same cells, more resolved
    d = stats.draws(3, 30, 2000, seed=0)
    diff = stats.difference((better, np.ones_like(better)), (base_y, np.ones_like(base_y)), d)
    assert diff["ci95"][0] > 0
    same = stats.difference((base_y, np.ones_like(base_y)), (base_y, np.ones_like(base_y)), d)
    assert same["mean"] == 0 and same["ci95"] is None  # no zero-width interval


def test_too_few_defined_replicates_give_no_interval():
    num = np.full((2, 5, 1), np.nan)
    num[0, 0, 0] = 1.0
    den = np.where(np.isnan(num), np.nan, 1.0)
    assert stats.estimate(num, den, stats.draws(2, 5, 400, seed=0))["ci95"] is None


@pytest.mark.parametrize(
    ("relation", "bound", "ci", "want"),
    [
        ("greater", 0.0, [0.01, 0.2], "reproduced"),
        ("greater", 0.0, [-0.2, -0.01], "reversed"),
        ("greater", 0.0, [-0.1, 0.1], "inconclusive"),
        ("less", 0.0, [-0.2, -0.01], "reproduced"),
        ("less", 0.0, [0.01, 0.2], "reversed"),
        ("noninferior", 0.05, [-0.04, 0.1], "reproduced"),
        ("noninferior", 0.05, [-0.2, -0.06], "reversed"),
        ("noninferior", 0.05, [-0.1, 0.1], "inconclusive"),
        ("below", 0.02, [0.0, 0.015], "reproduced"),
        ("below", 0.02, [0.03, 0.05], "reversed"),
        ("below", 0.02, [0.0, 0.05], "inconclusive"),
        ("greater", 0.0, None, "inconclusive"),
    ],
)
def test_verdict_rule(relation, bound, ci, want):
    d = directions.Direction("x", "x", "m", "a", "b", relation, bound)
    assert directions.verdict(d, ci) == want


def test_every_direction_is_well_formed_and_named_once():
    names = [d.name for d in directions.HERO + directions.SCVD]
    assert len(names) == len(set(names))
    for d in directions.HERO + directions.SCVD:
        assert d.relation in ("greater", "less", "noninferior", "below") and d.expected
        assert (d.b is None) == (d.relation == "below" or d.metric == "low_entropy_unproductive")
