"""Turn entropy from top-k log-probs (spec b.6): h = mean over the turn's tokens of H_t.

Two variants of H_t: ``renorm=True`` renormalises the top-k probabilities (the spec default);
``renorm=False`` keeps them as they are and adds a tail bucket −p_tail ln p_tail with
p_tail = 1 − Σ p_j (clipped at 0). Two token sets: ``all`` generated tokens, or ``action_only``:
the tokens whose text overlaps the turn's tool-call commands/arguments, located by string search
in the concatenated token texts (toolkit choice; ``None`` when it cannot be located).

Layer: pure.
"""

from __future__ import annotations

import json

import numpy as np

from agentpost.trajectory.model import Turn


def token_entropy(top_logprobs: np.ndarray, *, topk: int = 10, renorm: bool = True) -> np.ndarray:
    """H_t in nats. ``top_logprobs[T, k]`` in any column order (k > topk keeps the topk largest;
    -inf/nan = absent) → ``[T]``."""
    lp = np.asarray(top_logprobs, dtype=np.float64)
    if lp.ndim != 2:
        raise ValueError(f"top_logprobs must be [T, k], got shape {lp.shape}")
    lp = -np.sort(-np.nan_to_num(lp, nan=-np.inf), axis=1)[:, :topk]
    p = np.exp(lp)
    if renorm:
        z = p.sum(axis=1, keepdims=True)
        p = np.divide(p, z, out=np.zeros_like(p), where=z > 0)
        tail = np.zeros(len(p))
    else:
        tail = np.clip(1.0 - p.sum(axis=1), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
        h -= np.where(tail > 0, tail * np.log(tail), 0.0)
    return h


def _rectangular(rows: list[list[float]]) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), -np.inf)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def action_token_mask(turn: Turn) -> np.ndarray | None:
    """[T] True for tokens overlapping the tool-call text; None if not locatable."""
    lp = turn.logprobs
    if lp is None or not lp.tokens or not turn.tool_calls:
        return None
    text = "".join(lp.tokens)
    bounds = np.cumsum([0] + [len(t) for t in lp.tokens])
    spans = []
    for call in turn.tool_calls:
        needles = [call.command] if call.command else []
        if call.arguments is not None:
            needles += [json.dumps(call.arguments), str(call.arguments)]
        for needle in needles:
            pos = text.rfind(needle) if needle else -1
            if pos >= 0:
                spans.append((pos, pos + len(needle)))
                break
    if not spans:
        return None
    mask = np.zeros(len(lp.tokens), dtype=bool)
    for a, b in spans:
        mask |= (bounds[:-1] < b) & (bounds[1:] > a)
    return mask


def turn_entropy(
    turn: Turn, *, topk: int = 10, renorm: bool = True, tokens: str = "all"
) -> float | None:
    """h_{i,k} of one turn, or None when it has no top-k log-probs (or no action tokens)."""
    lp = turn.logprobs
    if lp is None or not lp.top_logprobs:
        return None
    h = token_entropy(_rectangular(lp.top_logprobs), topk=topk, renorm=renorm)
    if tokens == "action_only":
        mask = action_token_mask(turn)
        if mask is None or len(mask) != len(h) or not mask.any():
            return None
        h = h[mask]
    elif tokens != "all":
        raise ValueError(f"tokens must be 'all' or 'action_only', got {tokens!r}")
    return float(h.mean()) if len(h) else None
