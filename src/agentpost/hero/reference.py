"""Loop reference of the HERO advantage: one group, rollout and turn at a time.

Slow and plain on purpose: the vectorized ``agentpost.hero.advantage.hero_advantages``
must agree with it (tests check every ablation and option). Shares only the scalar terms of
``agentpost.hero.terms`` with the fast path.

Layer: pure.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from agentpost.hero.advantage import HeroAdvantages, RolloutBatch
from agentpost.hero.config import OPTIONS, HeroConfig, check_options
from agentpost.hero.terms import coarse_value, gate, percentile_sorted, reselect


def hero_advantages_reference(batch: RolloutBatch, **hp: Any) -> HeroAdvantages:
    """Loop reference of :func:`hero_advantages` (same keywords): one group, rollout, turn at a
    time with Python scalars. Slow; for tests and for reading."""
    cfg = HeroConfig().kwargs()
    unknown = set(hp) - set(cfg)
    if unknown:
        raise TypeError(f"unknown hyperparameters: {sorted(unknown)}")
    cfg.update(hp)
    check_options(**{k: cfg[k] for k in OPTIONS})
    n, k, ng = len(batch.group), len(batch.turn_rollout), batch.n_groups
    res, e, pen = np.zeros(n), np.zeros(n), np.zeros(k)
    w, p_all, q_all = np.zeros(ng), np.zeros(ng), np.full(ng, np.nan)
    for g in range(ng):
        members = [i for i in range(n) if batch.group[i] == g]
        ys = [1.0 if batch.resolved[i] else 0.0 for i in members]
        p = sum(ys) / len(ys) if ys else 0.0
        sigma = math.sqrt(sum((v - p) ** 2 for v in ys) / len(ys)) if ys else 0.0
        p_all[g] = p
        w[g] = float(gate(p, cfg["tau"], cfg["lam"])) if cfg["gating"] else float(cfg["lam"])
        for i, v in zip(members, ys, strict=True):
            if cfg["res_norm"] == "none":
                res[i] = v - p
            else:
                res[i] = (v - p) / (sigma + cfg["eps"]) if sigma > 0 else 0.0
        if cfg["coarse"]:
            _coarse_reference(batch, members, e, cfg)
        turns = [t for t in range(k) if batch.group[batch.turn_rollout[t]] == g]
        hs = np.array([batch.turn_entropy[t] for t in turns])
        q = percentile_sorted(np.sort(hs), cfg["penalty_percentile"])
        q_all[g] = q
        if not turns or not q > 1e-8:
            continue
        vals = np.array([-math.tanh(1.0 - h / q) if h <= q else 0.0 for h in hs])
        if cfg["selection"] != "low":
            vals = reselect(hs, vals, hs <= q, cfg["selection"], cfg["seed"], g)
        for t, v in zip(turns, vals, strict=True):
            pen[t] = v if cfg["fine"] else 0.0
    turn, clipped = np.zeros(k), np.zeros(k, dtype=bool)
    for t in range(k):
        i = batch.turn_rollout[t]
        raw = res[i] + w[batch.group[i]] * (e[i] + pen[t])
        a = raw
        if cfg["clipping"]:
            a = max(raw, 0.0) if batch.resolved[i] else min(raw, 0.0)
        turn[t], clipped[t] = a, a != raw
    return HeroAdvantages(
        turn=turn, res=res, coarse=e, penalty=pen, gate=w, p=p_all, q=q_all, clipped=clipped
    )


def _coarse_reference(batch: RolloutBatch, members: list[int], e: np.ndarray, cfg: dict) -> None:
    """Fill ``e[i]`` for one group's ``members`` (per outcome subset unless calibration is off)."""
    subsets = (
        [[i for i in members if batch.resolved[i] == y] for y in (False, True)]
        if cfg["calibration"]
        else [members]
    )
    for sub in subsets:
        if not sub:
            continue
        m = float(statistics.median([batch.tokens[i] for i in sub]))
        vals = [float(coarse_value(batch.tokens[i], m, len(sub), cfg["coarse_form"])) for i in sub]
        if cfg["coarse_norm"] == "subset_std":
            sd = statistics.pstdev(vals)
            vals = [v / (sd + cfg["eps"]) if sd > 0 else v for v in vals]
        for i, v in zip(sub, vals, strict=True):
            e[i] = v
