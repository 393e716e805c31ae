"""The HERO advantage (spec b.3-b.7, b.11) over a batch of rollout groups, as pure numpy.

Two implementations that must agree (tests check it): the loop reference
(``agentpost.hero.reference``) walks groups, rollouts and turns in plain Python;
``hero_advantages`` here does the same with segment operations over flat arrays (sort +
bincount), which is what trainers call. ``grpo_advantages`` is the plain GRPO
baseline the bench compares against.

Shapes: N rollouts, K turns (all rollouts, flat), L response length, G groups.

    Â_{i,k} = Γ( A_i^res + w(p_g) · ( A_i^traj + P_{i,k} ) ; y_i )        (spec b.7)

Departures from the paper, all spec ``[unspecified]`` defaults: std-normalised A^res with ε;
coarse term e = tanh(1 - C/m_y); Γ applied per turn; the fine penalty is gated by w too;
q uses linear interpolation (numpy's default), computed here by our own formula so that both
implementations share it bit for bit. For the two selection controls of b.11 the default penalty
multiset of a group is re-assigned (``terms.reselect``): random-20% draws with
``default_rng([seed, group ordinal])``; highest-entropy-20% takes the k highest-entropy turns,
k = #{h ≤ q20}, which equals #{h ≥ q80} for distinct entropies under linear interpolation.

Layer: pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentpost.hero.config import check_options
from agentpost.hero.terms import (
    coarse_value,
    gate,
    reselect,
    segment_percentile,
)


@dataclass(frozen=True)
class RolloutBatch:
    """Flat arrays for N rollouts with K turns in total.

    ``group[N]`` group ordinal 0..G-1 (``group_ids[g]`` is its original id); ``resolved[N]``;
    ``tokens[N]`` C_i; ``turn_rollout[K]`` owning rollout; ``turn_entropy[K]`` h_{i,k};
    ``turn_start[K]``/``turn_end[K]`` half-open token span in the response (0..L).
    """

    group: np.ndarray
    resolved: np.ndarray
    tokens: np.ndarray
    turn_rollout: np.ndarray
    turn_entropy: np.ndarray
    turn_start: np.ndarray
    turn_end: np.ndarray
    response_len: int
    group_ids: tuple[Any, ...]

    @property
    def n_groups(self) -> int:
        return len(self.group_ids)


def make_batch(
    groups: list[Any],
    resolved: list[bool],
    tokens: list[float],
    turns: list[list[tuple[float, int, int]]],
    response_len: int | None = None,
) -> RolloutBatch:
    """Build a batch from per-rollout lists; ``turns[i]`` = [(entropy, start, end), ...].

    Raises ``ValueError`` naming the rollout and turn on a bad span or a non-finite number.
    """
    n = len(groups)
    if not (len(resolved) == len(tokens) == len(turns) == n):
        raise ValueError("groups, resolved, tokens and turns must have one entry per rollout")
    uniq = sorted(set(groups), key=lambda g: (str(type(g)), g))
    ordinal = {g: i for i, g in enumerate(uniq)}
    flat = [(i, h, s, e) for i, ts in enumerate(turns) for (h, s, e) in ts]
    arr = np.array(flat, dtype=np.float64).reshape(-1, 4)
    ends = arr[:, 3].astype(np.int64)
    length = int(response_len if response_len is not None else (ends.max() if len(ends) else 0))
    last_end: dict[float, float] = {}
    for k, (i, h, s, e) in enumerate(flat):
        if not (0 <= s <= e <= length) or not math.isfinite(h):
            raise ValueError(f"rollout {int(i)}: turn {k}: bad span [{s}, {e}) or entropy {h}")
        if s < last_end.get(i, 0):
            raise ValueError(f"rollout {int(i)}: turn {k}: span overlaps or precedes the last one")
        last_end[i] = e
    tok = np.asarray(tokens, dtype=np.float64)
    if not np.all(np.isfinite(tok)) or np.any(tok < 0):
        raise ValueError("tokens must be finite and non-negative")
    return RolloutBatch(
        group=np.array([ordinal[g] for g in groups], dtype=np.int64),
        resolved=np.asarray(resolved, dtype=bool),
        tokens=tok,
        turn_rollout=arr[:, 0].astype(np.int64),
        turn_entropy=arr[:, 1],
        turn_start=arr[:, 2].astype(np.int64),
        turn_end=ends,
        response_len=length,
        group_ids=tuple(uniq),
    )


@dataclass
class HeroAdvantages:
    """Result: ``turn[K]`` Â per turn, ``res[N]`` A^res, ``coarse[N]`` e (before w),
    ``penalty[K]`` P (after selection), ``gate[G]`` w, ``p[G]``, ``q[G]`` entropy threshold
    (nan when undefined), ``clipped[K]`` whether Γ changed the turn."""

    turn: np.ndarray
    res: np.ndarray
    coarse: np.ndarray
    penalty: np.ndarray
    gate: np.ndarray
    p: np.ndarray
    q: np.ndarray
    clipped: np.ndarray

    def clipped_fraction(self, batch: RolloutBatch) -> float:
        """Share of turn tokens whose advantage Γ changed (turn-count share when spans are 0)."""
        w = (batch.turn_end - batch.turn_start).astype(np.float64)
        if w.sum() == 0:
            return float(self.clipped.mean()) if len(self.clipped) else 0.0
        return float((w * self.clipped).sum() / w.sum())

    def group_kept(self, batch: RolloutBatch) -> np.ndarray:
        """[G] False where every advantage of the group is exactly 0 (b.7 group filter)."""
        nz = np.zeros(batch.n_groups, dtype=bool)
        np.logical_or.at(nz, batch.group[batch.turn_rollout], self.turn != 0)
        return nz


def token_advantages(batch: RolloutBatch, turn_adv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scatter per-turn values onto tokens: ``(adv[N, L], mask[N, L])``; 0/False off-span.

    Spans of one rollout must not overlap (``make_batch`` checks it). The flat N·L row is a run
    of alternating gaps and turn spans, so one ``np.repeat`` writes it in a single pass.
    """
    n, length = len(batch.group), batch.response_len
    base = batch.turn_rollout * length
    order = np.argsort(base + batch.turn_start, kind="stable")
    s = (base + batch.turn_start)[order]
    e = (base + batch.turn_end)[order]
    k = len(s)
    lengths = np.empty(2 * k + 1, dtype=np.int64)
    lengths[0:-1:2] = s - np.concatenate([[0], e[:-1]])
    lengths[1::2] = e - s
    lengths[-1] = n * length - (e[-1] if k else 0)
    vals = np.zeros(2 * k + 1)
    vals[1::2] = np.asarray(turn_adv, dtype=np.float64)[order]
    on = np.zeros(2 * k + 1, dtype=bool)
    on[1::2] = True
    adv = np.repeat(vals, lengths).reshape(n, length)
    return adv, np.repeat(on, lengths).reshape(n, length)


def grpo_advantages(batch: RolloutBatch, *, eps: float = 1e-6, res_norm: str = "std") -> np.ndarray:
    """Plain GRPO: [N] group-normalised resolution advantage A^res (b.3)."""
    g, y = batch.group, batch.resolved.astype(np.float64)
    cnt = np.bincount(g, minlength=batch.n_groups).astype(np.float64)
    p = np.bincount(g, weights=y, minlength=batch.n_groups) / np.maximum(cnt, 1)
    sigma = np.sqrt(np.maximum(p - p * p, 0.0))
    if res_norm == "none":
        return y - p[g]
    return np.where(sigma[g] > 0, (y - p[g]) / (sigma[g] + eps), 0.0)


def _coarse_vectorized(
    batch: RolloutBatch, *, form: str, norm: str, calibration: bool, eps: float
) -> np.ndarray:
    """[N] e_i against the median of the rollout's outcome subset (or the group's)."""
    key = batch.group * 2 + batch.resolved if calibration else batch.group
    nkeys = batch.n_groups * 2
    order = np.lexsort((batch.tokens, key))
    cnt = np.bincount(key, minlength=nkeys)
    start = np.cumsum(cnt) - cnt
    c_sorted = batch.tokens[order]
    lo = np.clip(start + (cnt - 1) // 2, 0, max(len(order) - 1, 0))
    hi = np.clip(start + cnt // 2, 0, max(len(order) - 1, 0))
    med = (c_sorted[lo] + c_sorted[hi]) / 2 if len(order) else np.zeros(nkeys)
    e = coarse_value(batch.tokens, med[key], cnt[key], form)
    if norm == "subset_std":
        n = np.maximum(cnt, 1)
        mean = np.bincount(key, weights=e, minlength=nkeys) / n
        var = np.bincount(key, weights=(e - mean[key]) ** 2, minlength=nkeys) / n
        sd = np.sqrt(var)[key]
        e = np.where(sd > 0, e / (sd + eps), e)
    return e


def _penalty_vectorized(
    batch: RolloutBatch, turn_group: np.ndarray, *, pct: float, selection: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """([K] P, [G] q): low-entropy penalty against the group's pooled percentile."""
    h = batch.turn_entropy
    q = segment_percentile(h, turn_group, batch.n_groups, pct)
    qk = q[turn_group]
    ok = np.isfinite(qk) & (qk > 1e-8)
    safe = np.where(ok, qk, 1.0)
    pen = np.where(ok & (h <= qk), -np.tanh(1.0 - h / safe), 0.0)
    if selection != "low":
        for g in range(batch.n_groups):
            idx = np.flatnonzero(turn_group == g)
            if len(idx) and ok[idx[0]]:
                pen[idx] = reselect(h[idx], pen[idx], h[idx] <= qk[idx], selection, seed, g)
    return pen, q


def hero_advantages(
    batch: RolloutBatch,
    *,
    tau: float = 0.6,
    lam: float = 0.3,
    penalty_percentile: float = 20.0,
    coarse_form: str = "tanh",
    coarse_norm: str = "none",
    res_norm: str = "std",
    eps: float = 1e-6,
    gating: bool = True,
    clipping: bool = True,
    calibration: bool = True,
    coarse: bool = True,
    fine: bool = True,
    selection: str = "low",
    seed: int = 0,
) -> HeroAdvantages:
    """Vectorized HERO advantage; see the module docstring. Keywords = ``HeroConfig`` fields."""
    check_options(
        res_norm=res_norm, coarse_norm=coarse_norm, coarse_form=coarse_form, selection=selection
    )
    g, y = batch.group, batch.resolved
    cnt = np.bincount(g, minlength=batch.n_groups).astype(np.float64)
    p = np.bincount(g, weights=y.astype(np.float64), minlength=batch.n_groups) / np.maximum(cnt, 1)
    res = grpo_advantages(batch, eps=eps, res_norm=res_norm)
    w = gate(p, tau, lam) if gating else np.full(batch.n_groups, float(lam))
    e = (
        _coarse_vectorized(
            batch, form=coarse_form, norm=coarse_norm, calibration=calibration, eps=eps
        )
        if coarse
        else np.zeros(len(g))
    )
    turn_group = g[batch.turn_rollout]
    pen, q = _penalty_vectorized(
        batch, turn_group, pct=penalty_percentile, selection=selection, seed=seed
    )
    if not fine:
        pen = np.zeros_like(pen)
    r = batch.turn_rollout
    raw = res[r] + w[turn_group] * (e[r] + pen)
    adv = np.where(y[r], np.maximum(raw, 0.0), np.minimum(raw, 0.0)) if clipping else raw
    return HeroAdvantages(
        turn=adv, res=res, coarse=e, penalty=pen, gate=w, p=p, q=q, clipped=adv != raw
    )


def batch_from_json(data: Any) -> RolloutBatch:
    """``{"rollouts": [{"group", "resolved", "tokens", "turns": [{"entropy", "tokens"}]}]}`` →
    batch; turn spans are laid end to end in the response. ``ValueError`` names the JSON path."""
    rollouts = data.get("rollouts") if isinstance(data, dict) else None
    if not isinstance(rollouts, list):
        raise ValueError("$.rollouts: expected a list")
    groups, resolved, tokens, turns = [], [], [], []
    for i, r in enumerate(rollouts):
        where = f"$.rollouts[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("turns"), list):
            raise ValueError(f"{where}: expected an object with a 'turns' list")
        for key in ("group", "resolved", "tokens"):
            if key not in r:
                raise ValueError(f"{where}.{key}: missing")
        if not isinstance(r["resolved"], bool):
            raise ValueError(f"{where}.resolved: expected true/false")
        if (
            isinstance(r["tokens"], bool)
            or not isinstance(r["tokens"], int | float)
            or r["tokens"] < 0
        ):
            raise ValueError(f"{where}.tokens: expected a non-negative number")
        spans, pos = [], 0
        for k, t in enumerate(r["turns"]):
            h, n = (t.get("entropy"), t.get("tokens", 1)) if isinstance(t, dict) else (None, None)
            if not isinstance(h, int | float) or not math.isfinite(h):
                raise ValueError(f"{where}.turns[{k}].entropy: expected a finite number")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"{where}.turns[{k}].tokens: expected a non-negative integer")
            spans.append((float(h), pos, pos + n))
            pos += n
        groups.append(r["group"] if isinstance(r["group"], str | int) else str(r["group"]))
        resolved.append(r["resolved"])
        tokens.append(float(r["tokens"]))
        turns.append(spans)
    if len({type(g) for g in groups}) > 1:
        groups = [str(g) for g in groups]
    return make_batch(groups, resolved, tokens, turns)
