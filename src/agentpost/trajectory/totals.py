"""Totals over a trajectory's turns: the one pass behind ``model.compute_totals`` and the
importers' trajectories.

Layer: model (no I/O; it reads the turns' fields and imports nothing from agentpost). Compiled
with the importers (``trajectory/_native.py``): it runs once per imported trajectory.
"""

from __future__ import annotations

from typing import Any

_WEAKEST = {"estimated": 0, "run_total": 1, "running_total_diff": 2, "reported": 3}
_RUN_FIELDS = ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cost_usd")


def totals_values(turns: list[Any], run_total: Any = None) -> dict[str, Any]:
    """The fields of ``compute_totals``'s result, in one pass over the turns (the importers
    build the model from them without validating: every value is an int, float, bool or a
    known source name)."""
    inp: Any = None
    cached: Any = None
    out: Any = None
    reasoning: Any = None
    cost: Any = None
    n_in = n_out = calls = 0
    source: Any = None  # the weakest source seen: mixed sources never over-trust the sum
    for t in turns:
        calls += len(t.tool_calls)
        u = t.usage
        if u is None:
            continue
        v = u.__dict__
        if (x := v["input_tokens"]) is not None:
            inp = x if inp is None else inp + x
            n_in += 1
        if (x := v["cached_tokens"]) is not None:
            cached = x if cached is None else cached + x
        if (x := v["output_tokens"]) is not None:
            out = x if out is None else out + x
            n_out += 1
        if (x := v["reasoning_tokens"]) is not None:
            reasoning = x if reasoning is None else reasoning + x
        if (x := v["cost_usd"]) is not None:
            cost = 0 + x if cost is None else cost + x  # as ``sum`` adds (0 + -0.0 is 0.0)
        if (x := v["source"]) in _WEAKEST and (source is None or _WEAKEST[x] < _WEAKEST[source]):
            source = x
    n = len(turns)
    values = {
        "turns": n,
        "tool_calls": calls,
        "input_tokens": inp,
        "cached_tokens": cached,
        "output_tokens": out,
        "reasoning_tokens": reasoning,
        "cost_usd": cost,
        "usage_source": source,
        # partial: some calls have a token count that others lack, so the sum is a lower bound
        "partial": 0 < n_in < n or 0 < n_out < n,
    }
    if run_total is not None:
        for name in _RUN_FIELDS:
            if values[name] is None and getattr(run_total, name) is not None:
                values[name] = getattr(run_total, name)
                values["usage_source"] = "run_total"
                values["partial"] = False  # a run total covers every call
    return values
