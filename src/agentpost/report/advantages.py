"""Report part: the preview of HERO advantages (``agentpost hero advantages --json`` or the
demo's ``hero_advantages.json``): the mean turn advantage per rollout and, per group, the
resolution share p, the gate w and the range of rollout means. Nothing is recomputed.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.report.html import capped, cell, details, note, table
from agentpost.report.palette import short
from agentpost.report.svg import bar_chart


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _advantage_chart(rollouts: list[dict[str, Any]]) -> str:
    """Mean turn advantage per rollout. With at most 8 agents: tasks (groups) on the axis and
    one bar per agent (the mean over its attempts); otherwise one bar per rollout."""
    means = [_mean(r.get("turn_advantages") or []) for r in rollouts]
    agents = list(dict.fromkeys(str(r.get("agent")) for r in rollouts))
    title = "HERO advantage per rollout (mean over its turns)"
    if all(r.get("agent") for r in rollouts) and len(agents) <= 8:
        groups = list(dict.fromkeys(str(r.get("group")) for r in rollouts))
        cells: dict[tuple[str, str], list[float]] = {}
        for r, m in zip(rollouts, means, strict=True):
            if m is not None:
                cells.setdefault((str(r.get("group")), str(r.get("agent"))), []).append(m)
        series = {short(a): [_mean(cells.get((g, a), [])) for g in groups] for a in agents}
        return bar_chart(
            groups,
            series,
            title=f"{title}, per task and agent",
            ylabel="advantage",
            width=900,
            height=340,
        )
    cats = [
        f"{r.get('group')}/{str(r.get('id') or i).split('/')[-1]}" for i, r in enumerate(rollouts)
    ]
    resolved = [bool(r.get("resolved")) for r in rollouts]
    series = {
        "resolved": [m if ok else None for m, ok in zip(means, resolved, strict=True)],
        "not resolved": [None if ok else m for m, ok in zip(means, resolved, strict=True)],
    }
    if rollouts and "resolved" not in rollouts[0]:
        series = {"mean turn advantage": means}
    # the two series never share a rollout: stacked gives full-width bars
    return bar_chart(
        cats, series, title=title, stacked=True, ylabel="advantage", width=900, height=340
    )


def advantage_part(adv: dict[str, Any]) -> str:
    rollouts = adv.get("rollouts") or []
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rollouts:
        groups.setdefault(str(r.get("group")), []).append(r)
    rows = []
    for g, rs in groups.items():
        means = [m for r in rs if (m := _mean(r.get("turn_advantages") or [])) is not None]
        solved = sum(bool(r.get("resolved")) for r in rs) if "resolved" in rs[0] else None
        rows.append(
            [
                g,
                len(rs),
                solved,
                rs[0].get("p"),
                rs[0].get("gate"),
                min(means, default=None),
                max(means, default=None),
            ]
        )
    head = note(adv["note"]) if adv.get("note") else ""
    listed, cut = capped(rows, lambda r: r[1], "largest groups",
                         "the advantages JSON has them all")  # fmt: skip
    tab = table(
        ["group", "rollouts", "resolved", "p", "gate w", "min mean adv.", "max mean adv."], listed
    )
    return (
        head
        + (_advantage_chart(rollouts) if rollouts else "")
        + cut
        + details(f"Per group ({len(rows)} groups)", tab)
        + (f"<p>Clipped fraction of turn tokens: {cell(adv.get('clipped_fraction'))}.</p>")
    )
