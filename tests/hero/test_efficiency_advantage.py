"""HERO advantage: the spec's unit checks (b.4-b.7, d) and loop-vs-vectorized agreement."""

from __future__ import annotations

import numpy as np
import pytest

from agentpost.hero.advantage import (
    batch_from_json,
    grpo_advantages,
    hero_advantages,
    make_batch,
    token_advantages,
)
from agentpost.hero.config import ABLATIONS, HeroConfig
from agentpost.hero.reference import hero_advantages_reference
from agentpost.hero.terms import gate, segment_percentile


def random_batch(seed: int, groups: int = 6, size: int = 8, p_resolve: float = 0.7):
    rng = np.random.default_rng(seed)
    n = groups * size
    gids = [f"task-{i // size}" for i in range(n)]
    resolved = list(rng.random(n) < p_resolve)
    resolved[-size:] = [True] * size  # one p = 1 group: efficiency is the whole signal there
    tokens = list(rng.integers(50_000, 2_000_000, n).astype(float))
    turns = []
    for _ in range(n):
        k = int(rng.integers(1, 12))
        lens = rng.integers(0, 9, k)
        starts = np.concatenate([[0], np.cumsum(lens + 2)[:-1]])  # gaps = observation tokens
        turns.append(
            [
                (float(rng.gamma(2.0, 0.3)), int(s), int(s + ln))
                for s, ln in zip(starts, lens, strict=True)
            ]
        )
    return make_batch(gids, resolved, tokens, turns)


def test_gate_at_paper_defaults():
    assert gate(0.6, 0.6, 0.3) == pytest.approx(0.0, abs=1e-12)
    assert gate(0.8, 0.6, 0.3) == pytest.approx(0.15, abs=1e-12)
    assert gate(1.0, 0.6, 0.3) == pytest.approx(0.3, abs=1e-12)
    assert gate(0.3, 0.6, 0.3) == 0.0
    assert gate(1.0, 0.8, 0.1) == pytest.approx(0.1)


@pytest.mark.parametrize("seed", range(5))
def test_clipping_never_crosses_the_resolved_line(seed):
    b = random_batch(seed)
    y = b.resolved[b.turn_rollout]
    for ablation in ("hero", "no_gating", "no_calibration", "random_20"):
        a = hero_advantages(b, **HeroConfig(lam=2.0).with_ablation(ablation).kwargs())
        assert np.all(a.turn[y] >= 0) and np.all(a.turn[~y] <= 0)
    raw = hero_advantages(b, lam=2.0, clipping=False)
    assert np.any(raw.turn[y] < 0) or np.any(raw.turn[~y] > 0)  # the clip has work to do


def test_coarse_term_is_zero_at_each_subset_median():
    # group of 7: 3 resolved (median 200), 4 unresolved... use odd sizes so the median is a member
    b = make_batch(
        ["g"] * 8,
        [True] * 3 + [False] * 5,
        [100, 200, 900, 1000, 3000, 5000, 7000, 9000],
        [[(0.5, 0, 1)]] * 8,
    )
    a = hero_advantages(b)
    assert a.coarse[1] == 0.0 and a.coarse[5] == 0.0
    assert a.coarse[0] > 0 > a.coarse[2]  # shorter than the subset median is rewarded
    assert a.coarse[3] > 0  # 1000 is short among failures though long among successes


def test_singleton_subset_gets_no_coarse_credit():
    b = make_batch(["g"] * 3, [True, False, False], [10, 20, 30], [[(0.5, 0, 1)]] * 3)
    assert hero_advantages(b).coarse[0] == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_lambda_zero_is_plain_grpo_exactly(seed):
    b = random_batch(seed)
    a = hero_advantages(b, lam=0.0)
    assert np.array_equal(a.turn, grpo_advantages(b)[b.turn_rollout])
    assert np.array_equal(hero_advantages_reference(b, lam=0.0).turn, a.turn)


@pytest.mark.parametrize("seed", range(3))
def test_permuting_rollouts_within_a_group_permutes_advantages(seed):
    b = random_batch(seed)
    rng = np.random.default_rng(100 + seed)
    n = len(b.group)
    perm = np.arange(n)
    for g in range(b.n_groups):
        idx = np.flatnonzero(b.group == g)
        perm[idx] = rng.permutation(idx)
    per_rollout = [
        [
            (b.turn_entropy[t], b.turn_start[t], b.turn_end[t])
            for t in np.flatnonzero(b.turn_rollout == i)
        ]
        for i in range(n)
    ]
    gids = [b.group_ids[g] for g in b.group]
    b2 = make_batch(
        [gids[i] for i in perm],
        [b.resolved[i] for i in perm],
        [b.tokens[i] for i in perm],
        [per_rollout[i] for i in perm],
        b.response_len,
    )
    t1, _ = token_advantages(b, hero_advantages(b).turn)
    t2, _ = token_advantages(b2, hero_advantages(b2).turn)
    assert np.allclose(t2, t1[perm], atol=1e-12)


CASES = [{"ablation": a} for a in ABLATIONS] + [
    {"coarse_form": "linear_clip"},
    {"coarse_form": "log"},
    {"coarse_norm": "subset_std"},
    {"res_norm": "none"},
    {"penalty_percentile": 50.0, "tau": 0.3, "lam": 0.5},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
@pytest.mark.parametrize("seed", range(3))
def test_reference_and_vectorized_agree(case, seed):
    b = random_batch(seed)
    case = dict(case)
    cfg = HeroConfig(seed=seed).with_ablation(case.pop("ablation", None))
    kw = {**cfg.kwargs(), **case}
    fast, ref = hero_advantages(b, **kw), hero_advantages_reference(b, **kw)
    for name in ("turn", "res", "coarse", "penalty", "gate", "p"):
        assert np.allclose(getattr(fast, name), getattr(ref, name), atol=1e-12), name
    assert np.allclose(fast.q, ref.q, equal_nan=True)
    assert np.array_equal(fast.clipped, ref.clipped)


def test_ablation_switches_do_what_they_say():
    b = random_batch(7)
    full = hero_advantages(b)
    assert np.all(
        hero_advantages(b, **HeroConfig().with_ablation("no_coarse").kwargs()).coarse == 0
    )
    assert np.all(hero_advantages(b, **HeroConfig().with_ablation("no_fine").kwargs()).penalty == 0)
    assert np.all(
        hero_advantages(b, **HeroConfig().with_ablation("no_gating").kwargs()).gate == 0.3
    )
    tg = b.group[b.turn_rollout]
    for name in ("random_20", "highest_entropy_20"):
        alt = hero_advantages(b, **HeroConfig().with_ablation(name).kwargs())
        for g in range(b.n_groups):  # the penalty multiset of each group is kept
            assert np.allclose(np.sort(alt.penalty[tg == g]), np.sort(full.penalty[tg == g]))
    hi = hero_advantages(b, **HeroConfig().with_ablation("highest_entropy_20").kwargs())
    for g in range(b.n_groups):
        h, pen = b.turn_entropy[tg == g], hi.penalty[tg == g]
        q80 = np.percentile(h, 80)
        assert np.all(pen[h < q80] == 0)


def test_p1_group_keeps_an_efficiency_signal_and_p0_is_filtered():
    b = make_batch(
        ["a"] * 4 + ["b"] * 4,
        [True] * 4 + [False] * 4,
        [10, 20, 30, 40] * 2,
        [[(0.1, 0, 2), (0.9, 2, 4)]] * 8,
    )
    a = hero_advantages(b)
    assert a.gate[0] == pytest.approx(0.3) and a.gate[1] == 0.0
    assert np.any(a.turn[:8] != 0) and np.all(a.turn[8:] == 0)
    assert a.group_kept(b).tolist() == [True, False]


def test_token_advantages_follow_turn_spans_and_mask_observations():
    b = make_batch(
        ["g", "g"],
        [True, False],
        [100, 300],
        [[(0.2, 0, 3), (0.8, 5, 7)], [(0.4, 1, 2)]],
        response_len=8,
    )
    a = hero_advantages(b)
    adv, mask = token_advantages(b, a.turn)
    assert mask[0].tolist() == [1, 1, 1, 0, 0, 1, 1, 0] and mask[1].tolist() == [0, 1] + [0] * 6
    assert np.all(adv[0, :3] == a.turn[0]) and np.all(adv[0, 5:7] == a.turn[1])
    assert np.all(adv[~mask] == 0)


def test_segment_percentile_matches_numpy():
    rng = np.random.default_rng(3)
    h, seg = rng.random(200), rng.integers(0, 7, 200)
    q = segment_percentile(h, seg, 8, 20.0)
    for g in range(7):
        assert q[g] == pytest.approx(np.percentile(h[seg == g], 20), abs=1e-12)
    assert np.isnan(q[7])


def test_batch_from_json_names_the_bad_place():
    ok = batch_from_json(
        {
            "rollouts": [
                {
                    "group": "t",
                    "resolved": True,
                    "tokens": 5,
                    "turns": [{"entropy": 0.3, "tokens": 4}],
                }
            ]
        }
    )
    assert ok.turn_end.tolist() == [4]
    with pytest.raises(ValueError, match=r"\$\.rollouts\[0\]\.turns\[0\]\.entropy"):
        batch_from_json(
            {
                "rollouts": [
                    {"group": "t", "resolved": True, "tokens": 5, "turns": [{"entropy": "x"}]}
                ]
            }
        )
    with pytest.raises(ValueError, match=r"\$\.rollouts\[0\]\.tokens"):
        batch_from_json(
            {"rollouts": [{"group": "t", "resolved": True, "tokens": True, "turns": []}]}
        )
    with pytest.raises(ValueError, match=r"\$\.rollouts\[0\]\.resolved"):
        batch_from_json({"rollouts": [{"group": "t", "resolved": 1, "tokens": 5, "turns": []}]})


def test_bad_options_and_overlapping_spans_are_rejected():
    b = random_batch(0)
    with pytest.raises(ValueError, match="res_norm"):
        hero_advantages(b, res_norm="mad")
    with pytest.raises(ValueError, match="coarse_form"):
        hero_advantages_reference(b, coarse_form="cubic")
    with pytest.raises(ValueError, match="overlaps"):
        make_batch(["g"], [True], [1.0], [[(0.1, 0, 5), (0.2, 3, 6)]])


def test_penalty_threshold_is_the_pooled_linear_20th_percentile():
    b = random_batch(11)
    a = hero_advantages(b)
    tg = b.group[b.turn_rollout]
    for g in range(b.n_groups):
        h = b.turn_entropy[tg == g]
        q = np.percentile(h, 20)  # numpy's default: linear interpolation
        assert a.q[g] == pytest.approx(q, abs=1e-12)
        pen = a.penalty[tg == g]
        assert np.allclose(pen, np.where(h <= q, -np.tanh(1 - h / q), 0.0), atol=1e-12)


def test_degenerate_entropy_threshold_skips_the_penalty():
    # q = 0 (most turns certain): the penalty is skipped for that group only
    b = make_batch(
        ["a"] * 2 + ["b"] * 2,
        [True, True, True, False],
        [10, 20, 10, 20],
        [[(0.0, 0, 1), (0.0, 1, 2)], [(0.0, 0, 1), (0.5, 1, 2)]]
        + [[(0.1, 0, 1), (0.9, 1, 2)], [(0.2, 0, 1), (0.9, 1, 2)]],
    )
    a = hero_advantages(b)
    assert a.q[0] == 0.0 and np.all(a.penalty[:4] == 0)
    assert np.any(a.penalty[4:] < 0)


def test_highest_entropy_control_puts_the_largest_penalty_on_the_highest_entropy():
    b = random_batch(5)
    full = hero_advantages(b)
    hi = hero_advantages(b, **HeroConfig().with_ablation("highest_entropy_20").kwargs())
    tg = b.group[b.turn_rollout]
    for g in range(b.n_groups):
        h, pen = b.turn_entropy[tg == g], hi.penalty[tg == g]
        hit = pen < 0
        assert hit.sum() == (full.penalty[tg == g] < 0).sum()
        order = np.argsort(h[hit])
        assert np.all(np.diff(np.abs(pen[hit][order])) >= 0)  # magnitude grows with entropy


def test_no_calibration_uses_one_median_over_the_group():
    b = make_batch(["g"] * 5, [True, True, False, False, False], [10, 30, 50, 70, 90], [[]] * 5)
    shared = hero_advantages(b, calibration=False).coarse
    assert shared[2] == 0.0 and shared[0] > 0 > shared[4]  # median 50 over all five
    calibrated = hero_advantages(b).coarse
    assert calibrated[3] == 0.0 and calibrated[2] > 0  # median 70 among the failures
