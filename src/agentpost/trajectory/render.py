"""Terminal rendering of one trajectory for ``agentpost show`` (rich), and the per-trajectory
counts that ``agentpost stats`` prints.

Layer: io.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentpost.trajectory.model import Trajectory, Turn

COUNT_KEYS = ("turns", "tool_calls", "input_tokens", "cached_tokens", "output_tokens")


def stats_row(t: Trajectory) -> dict[str, Any]:
    """The ``stats --json`` entry of one trajectory (tokens: sums over turns, null when none)."""
    tot = t.totals
    return {
        "id": t.id,
        "source_format": t.source.format if t.source else None,
        "turns": tot.turns,
        "tool_calls": tot.tool_calls,
        "input_tokens": tot.input_tokens,
        "cached_tokens": tot.cached_tokens,
        "output_tokens": tot.output_tokens,
        "resolved": t.outcome.resolved,
    }


def stats_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums of the counts over trajectories; a token total is null when no trajectory has it."""
    out: dict[str, Any] = {"trajectories": len(rows)}
    for k in COUNT_KEYS:
        vals = [r[k] for r in rows if r[k] is not None]
        out[k] = sum(vals) if vals or k in ("turns", "tool_calls") else None
    out["resolved"] = sum(1 for r in rows if r["resolved"] is True)
    return out


def _clip(s: str | None, n: int) -> str:
    if not s:
        return ""
    s = s.strip()
    return s if len(s) <= n else s[: n - 1] + "…"


def _turn_panel(turn: Turn, width: int) -> Panel:
    parts: list[Any] = []
    if turn.reasoning:
        parts.append(Text(_clip(turn.reasoning, width), style="dim italic"))
    if turn.text:
        parts.append(Text(_clip(turn.text, width)))
    for call in turn.tool_calls:
        label = call.command if call.command is not None else str(call.arguments)
        parts.append(
            Text(f"▶ {call.name} [{call.kind}] ", style="bold cyan") + Text(_clip(label, width))
        )
    for obs in turn.observations:
        flags = [
            f"exit={obs.exit_code}" if obs.exit_code is not None else "",
            "error" if obs.is_error else "",
            "timed out" if obs.timed_out else "",
        ]
        head = " ".join(f for f in flags if f)
        style = "red" if obs.is_error or (obs.exit_code not in (None, 0)) else "green"
        parts.append(Text(f"◀ {head} ", style=style) + Text(_clip(obs.text, width), style="dim"))
    u = turn.usage
    usage = ""
    if u is not None:
        usage = (
            f"in {u.input_tokens} (cached {u.cached_tokens}) · out {u.output_tokens} · {u.source}"
        )
    step = f" step {turn.step}" if turn.step is not None else ""
    return Panel(
        Group(*parts) if parts else Text("(empty)"),
        title=f"turn {turn.index}{step}",
        subtitle=usage,
        title_align="left",
        subtitle_align="right",
    )


def render(t: Trajectory, console: Console, width: int = 600) -> None:
    """Header table, then one panel per turn."""
    head = Table.grid(padding=(0, 2))
    for label, value in (
        ("id", t.id),
        ("format", t.source.format if t.source else None),
        ("agent", t.agent),
        ("model", t.model),
        ("task", t.task_id),
        ("resolved", t.outcome.resolved),
        ("turns", t.totals.turns),
        ("tool calls", t.totals.tool_calls),
        (
            "tokens",
            f"in {t.totals.input_tokens} (cached {t.totals.cached_tokens}) · out "
            f"{t.totals.output_tokens} · {t.totals.usage_source}",
        ),
    ):
        head.add_row(Text(label, style="bold"), Text(str(value)))
    console.print(Panel(head, title="trajectory", title_align="left"))
    if t.instruction:
        console.print(
            Panel(Text(_clip(t.instruction, width)), title="instruction", title_align="left")
        )
    for turn in t.turns:
        console.print(_turn_panel(turn, width))
