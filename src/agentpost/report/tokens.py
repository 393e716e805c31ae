"""Report section: where the tokens go, per trajectory and per turn, from canonical trajectories.

Token use is read straight from each turn's recorded usage (input includes cached prompt tokens,
as in HERO b.2); nothing is estimated here. A trajectory whose source has no usage shows 'NA'.
Trajectories are listed per model, by task. The per-turn chart draws one line per trajectory when
there are at most ``MAX_LINES``, otherwise the mean per turn index over each model's
trajectories; past ``MAX_LINES`` models, the costliest ``MAX_LINES - 1`` (by mean tokens per
trajectory) keep their own line and the others are pooled into one, named with their count
(never silently dropped).

``TokenStats`` gathers what the section needs one trajectory at a time (a table row each, and
per-turn sums per model), so a run of any size is read once and never held.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentpost.intervals import UNKNOWN
from agentpost.report.html import Section, capped, details, not_run, note, producer_line, table
from agentpost.report.palette import short
from agentpost.report.svg import bar_chart, line_chart, top_n
from agentpost.trajectory.model import Trajectory

TITLE = "Token use per trajectory and per turn"
MAX_LINES = 12  # per-turn chart: at most this many lines (models beyond are pooled into one)
MAX_BARS = 40  # per-trajectory chart: the top 40 by tokens and one "others" bar
HEADER = ("trajectory", "task", "model", "turns", "tool calls", "input", "cached", "output",
          "total", "resolved", "usage source")  # fmt: skip


def _who(t: Trajectory) -> str:
    return t.model or t.agent or UNKNOWN


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


def _row(t: Trajectory) -> list[Any]:
    tot = t.totals
    total = None
    if tot.input_tokens is not None or tot.output_tokens is not None:
        total = (tot.input_tokens or 0) + (tot.output_tokens or 0)
    return [t.id, t.task_id, t.agent or t.model, tot.turns, tot.tool_calls, tot.input_tokens,
            tot.cached_tokens, tot.output_tokens, total, t.outcome.resolved, tot.usage_source]  # fmt: skip


class TokenStats:
    """What the section shows, gathered one trajectory at a time (``add(src, t)``): per file
    its count, trajectories with usage and producer blocks; per trajectory one table row; per
    model the per-turn token sums; the per-turn points of the first ``MAX_LINES + 1``
    trajectories with usage (their own lines when there are no more)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}
        self.rows: list[tuple[str, tuple, str, list[Any]]] = []  # (src, order, model, row)
        self.turns: dict[str, dict[int, list[float]]] = {}  # model → turn → [sum, count]
        self.tokens: dict[str, list[float]] = {}  # model → [Σ total tokens, trajectories]
        self.first: list[tuple[str, list[tuple[float, float]]]] = []

    def add(self, src: str, t: Trajectory) -> None:
        f = self.files.setdefault(src, {"n": 0, "usage": 0, "producers": {}, "format": t.format})
        f["n"] += 1
        if len(f["producers"]) < 8:
            p = t.producer.model_dump()
            f["producers"].setdefault(repr(sorted(p.items(), key=str)), p)
        row = _row(t)
        self.rows.append((src, _order(t), _who(t), row))
        if t.totals.input_tokens is None:
            return
        f["usage"] += 1
        points = _turn_total(t)
        sums = self.turns.setdefault(_who(t), {})
        for i, v in points:
            s = sums.setdefault(i, [0.0, 0])
            s[0] += v
            s[1] += 1
        spent = self.tokens.setdefault(_who(t), [0.0, 0])
        spent[0] += row[8] or 0
        spent[1] += 1
        if len(self.first) <= MAX_LINES:
            self.first.append((f"{t.task_id or t.id}/{short(_who(t))}",
                               [(float(i), v) for i, v in points]))  # fmt: skip

    def n(self) -> int:
        return sum(f["n"] for f in self.files.values())


def _usage_rows(rows: list[tuple[str, tuple, str, list[Any]]]) -> list[tuple[str, list[Any]]]:
    return [(m, r) for _, _, m, r in rows if r[5] is not None]


def _per_trajectory_chart(with_usage: list[tuple[str, list[Any]]]) -> str:
    cats = [f"{r[1] or r[0]}/{short(m)}" for m, r in with_usage]
    series = {"input, not cached": [r[5] - (r[6] or 0) for _, r in with_usage],
              "input, cached": [r[6] for _, r in with_usage],
              "output": [r[7] for _, r in with_usage]}  # fmt: skip
    links = [f"#traj={r[0]}" for _, r in with_usage]
    cats, series, links = top_n(cats, series, MAX_BARS, links)
    n = len(with_usage)
    more = f", the {MAX_BARS} largest of {n}" if n > MAX_BARS + 1 else ""
    return bar_chart(cats, series, title=f"Tokens per trajectory{more} (click a bar to open it)",
                     ylabel="tokens", stacked=True, width=900, links=links)  # fmt: skip


def _mean_line(sums: dict[int, list[float]]) -> list[tuple[float, float]]:
    return [(float(i), s / c) for i, (s, c) in sorted(sums.items())]


def _per_turn_chart(stats: TokenStats, n_usage: int) -> tuple[str, str]:
    """The chart, and a note when models were pooled."""
    if n_usage <= MAX_LINES:
        series = dict(stats.first)
        title = "Tokens per turn (input + output of each model call)"
        return line_chart({k: v for k, v in series.items() if v}, title=title,
                          xlabel="turn index", ylabel="tokens", width=900, height=340), ""  # fmt: skip
    models = list(stats.turns)
    pooled: list[str] = []
    if len(models) > MAX_LINES:  # the costliest keep a line; the rest are pooled, never dropped
        by_cost = sorted(models, key=lambda m: (-stats.tokens[m][0] / stats.tokens[m][1], m))
        models, pooled = by_cost[: MAX_LINES - 1], by_cost[MAX_LINES - 1 :]
    series = {f"{short(m)} ({int(stats.tokens[m][1])})": _mean_line(stats.turns[m]) for m in models}
    if pooled:
        sums: dict[int, list[float]] = {}
        for m in pooled:
            for i, (s, c) in stats.turns[m].items():
                acc = sums.setdefault(i, [0.0, 0])
                acc[0] += s
                acc[1] += c
        n = int(sum(stats.tokens[m][1] for m in pooled))
        series[f"{len(pooled)} other models, pooled ({n})"] = _mean_line(sums)
    title = "Tokens per turn, mean over each model's trajectories (input + output)"
    chart = line_chart({k: v for k, v in series.items() if v}, title=title, xlabel="turn index",
                       ylabel="tokens", width=900, height=340)  # fmt: skip
    why = (note(f"The per-turn chart has one line for each of the {MAX_LINES - 1} models with "
                f"most tokens per trajectory; the other {len(pooled)} models "
                f"({', '.join(sorted(pooled))}) share one line, their trajectories pooled.")
           if pooled else "")  # fmt: skip
    return chart, why


def _charts(stats: TokenStats, files: list[str]) -> str:
    with_usage = _usage_rows(stats.rows)
    parts = []
    if with_usage:
        turn_chart, pooled = _per_turn_chart(stats, len(with_usage))
        parts.append(f'<div class="plots">{_per_trajectory_chart(with_usage)}{turn_chart}</div>')
        parts.append(pooled)
    if len(with_usage) > MAX_BARS + 1:
        parts.append(note(f"The per-trajectory chart shows the {MAX_BARS} trajectories with most "
                          f"tokens and the mean of the other {len(with_usage) - MAX_BARS}; the "
                          "viewer lists all."))  # fmt: skip
    for src in files:
        f = stats.files[src]
        if not f["usage"]:
            parts.append(note(f"{src}: these {f['n']} trajectories carry no token usage (their "
                              "source recorded none), so they are not in the charts."))  # fmt: skip
    return "".join(parts)


def _provenance(stats: TokenStats, files: list[str]) -> list[str]:
    """One line per distinct producer block in each file (at most 8 per file)."""
    out = []
    for src in files:
        f = stats.files[src]
        out += [producer_line(f"{src} ({f['n']} trajectories)", p, f["format"])
                for p in f["producers"].values()]  # fmt: skip
    return out


def render(stats: TokenStats, notes: dict[str, str] | None = None) -> Section:
    """``stats``: the trajectories of every canonical JSONL file found, gathered. ``notes``:
    source name → a remark on that file (e.g. 'a loopback fake model'), printed above the
    charts; files with a remark are listed after the others."""
    notes = notes or {}
    if not stats.n():
        return not_run("tokens", TITLE, "no canonical trajectories (*.jsonl) in the run directory")
    files = sorted(stats.files, key=lambda src: src in notes)  # stable: found order otherwise
    place = {src: k for k, src in enumerate(files)}
    stats.rows.sort(key=lambda x: (place[x[0]], x[1]))
    remarks = "".join(note(f"{src}: {notes[src]}") for src in files if src in notes)
    listed, cut = capped([r for _, _, _, r in stats.rows], lambda r: r[8],
                         "trajectories with most tokens",
                         "the trajectory viewer lists all, sortable by tokens")  # fmt: skip
    body = (
        remarks
        + _charts(stats, files)
        + cut
        + details(f"Per trajectory ({stats.n()} trajectories)", table(HEADER, listed, left=3))
    )
    return Section("tokens", TITLE, body, provenance=_provenance(stats, files))
