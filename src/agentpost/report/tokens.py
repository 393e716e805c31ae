"""Report section: where the tokens go, per trajectory and per turn, from canonical trajectories.

Token use is read straight from each turn's recorded usage (input includes cached prompt tokens,
as in HERO b.2); nothing is estimated here. A trajectory whose source has no usage shows 'NA'.
Trajectories are listed per model, by task. The per-turn chart draws one line per trajectory when
there are at most 8, otherwise the mean per turn index over each model's trajectories (the palette
has 8 colours; more lines could not be told apart).

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentpost.intervals import UNKNOWN
from agentpost.report.html import Section, capped, details, not_run, note, producer_line, table
from agentpost.report.svg import bar_chart, line_chart, top_n
from agentpost.trajectory.model import Trajectory

TITLE = "Token use per trajectory and per turn"
MAX_LINES = 8  # per-turn chart: lines beyond the palette's 8 colours are ambiguous
MAX_BARS = 40  # per-trajectory chart: the top 40 by tokens and one "others" bar; the table has all


def _label(t: Trajectory) -> str:
    who = (t.model or t.agent or UNKNOWN).split("/")[-1]
    return f"{t.task_id or t.id}/{who}"


def _order(t: Trajectory) -> tuple[str, str, str]:
    """Charts and tables list a model's trajectories together, by task."""
    return (t.model or t.agent or "", t.task_id or "", t.id)


def per_turn_tokens(t: Trajectory) -> list[tuple[int, int | None, int | None, int | None]]:
    """Per turn ``(index, input_tokens, cached_tokens, output_tokens)``; None where unrecorded."""
    out = []
    for turn in t.turns:
        u = turn.usage
        out.append((turn.index, u and u.input_tokens, u and u.cached_tokens, u and u.output_tokens))
    return out


def _rows(trajs: Sequence[Trajectory]) -> list[list[Any]]:
    rows = []
    for t in trajs:
        tot = t.totals
        total = None
        if tot.input_tokens is not None or tot.output_tokens is not None:
            total = (tot.input_tokens or 0) + (tot.output_tokens or 0)
        rows.append(
            [
                t.id,
                t.task_id,
                t.agent or t.model,
                tot.turns,
                tot.tool_calls,
                tot.input_tokens,
                tot.cached_tokens,
                tot.output_tokens,
                total,
                t.outcome.resolved,
                tot.usage_source,
            ]
        )
    return rows


def _per_trajectory_chart(trajs: Sequence[Trajectory]) -> str:
    cats = [_label(t) for t in trajs]
    uncached, cached, out = [], [], []
    for t in trajs:
        inp, c = t.totals.input_tokens, t.totals.cached_tokens
        uncached.append(None if inp is None else inp - (c or 0))
        cached.append(c)
        out.append(t.totals.output_tokens)
    series = {"input, not cached": uncached, "input, cached": cached, "output": out}
    links = [f"#traj={t.id}" for t in trajs]
    cats, series, links = top_n(cats, series, MAX_BARS, links)
    more = f", the {MAX_BARS} largest of {len(trajs)}" if len(trajs) > MAX_BARS + 1 else ""
    return bar_chart(
        cats,
        series,
        title=f"Tokens per trajectory{more} (click a bar to open it)",
        ylabel="tokens",
        stacked=True,
        width=900,
        links=links,
    )


def _turn_total(t: Trajectory) -> list[tuple[int, float]]:
    """``(turn index, input + output tokens)`` for the turns with recorded usage."""
    return [
        (i, float((a or 0) + (o or 0)))
        for i, a, _, o in per_turn_tokens(t)
        if a is not None or o is not None
    ]


def mean_per_turn(trajs: Sequence[Trajectory]) -> list[tuple[float, float]]:
    """Mean tokens of turn ``i`` over the trajectories that reached turn ``i`` (with usage)."""
    sums: dict[int, list[float]] = {}
    for t in trajs:
        for i, v in _turn_total(t):
            sums.setdefault(i, []).append(v)
    return [(float(i), sum(vs) / len(vs)) for i, vs in sorted(sums.items())]


def _per_turn_chart(trajs: Sequence[Trajectory]) -> str:
    """One line per trajectory when there are few; otherwise one line per model (the mean over
    its trajectories), so every line keeps a colour of its own."""
    series: dict[str, list[tuple[float, float]]] = {}
    by_model: dict[str, list[Trajectory]] = {}
    for t in trajs:
        by_model.setdefault(t.model or t.agent or UNKNOWN, []).append(t)
    if len(trajs) <= MAX_LINES:
        series = {_label(t): [(float(i), v) for i, v in _turn_total(t)] for t in trajs}
        title = "Tokens per turn (input + output of each model call)"
    else:
        series = {
            f"{m} ({len(ts)})": mean_per_turn(ts) for m, ts in list(by_model.items())[:MAX_LINES]
        }
        title = "Tokens per turn, mean over each model's trajectories (input + output)"
    return line_chart(
        {k: v for k, v in series.items() if v},
        title=title,
        xlabel="turn index",
        ylabel="tokens",
        width=900,
        height=340,
    )


HEADER = (
    "trajectory",
    "task",
    "model",
    "turns",
    "tool calls",
    "input",
    "cached",
    "output",
    "total",
    "resolved",
    "usage source",
)


def _charts(files: Sequence[tuple[str, Sequence[Trajectory]]], with_usage: list[Trajectory]) -> str:
    parts = []
    if with_usage:
        parts.append(
            f'<div class="plots">{_per_trajectory_chart(with_usage)}'
            f"{_per_turn_chart(with_usage)}</div>"
        )
    if len(with_usage) > MAX_BARS + 1:
        parts.append(
            note(
                f"The per-trajectory chart shows the {MAX_BARS} trajectories with most tokens "
                f"and the mean of the other {len(with_usage) - MAX_BARS}; the viewer lists all."
            )
        )
    models = {t.model or t.agent or UNKNOWN for t in with_usage}
    if len(with_usage) > MAX_LINES and len(models) > MAX_LINES:
        parts.append(
            note(f"The per-turn chart shows the first {MAX_LINES} of {len(models)} models.")
        )
    for src, ts in files:
        if all(t.totals.input_tokens is None for t in ts):
            parts.append(
                note(
                    f"{src}: these {len(ts)} trajectories carry no token usage (their "
                    "source recorded none), so they are not in the charts."
                )
            )
    return "".join(parts)


def _provenance(files: Sequence[tuple[str, Sequence[Trajectory]]]) -> list[str]:
    """One line per distinct producer block in each file (at most 8 per file)."""
    prov = []
    for src, ts in files:
        seen: dict[str, dict] = {}
        for t in ts:
            p = t.producer.model_dump()
            seen.setdefault(repr(sorted(p.items(), key=str)), p)
        prov += [
            producer_line(f"{src} ({len(ts)} trajectories)", p, ts[0].format)
            for p in list(seen.values())[:8]
        ]
    return prov


def render(
    files: Sequence[tuple[str, Sequence[Trajectory]]], notes: dict[str, str] | None = None
) -> Section:
    """``files``: (source name, its trajectories) for each canonical JSONL file found.
    ``notes``: source name → a remark on that file (e.g. 'a loopback fake model'), printed above
    the charts; files with a remark are listed after the others."""
    notes = notes or {}
    files = sorted(
        ((src, sorted(ts, key=_order)) for src, ts in files), key=lambda f: f[0] in notes
    )
    trajs = [t for _, ts in files for t in ts]
    if not trajs:
        return not_run("tokens", TITLE, "no canonical trajectories (*.jsonl) in the run directory")
    with_usage = [t for t in trajs if t.totals.input_tokens is not None]
    remarks = "".join(note(f"{src}: {notes[src]}") for src, _ in files if src in notes)
    listed, cut = capped(_rows(trajs), lambda r: r[8], "trajectories with most tokens",
                         "the trajectory viewer lists all, sortable by tokens")  # fmt: skip
    body = (
        remarks
        + _charts(files, with_usage)
        + cut
        + details(f"Per trajectory ({len(trajs)} trajectories)", table(HEADER, listed, left=3))
    )
    return Section("tokens", TITLE, body, provenance=_provenance(files))
