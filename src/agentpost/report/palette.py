"""Colours and short names of the report: one of each per agent in every chart.

``agent_colors(names)`` is entered once per report (``report.build``); while it is active,
``series_color`` gives an agent (by full name, or by the short label charts print) the same
colour wherever it appears, and any other series (token kinds, behaviours, ratios) a colour from
Paul Tol's muted scheme, so a behaviour never wears an agent's colour. No two agents share a
colour, however many there are: Okabe-Ito's eight first, then twelve of Kelly's colours of
maximum contrast, then hues spaced by the golden angle. ``short(name)`` is the label a chart
prints: the last ``/`` part of a model name (``gpt-4o``) unless another agent of the report
has the same one (``openai/gpt-4o`` and ``azure/gpt-4o`` stay whole), so two agents never read
as one.

Layer: pure.
"""

from __future__ import annotations

import colorsys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from agentpost.intervals import UNKNOWN

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
# Kelly's colours of maximum contrast, less those close to an Okabe-Ito one, white and black.
MORE = ["#875692", "#BE0032", "#C2B280", "#848482", "#008856", "#F99379", "#604E97",
        "#882D17", "#8DB600", "#654522", "#2B3D26", "#DCD300"]  # fmt: skip
# Paul Tol's "muted" scheme: for series that are not agents (token kinds, behaviours, ratios).
OTHER = ["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255"]
_AGENTS: ContextVar[dict[str, str] | None] = ContextVar("agent_colors", default=None)
_SHORT: ContextVar[dict[str, str] | None] = ContextVar("agent_short_names", default=None)


def distinct_colors(k: int) -> list[str]:
    """``k`` colours, no two alike: ``PALETTE``, ``MORE``, then golden-angle hues (alternating
    lightness), skipping any already taken."""
    out = (PALETTE + MORE)[:k]
    i = 0
    while len(out) < k:
        hue = (0.11 + i * 0.618033988749895) % 1.0
        r, g, b = colorsys.hls_to_rgb(hue, 0.38 if i % 2 else 0.55, 0.75)
        c = f"#{round(r * 255):02X}{round(g * 255):02X}{round(b * 255):02X}"
        if c not in out:
            out.append(c)
        i += 1
    return out


def short_names(names: Sequence[str]) -> dict[str, str]:
    """name → the label a chart prints: its last ``/`` part when no other name has that last
    part, else the whole name (so two names never print alike)."""
    names = list(dict.fromkeys(names))
    tails: dict[str, int] = {}
    for n in names:
        tails[n.split("/")[-1]] = tails.get(n.split("/")[-1], 0) + 1
    taken = set(names)
    out = {}
    for n in names:
        tail = n.split("/")[-1]
        # the tail of one name may also be another name in full (gpt-4o and openai/gpt-4o)
        out[n] = tail if tails[tail] == 1 and (tail == n or tail not in taken) else n
    return out


@contextmanager
def agent_colors(names: Sequence[str]) -> Iterator[dict[str, str]]:
    """While rendering one report: each agent (full name, and its ``short`` label) keeps one
    colour in every chart, and no two agents share one."""
    ordered = sorted(set(names))
    short = short_names(ordered)
    table: dict[str, str] = {}
    for n, c in zip(ordered, distinct_colors(len(ordered)), strict=True):
        table[n] = c
        table.setdefault(short[n], c)
    token, token_short = _AGENTS.set(table), _SHORT.set(short)
    try:
        yield table
    finally:
        _AGENTS.reset(token)
        _SHORT.reset(token_short)


def short(name: str) -> str:
    """The label charts print for agent ``name`` (see ``short_names``; outside a report, or for
    a name the report does not know, the last ``/`` part)."""
    table = _SHORT.get()
    if table and name in table:
        return table[name]
    return name.split("/")[-1]


def label(task: object, who: object) -> str:
    """A chart's ``task/agent`` label: the agent by its ``short`` name, and anything unknown as
    ``intervals.UNKNOWN`` (never ``None/None``)."""
    t = UNKNOWN if task is None or task == "" else str(task)
    return f"{t}/{short(UNKNOWN if who is None or who == '' else str(who))}"


def series_color(name: str, j: int) -> str:
    """An agent's colour when ``name`` is an agent (``name`` or ``name (…)``), else the j-th
    colour of the non-agent palette."""
    table = _AGENTS.get()
    if table:
        for key in (name, name.split(" (")[0]):
            if key in table:
                return table[key]
        return OTHER[j % len(OTHER)]
    return PALETTE[j % len(PALETTE)]
