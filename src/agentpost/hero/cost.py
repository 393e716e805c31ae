"""Token accounting, TRS, prefix-cache hit rate and inference cost (spec b.2, b.10).

    C_i  = Σ_calls (prompt_tokens + completion_tokens)     (cached prompt tokens included)
    TRS  = R / sqrt(1 + C)        R in percent, C = mean C_i in millions
    cache_hit = Σ cached / Σ prompt   over calls reporting both (None when none does: never 0)
    cost(τ) = ((prompt − cached)·c_in + cached·c_cache + completion·c_out) / 1e6
    effective price = Σ cost / Σ C · 1e6      (per million tokens, the unit of the prices)

Every function returns ``None`` when the numbers it needs are unknown, never 0. A trajectory's
cost needs its cached-token count: without it the effective price is unknown (toolkit choice;
guessing a 0% hit rate would overstate the cost of scaffolds whose logs omit it). Prices are
``agentpost.prices.Prices``: per million tokens, c_cache = 0.1·c_in unless given.

Layer: pure.
"""

from __future__ import annotations

import math

from agentpost.prices import PER, Prices
from agentpost.trajectory.model import Trajectory


def usage_sums(traj: Trajectory) -> tuple[int | None, int | None, int | None]:
    """(prompt, cached, completion) summed over turns; falls back to ``traj.totals``."""
    usages = [t.usage for t in traj.turns if t.usage is not None]

    def total(name: str) -> int | None:
        vals = [getattr(u, name) for u in usages if getattr(u, name) is not None]
        return sum(vals) if vals else getattr(traj.totals, name)

    return total("input_tokens"), total("cached_tokens"), total("output_tokens")


def trajectory_tokens(traj: Trajectory) -> int | None:
    """C_i = prompt + completion tokens, or None when either is unknown."""
    prompt, _, completion = usage_sums(traj)
    if prompt is None or completion is None:
        return None
    return prompt + completion


def trs(resolution_pct: float | None, mean_tokens_m: float | None) -> float | None:
    """TRS = R / sqrt(1 + C) with R in percent and C in millions of tokens."""
    if resolution_pct is None or mean_tokens_m is None:
        return None
    return resolution_pct / math.sqrt(1.0 + mean_tokens_m)


def cache_sums(traj: Trajectory) -> tuple[int, int] | None:
    """(Σ cached, Σ prompt) over the calls that report both (a call without a cached count says
    nothing about its prompt's hit rate); else the trajectory totals; None if neither has both."""
    pairs = [
        (t.usage.cached_tokens, t.usage.input_tokens)
        for t in traj.turns
        if t.usage is not None
        and t.usage.cached_tokens is not None
        and t.usage.input_tokens is not None
    ]
    if pairs:
        return sum(c for c, _ in pairs), sum(p for _, p in pairs)
    if traj.totals.cached_tokens is not None and traj.totals.input_tokens is not None:
        return traj.totals.cached_tokens, traj.totals.input_tokens
    return None


def cache_hit_rate(trajs: list[Trajectory]) -> float | None:
    """Σ cached / Σ prompt over the calls that report both; None if none does (never 0)."""
    num = den = 0
    for t in trajs:
        sums = cache_sums(t)
        if sums is not None:
            num, den = num + sums[0], den + sums[1]
    return num / den if den else None


def trajectory_cost(traj: Trajectory, prices: Prices) -> float | None:
    """Inference cost of one trajectory at ``prices`` (in ``prices.unit``); None if any count
    is unknown."""
    return prices.cost(*usage_sums(traj))


def effective_token_price(trajs: list[Trajectory], prices: Prices) -> float | None:
    """Σ cost / Σ tokens over trajectories with a known cost, per million tokens (the unit of
    ``prices``); None if there are none."""
    cost = tokens = 0.0
    for t in trajs:
        c, n = trajectory_cost(t, prices), trajectory_tokens(t)
        if c is not None and n:
            cost, tokens = cost + c, tokens + n
    return cost / tokens * PER if tokens else None


def relative_cost(method: float | None, baseline: float | None) -> float | None:
    """Effective per-token price of a method over the baseline's (spec b.10, e.14)."""
    if method is None or baseline is None or baseline == 0:
        return None
    return method / baseline
