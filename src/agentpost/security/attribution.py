"""Behaviour attribution statistics of spec b.3.

Input: one record per trajectory, ``{agent, task, func, sec, planning, coding, testing}`` with
labels ``none | generic | target_aligned`` (aborted records are dropped before this; a record
with a missing label, None because every judge abstained, is left out here and counted).

1. Frequencies per agent and behaviour: share target_aligned, generic and any (≠ none), with
   Wilson 95% intervals, over the agent's functionally correct trajectories (the attribution
   population) and over all its trajectories (b.9 behaviour metrics).
2. Paired-difference r: for each task with ≥ 1 functionally correct run of both agents,
   Δb(j) = target-aligned rate of A − of B (functionally correct runs), Δs(j) = SecPass rate of
   A − of B (SecPass = func ∧ sec over *all* of the agent's runs on j, since SecPass is
   unconditional in b.9; within the functionally correct runs this would be the sec rate).
   r = Pearson(Δb, Δs); NA (None) with fewer than 3 tasks or zero variance.
3. φ between "generic-only testing" / "target-aligned testing" and sec over the pooled
   functionally correct trajectories; NA when any margin of the 2×2 table is 0.

Layer: pure.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentpost.intervals import too_few
from agentpost.intervals import wilson as score
from agentpost.security.model import BEHAVIOURS, LABELS

FORMAT = "agentpost.security.attribution/1"
REQUIRED = ("agent", "task", "func", "sec", *BEHAVIOURS)


def validate_record(rec: Any) -> dict[str, Any]:
    """A checked copy of one label record; ValueError names the bad field."""
    if not isinstance(rec, Mapping):
        raise ValueError("record must be a JSON object")
    for key in REQUIRED:
        if key not in rec:
            raise ValueError(f"missing field {key!r}")
    for key in ("func", "sec"):
        if not isinstance(rec[key], bool):
            raise ValueError(f"field {key!r} must be true or false")
    for b in BEHAVIOURS:
        if rec[b] is not None and rec[b] not in LABELS:
            raise ValueError(f"field {b!r} must be one of {LABELS} or null, got {rec[b]!r}")
    return {**rec, "agent": str(rec["agent"]), "task": str(rec["task"])}


def is_labelled(rec: Mapping[str, Any]) -> bool:
    """Every behaviour has a label (None means no judge decided it: missing, not ``none``)."""
    return all(rec.get(b) is not None for b in BEHAVIOURS)


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """95% Wilson score interval for k successes of n (``agentpost.intervals.wilson``); None
    when n = 0."""
    ci = score(k, n)
    return None if ci is None else (ci[0], ci[1])


def _rate(k: int, n: int) -> dict[str, Any]:
    """k of n with its Wilson interval; none below ``intervals.MIN_N`` (``ci_note`` says so)."""
    few = too_few(n, "trajectories")
    return {"k": k, "n": n, "rate": k / n if n else None,
            "ci95": None if few else wilson(k, n), "ci_note": few}  # fmt: skip


def _behaviour_rates(recs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    n = len(recs)
    out: dict[str, Any] = {}
    for b in BEHAVIOURS:
        out[b] = {
            "target_aligned": _rate(sum(r[b] == "target_aligned" for r in recs), n),
            "generic": _rate(sum(r[b] == "generic" for r in recs), n),
            "any": _rate(sum(r[b] != "none" for r in recs), n),
        }
    return out


def frequencies(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per agent: counts, FuncPass, SecPass and behaviour rates (functionally correct, all)."""
    by_agent: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        by_agent[r["agent"]].append(r)
    out = {}
    for agent, recs in sorted(by_agent.items()):
        correct = [r for r in recs if r["func"]]
        out[agent] = {
            "n": len(recs),
            "n_func_correct": len(correct),
            "func_pass": _rate(len(correct), len(recs)),
            "sec_pass": _rate(sum(r["func"] and r["sec"] for r in recs), len(recs)),
            "func_correct": _behaviour_rates(correct),
            "all": _behaviour_rates(recs),
        }
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson r; None for fewer than 3 points or zero variance in either series."""
    n = len(x)
    if n < 3 or len(y) != n:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sxy / math.sqrt(sxx * syy)


def paired_differences(
    records: Iterable[Mapping[str, Any]], agent_a: str, agent_b: str, behaviour: str
) -> dict[str, Any]:
    """Δb and Δs per shared task (see the module docstring) and their Pearson r."""
    runs: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        runs[(r["agent"], r["task"])].append(r)
    tasks = sorted({t for (_, t) in runs})
    rows = []
    for t in tasks:
        a_all, b_all = runs.get((agent_a, t), []), runs.get((agent_b, t), [])
        a_ok, b_ok = [r for r in a_all if r["func"]], [r for r in b_all if r["func"]]
        if not a_ok or not b_ok:
            continue

        def ta(rs):
            return sum(r[behaviour] == "target_aligned" for r in rs) / len(rs)

        def sp(rs):
            return sum(r["func"] and r["sec"] for r in rs) / len(rs)

        rows.append(
            {"task": t, "d_behaviour": ta(a_ok) - ta(b_ok), "d_secpass": sp(a_all) - sp(b_all)}
        )
    r = pearson([x["d_behaviour"] for x in rows], [x["d_secpass"] for x in rows])
    reason = None if r is not None else ("fewer than 3 tasks" if len(rows) < 3 else "zero variance")
    return {"r": r, "n_tasks": len(rows), "na_reason": reason, "tasks": rows}


def phi(x: Sequence[bool], y: Sequence[bool]) -> dict[str, Any]:
    """φ = (n11·n00 − n10·n01) / sqrt(n1·· n0·· n·1 n·0); None when a margin is 0."""
    n11 = sum(a and b for a, b in zip(x, y, strict=True))
    n10 = sum(a and not b for a, b in zip(x, y, strict=True))
    n01 = sum(b and not a for a, b in zip(x, y, strict=True))
    n00 = len(x) - n11 - n10 - n01
    margins = (n11 + n10, n01 + n00, n11 + n01, n10 + n00)
    value = None
    if all(margins):
        value = (n11 * n00 - n10 * n01) / math.sqrt(math.prod(margins))
    return {"phi": value, "n11": n11, "n10": n10, "n01": n01, "n00": n00}


def phi_testing(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """φ of generic-only and of target-aligned testing vs sec, pooled functionally correct runs."""
    correct = [r for r in records if r["func"]]
    sec = [bool(r["sec"]) for r in correct]
    return {
        "n": len(correct),
        "generic_only_testing": phi([r["testing"] == "generic" for r in correct], sec),
        "target_aligned_testing": phi([r["testing"] == "target_aligned" for r in correct], sec),
    }


def attribute(
    records: Sequence[Mapping[str, Any]], agent_a: str | None = None, agent_b: str | None = None
) -> dict[str, Any]:
    """The full b.3 report. Without names, A is the agent with the highest SecPass (the
    more-secure one) and B the one with the lowest (ties broken by name). Records with a
    missing label (``is_labelled`` false) are left out and counted in ``unannotated``."""
    unannotated = sum(not is_labelled(r) for r in records)
    records = [r for r in records if is_labelled(r)]
    freq = frequencies(records)
    agents = sorted(freq, key=lambda a: (-(freq[a]["sec_pass"]["rate"] or 0.0), a))
    if agent_a is None and agent_b is None and len(agents) >= 2:
        agent_a, agent_b = agents[0], agents[-1]
    out: dict[str, Any] = {"format": FORMAT, "agents": freq, "agent_a": agent_a, "agent_b": agent_b,
                           "unannotated": unannotated}  # fmt: skip
    if agent_a is not None and agent_b is not None:
        out["paired_difference"] = {
            b: paired_differences(records, agent_a, agent_b, b) for b in BEHAVIOURS
        }
    out["phi"] = phi_testing(records)
    return out
