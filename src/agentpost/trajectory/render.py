"""Terminal rendering of one trajectory for ``agentpost show`` (rich), and the per-trajectory
counts that ``agentpost stats`` prints (as JSON or as a table).

Long texts are clipped by lines and characters, saying how much was left out, so a turn stays
readable in an 80-100 column terminal; ``full=True`` prints everything. Tool arguments print as
JSON, and a number the source does not have prints as ``–`` (it is null, not 0).

Layer: io.
"""

from __future__ import annotations

from typing import Any

import orjson
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentpost.trajectory.model import Trajectory, Turn, Usage

COUNT_KEYS = ("turns", "tool_calls", "input_tokens", "cached_tokens", "output_tokens")
HEADERS = ("turns", "calls", "in", "cached", "out")
# (lines, characters) kept of each kind of text unless ``full``
LIMITS = {
    "instruction": (15, 1500),
    "reasoning": (6, 800),
    "text": (12, 1500),
    "call": (6, 600),
    "observation": (10, 1000),
}


PIPE_WIDTH = 1000  # columns of a table printed to a file or a pipe: never cut at 80


def console(stderr: bool = False) -> Console:
    """The console every table goes to: the terminal's width on a terminal; on a pipe or a
    file (no terminal, no ``COLUMNS``) wide enough that no table is cut or wrapped at 80."""
    import os
    import sys

    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and not os.environ.get("COLUMNS")
    return Console(stderr=stderr, width=PIPE_WIDTH if wide else None)


def partial_fields(t: Trajectory) -> list[str]:
    """The token totals of ``t`` that are lower bounds: summed over only some of its model calls
    (others lack the count), or a figure the source logs mid-stream (``totals.unknown``)."""
    tot = t.totals
    if tot.usage_source == "run_total":
        return []
    out = []
    for k in COUNT_KEYS[2:]:
        if getattr(tot, k) is None:
            continue
        have = sum(1 for x in t.turns if x.usage is not None and getattr(x.usage, k) is not None)
        if have < len(t.turns) or k in tot.unknown:
            out.append(k)
    return out


def stats_row(t: Trajectory) -> dict[str, Any]:
    """The ``stats --json`` entry of one trajectory (tokens: sums over turns, null when none;
    ``partial`` names the token sums that are lower bounds, see ``partial_fields``)."""
    tot = t.totals
    return {
        "id": t.id,
        "source_format": t.source.format if t.source else None,
        "turns": tot.turns,
        "tool_calls": tot.tool_calls,
        "input_tokens": tot.input_tokens,
        "cached_tokens": tot.cached_tokens,
        "output_tokens": tot.output_tokens,
        "partial": partial_fields(t),
        "resolved": t.outcome.resolved,
    }


def stats_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums of the counts over trajectories; a token total is null when no trajectory has it,
    and ``partial`` names the totals that include a lower bound. ``trajectories`` counts rows,
    ``labelled`` those with a ``resolved`` label and ``resolved`` those labelled true (null when
    no row carries a label: "0 resolved" would be a claim the data does not make)."""
    out: dict[str, Any] = {"trajectories": len(rows)}
    for k in COUNT_KEYS:
        vals = [r[k] for r in rows if r[k] is not None]
        out[k] = sum(vals) if vals or k in ("turns", "tool_calls") else None
    out["partial"] = [k for k in COUNT_KEYS[2:] if any(k in r.get("partial", ()) for r in rows)]
    labelled = [r["resolved"] for r in rows if r["resolved"] is not None]
    out["labelled"] = len(labelled)
    out["resolved"] = sum(1 for v in labelled if v is True) if labelled else None
    return out


def _n(v: Any, partial: bool = False) -> str:
    return "–" if v is None else f"≥{v}" if partial else str(v)


def stats_table(rows: list[dict[str, Any]], totals: dict[str, Any]) -> Table:
    """The ``stats`` table: ids wrap instead of being cut, numbers right-aligned; a partial sum
    prints as ``≥N``."""
    table = Table(
        caption="in/cached/out: tokens (in includes cached); –: the source has no number; "
        "≥: a partial sum (some calls lack the count)"
    )
    table.add_column("id", overflow="fold")
    table.add_column("format", overflow="fold")
    for h in HEADERS:
        table.add_column(h, justify="right", no_wrap=True)
    table.add_column("resolved")
    for r in rows:
        part = r.get("partial", ())
        table.add_row(
            r["id"],
            r["source_format"],
            *(_n(r[k], k in part) for k in COUNT_KEYS),
            _n(r["resolved"]),
        )
    labels = totals["labelled"]
    table.add_row(
        f"total ({totals['trajectories']})",
        "",
        *(_n(totals[k], k in totals["partial"]) for k in COUNT_KEYS),
        f"{totals['resolved']} of {labels} labelled" if labels else "no labels",
        style="bold",
    )
    return table


def _clip(s: str | None, kind: str, full: bool = False) -> str:
    """``s`` cut to the ``LIMITS`` of ``kind``, with a note of what was left out."""
    if not s:
        return ""
    s = s.strip("\n")
    if full:
        return s
    max_lines, max_chars = LIMITS[kind]
    lines = s.split("\n")
    kept = "\n".join(lines[:max_lines])
    if len(kept) > max_chars:
        kept = kept[:max_chars]
    if len(kept) == len(s):
        return s
    rest = s[len(kept) :].count("\n")
    more = f"{rest} more line" if rest else f"{len(s) - len(kept)} more char"
    more += "" if (rest or len(s) - len(kept)) == 1 else "s"
    return f"{kept.rstrip()} … [{more}]"


def _usage(u: Usage | None) -> str:
    if u is None:
        return ""
    parts = [
        f"{label} {value}"
        for label, value in (
            ("in", u.input_tokens),
            ("cached", u.cached_tokens),
            ("out", u.output_tokens),
            ("reasoning", u.reasoning_tokens),
        )
        if value is not None
    ]
    return " · ".join(parts + [u.source or "source unknown"])


def _args(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments, default=str).decode()


def _turn_panel(turn: Turn, full: bool) -> Panel:
    parts: list[Any] = []
    if turn.reasoning:
        parts.append(
            Text("reasoning: ", style="bold dim")
            + Text(_clip(turn.reasoning, "reasoning", full), style="dim italic")
        )
    if turn.text:
        parts.append(Text(_clip(turn.text, "text", full)))
    for call in turn.tool_calls:
        label = call.command if call.command is not None else _args(call.arguments)
        parts.append(
            Text(f"▶ {call.name} [{call.kind}] ", style="bold cyan")
            + Text(_clip(label, "call", full))
        )
    for obs in turn.observations:
        flags = [
            f"exit {obs.exit_code}" if obs.exit_code is not None else "",
            "error" if obs.is_error else "",
            "timed out" if obs.timed_out else "",
        ]
        head = "◀ " + " · ".join(f for f in flags if f)
        bad = obs.is_error or obs.timed_out or obs.exit_code not in (None, 0)
        parts.append(
            Text(head.rstrip() + " ", style="red" if bad else "green")
            + Text(_clip(obs.text, "observation", full), style="dim")
        )
    step = f" · step {turn.step}" if turn.step is not None else ""
    subtitle = _usage(turn.usage)
    lp = turn.logprobs
    n_lp = len(lp.chosen or lp.token_ids or []) if lp is not None else 0
    if n_lp:
        subtitle = f"{subtitle} · logprobs {n_lp}" if subtitle else f"logprobs {n_lp}"
    return Panel(
        Group(*parts) if parts else Text("(no text, no calls)", style="dim"),
        title=f"turn {turn.index}{step}",
        subtitle=subtitle,
        title_align="left",
        subtitle_align="right",
    )


def _outcome(t: Trajectory) -> str:
    o = t.outcome
    out = _n(o.resolved)
    if o.reward is not None:
        out += f" (reward {o.reward})"
    if o.evaluator:
        out += f" by {o.evaluator}"
    status = o.details.get("exit_status")
    return out + (f" · exit status {status}" if status else "")


def render(t: Trajectory, console: Console, full: bool = False) -> None:
    """Header table, the instruction, then one panel per turn (texts clipped unless ``full``)."""
    head = Table.grid(padding=(0, 2))
    head.add_column()
    head.add_column(overflow="fold")
    tot = t.totals
    tokens = _usage(
        Usage(
            input_tokens=tot.input_tokens,
            cached_tokens=tot.cached_tokens,
            output_tokens=tot.output_tokens,
            reasoning_tokens=tot.reasoning_tokens,
            source=tot.usage_source,
        )
    )
    if tot.partial:
        tokens += " · partial (some calls have no count)"
    if tot.unknown:
        tokens += f" · unknown: {', '.join(tot.unknown)}"
    for label, value in (
        ("id", t.id),
        ("format", t.source.format if t.source else None),
        ("source", t.source.path if t.source else None),
        ("agent", t.agent),
        ("model", t.model),
        ("task", t.task_id),
        ("resolved", _outcome(t)),
        ("turns", f"{tot.turns} ({tot.tool_calls} tool calls)"),
        (
            "tokens",
            tokens if tot.usage_source or tot.input_tokens is not None or tot.unknown else None,
        ),
    ):
        head.add_row(Text(label, style="bold"), Text(_n(value)))
    console.print(Panel(head, title="trajectory", title_align="left"))
    if t.instruction:
        text = Text(_clip(t.instruction, "instruction", full))
        console.print(Panel(text, title="instruction", title_align="left"))
    for turn in t.turns:
        console.print(_turn_panel(turn, full))
