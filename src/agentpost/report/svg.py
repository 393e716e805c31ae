"""Hand-written SVG charts for the HTML report: bars, lines, intervals and a count matrix.

Every chart is a self-contained ``<svg class="plot">`` string (no scripts, no external fonts or
images), so the report opens offline and renders identically in any browser. We keep SVG by
hand rather than a plotting library: matplotlib gives static images no smaller or clearer than
these; interactive libraries (Plotly, Bokeh, Vega-Lite) need a 1-4 MB JavaScript runtime
inlined into every report plus a CSP exception for it, for interactions the report gets more
cheaply from native SVG: a tooltip per bar (``<title>``) and bars that are links to the
trajectory viewer (``links=``). The output stays small and deterministic (stable diffs, tests).

Defects this module guards against: an agent keeps one colour in every chart of a report
(``agent_colors`` assigns Okabe-Ito colours to agents for the whole report; other series draw
from a second palette, so a behaviour never wears an agent's colour); a zero bar is drawn as a
visible tick with a "0" label instead of vanishing; a chart with many categories shows the top
N and one "others" bar (``top_n``) instead of a hundred clipped labels.

Layer: pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from agentpost.report.palette import _AGENTS, PALETTE, agent_colors, series_color

__all__ = ["PALETTE", "agent_colors", "bar_chart", "color", "line_chart", "series_color", "top_n"]
_FONT = 'font-family="sans-serif" font-size="11"'
MARGINS = {"l": 62, "r": 14, "t": 30, "b": 46}  # plot margins in px
ROT_EXTRA = 96  # room under the axis for rotated category labels (22 characters at -40°)


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def top_n(
    categories: Sequence[str],
    series: dict[str, Sequence[float | None]],
    n: int,
    links: Sequence[str | None] | None = None,
) -> tuple[list[str], dict[str, list[float | None]], list[str | None] | None]:
    """The ``n`` categories with the largest sum over series, in their order, plus one
    "others (K, mean)" category holding each series' mean over the rest. Unchanged when there
    are at most ``n + 1`` categories."""
    cats = list(categories)
    if len(cats) <= n + 1:
        return cats, {k: list(v) for k, v in series.items()}, list(links) if links else None
    totals = [sum((series[k][i] or 0.0) for k in series) for i in range(len(cats))]
    keep = sorted(sorted(range(len(cats)), key=lambda i: -totals[i])[:n])
    rest = [i for i in range(len(cats)) if i not in set(keep)]
    out: dict[str, list[float | None]] = {}
    for k, vals in series.items():
        known = [vals[i] for i in rest if vals[i] is not None]
        out[k] = [vals[i] for i in keep] + [sum(known) / len(known) if known else None]  # type: ignore[operator]
    new_links = [links[i] for i in keep] + [None] if links else None
    return [cats[i] for i in keep] + [f"others ({len(rest)}, mean)"], out, new_links


def fmt_num(v: float | None, digits: int = 3) -> str:
    """A short human number: 1.2M, 34.5k, 0.123; ``None`` → 'NA'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NA"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.{max(digits - 2, 1)}f}M"
    if a >= 1e4:
        return f"{v / 1e3:.1f}k"
    if float(v).is_integer():
        return str(int(v))
    if a >= 1e3:  # 1750.4, not 1.75e+03
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering ``[lo, hi]``."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [start], start
    while t < hi - step * 1e-9:  # the last tick is at or above hi, so nothing is drawn off-axis
        t += step
        ticks.append(round(t, 12))
    return ticks


def open_svg(width: int, height: int, title: str) -> list[str]:
    return [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" {_FONT}>',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="13" '
        f'font-weight="bold">{escape(title)}</text>',
    ]


def _y_axis(parts: list[str], ticks: list[float], y_of, x0: float, x1: float, label: str) -> None:
    for t in ticks:
        y = y_of(t)
        parts.append(f'<line x1="{x0}" x2="{x1}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{fmt_num(t)}</text>')
    if label:
        parts.append(
            f'<text transform="translate(12,{(y_of(ticks[0]) + y_of(ticks[-1])) / 2:.1f}) '
            f'rotate(-90)" text-anchor="middle">{escape(label)}</text>'
        )


def _legend_per_row(names: Sequence[str], width: int) -> int:
    """How many legend entries fit on one row (at most 4; ~6 px per character)."""
    longest = max((len(str(n)) for n in names), default=1)
    return max(1, min(4, int((width - MARGINS["l"] - MARGINS["r"]) // (6 * min(longest, 40) + 24))))


def _legend_rows(names: Sequence[str], width: int) -> int:
    return math.ceil(len(names) / _legend_per_row(names, width))


def _legend(parts: list[str], names: Sequence[str], x: float, y: float, width: int) -> None:
    per_row = _legend_per_row(names, width)
    col_w = (width - x - MARGINS["r"]) / per_row
    chars = max(8, int((col_w - 16) / 6))
    shown = clip_all([str(n) for n in names], chars)
    for i, name in enumerate(names):
        xi = x + col_w * (i % per_row)
        yi = y + 14 * (i // per_row)
        parts.append(
            f'<rect x="{xi:.1f}" y="{yi - 9}" width="10" height="10" fill="{series_color(str(name), i)}"/>'
        )
        parts.append(f'<text x="{xi + 14:.1f}" y="{yi}">{_label_text(shown[i], str(name))}</text>')


def _clip(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= n else text[: n - 1] + "…"


def _clip_middle(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters in the middle (its end kept: versions and dates)."""
    if len(text) <= n:
        return text
    head = max(1, n // 3)
    return text[:head] + "…" + text[len(text) - (n - head - 1) :]


def clip_all(texts: Sequence[str], n: int) -> list[str]:
    """Each text cut to ``n`` characters (``_clip``); texts that would then read alike are cut
    in the middle instead, and printed whole if even that leaves them alike: two distinct names
    never print as one label."""
    out = [_clip(t, n) for t in texts]
    for fix in (lambda t: _clip_middle(t, n), lambda t: t):
        seen: dict[str, set[str]] = {}
        for t, c in zip(texts, out, strict=True):
            seen.setdefault(c, set()).add(t)
        out = [fix(t) if len(seen[c]) > 1 else c for t, c in zip(texts, out, strict=True)]
    return out


def _label_text(shown: str, full: str) -> str:
    """The text of a label, with the full name as its tooltip when it was cut."""
    tip = f"<title>{escape(full)}</title>" if shown != full else ""
    return f"{escape(shown)}{tip}"


def _cat_label(parts: list[str], shown: str, cat: str, x: float, y1: float, rotate: bool) -> None:
    """A category label under its bars (``shown``: ``cat`` as cut to fit); rotated when there
    are many categories."""
    if rotate:
        parts.append(
            f'<text transform="translate({x:.1f},{y1 + 10}) rotate(-40)" '
            f'text-anchor="end">{_label_text(shown, cat)}</text>'
        )
    else:
        parts.append(
            f'<text x="{x:.1f}" y="{y1 + 14}" text-anchor="middle">{_label_text(shown, cat)}</text>'
        )


def _rotated_extra(categories: Sequence[str]) -> int:
    """Room under the axis for labels rotated by -40° (sin 40° ≈ 0.64; ~6.2 px a character,
    at most 22 characters), so short labels leave no empty band above the legend."""
    longest = min(max((len(str(c)) for c in categories), default=0), 22)
    return min(ROT_EXTRA, int(longest * 6.2 * 0.64) + 12)


def _value_range(cols: list[list[float]], n: int, stacked: bool) -> tuple[float, float]:
    """(low, top) the axis must cover: bar tops, or stack sums when stacked; always spans 0."""
    values = (
        [sum(c[i] for c in cols) for i in range(n)] if stacked else [v for c in cols for v in c]
    )
    return min([0.0, *values]), max([0.0, *values])


def _bars(
    parts: list[str],
    categories: Sequence[str],
    series: dict[str, Sequence[float | None]],
    stacked: bool,
    x0: float,
    slot: float,
    y_of,
    links: Sequence[str | None] | None = None,
    by_category: bool = False,
) -> None:
    names = list(series)
    bw = slot * 0.8 / (1 if stacked else max(len(names), 1))
    for i, cat in enumerate(categories):
        base = 0.0
        href = links[i] if links and i < len(links) else None
        if href:
            parts.append(f'<a href="{escape(href, quote=True)}">')
        for j, n in enumerate(names):
            v = series[n][i]
            if v is None:
                continue
            lo = base if stacked else 0.0
            bx = x0 + slot * i + slot * 0.1 + (0 if stacked else j * bw)
            yt, yb = sorted((y_of(lo + v), y_of(lo)))
            fill = series_color(str(cat), i) if by_category else series_color(n, j)
            tip = f"<title>{escape(str(cat))} · {escape(n)}: {fmt_num(v)}</title>"
            if v == 0 and not stacked:  # a zero bar stays visible: a tick on the axis and a 0
                parts.append(
                    f'<rect x="{bx:.1f}" y="{yb - 2:.1f}" width="{max(bw - 1, 1):.1f}" height="2" '
                    f'fill="{fill}" stroke="#333" stroke-width="0.5">{tip}</rect>'
                )
                if bw >= 8:
                    parts.append(
                        f'<text x="{bx + bw / 2:.1f}" y="{yb - 4:.1f}" text-anchor="middle" '
                        f'font-size="9" fill="#333">0</text>'
                    )
            else:
                parts.append(
                    f'<rect x="{bx:.1f}" y="{yt:.1f}" width="{max(bw - 1, 1):.1f}" '
                    f'height="{max(yb - yt, 0.5):.1f}" fill="{fill}">{tip}</rect>'
                )
            base += v if stacked else 0.0
        if href:
            parts.append("</a>")


def bar_chart(
    categories: Sequence[str],
    series: dict[str, Sequence[float | None]],
    *,
    title: str,
    ylabel: str = "",
    stacked: bool = False,
    width: int = 640,
    height: int = 300,
    links: Sequence[str | None] | None = None,
) -> str:
    """Grouped (or stacked) bars. ``series[name][i]`` is the value for ``categories[i]``;
    ``None`` draws no bar. Shapes: ``len(series[name]) == len(categories)``. ``links[i]``: where
    a click on category i's bars leads (the trajectory viewer). With one series whose
    categories are agents, each bar wears its agent's colour."""
    names = list(series)
    rotate = len(categories) > 8
    extra = _rotated_extra(categories) if rotate else 0
    height += extra  # the plot area keeps its size
    legend_rows = _legend_rows(names, width) if len(names) > 1 else 0
    x0, x1 = MARGINS["l"] + (40 if rotate else 0), width - MARGINS["r"]
    y0, y1 = MARGINS["t"], height - MARGINS["b"] - 14 * legend_rows - extra
    cols = [[(v or 0.0) for v in series[n]] for n in names]
    low, top = _value_range(cols, len(categories), stacked)
    ticks = nice_ticks(low, top if top > 0 or low < 0 else 1.0)
    span = ticks[-1] - ticks[0] or 1.0

    def y_of(v: float) -> float:
        return y1 - (v - ticks[0]) / span * (y1 - y0)

    parts = open_svg(width, height, title)
    _y_axis(parts, ticks, y_of, x0, x1, ylabel)
    slot = (x1 - x0) / max(len(categories), 1)
    table = _AGENTS.get() or {}
    by_category = len(names) == 1 and any(str(c) in table for c in categories)
    _bars(parts, categories, series, stacked, x0, slot, y_of, links, by_category)
    every = max(1, math.ceil(len(categories) / 48))  # label every k-th bar when crowded
    cats = [str(c) for c in categories]
    shown = clip_all(cats, 22 if rotate else max(6, int(slot * every / 6.2)))
    for i, cat in enumerate(cats):
        if i % every == 0:
            _cat_label(parts, shown[i], cat, x0 + slot * (i + 0.5), y1, rotate)
    parts.append(f'<line x1="{x0}" x2="{x1}" y1="{y_of(0):.1f}" y2="{y_of(0):.1f}" stroke="#333"/>')
    if len(names) > 1:
        _legend(parts, names, x0, y1 + 32 + extra, width)
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    series: dict[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "",
    width: int = 640,
    height: int = 300,
    legend: bool = True,
) -> str:
    """Lines with point markers; ``series[name]`` is a list of ``(x, y)`` points."""
    names = list(series)
    show_legend = legend and 1 < len(names) <= 16
    bottom = MARGINS["b"] + (14 * _legend_rows(names, width) if show_legend else 0)
    x0, x1, y0, y1 = MARGINS["l"], width - MARGINS["r"], MARGINS["t"], height - bottom
    pts = [p for n in names for p in series[n]]
    xs, ys = [p[0] for p in pts] or [0.0], [p[1] for p in pts] or [0.0]
    xt = nice_ticks(min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1)
    yt = nice_ticks(min(0.0, min(ys)), max(ys) if max(ys) > 0 else 1.0)

    def x_of(v: float) -> float:
        return x0 + (v - xt[0]) / ((xt[-1] - xt[0]) or 1.0) * (x1 - x0)

    def y_of(v: float) -> float:
        return y1 - (v - yt[0]) / ((yt[-1] - yt[0]) or 1.0) * (y1 - y0)

    parts = open_svg(width, height, title)
    _y_axis(parts, yt, y_of, x0, x1, ylabel)
    for t in xt:
        parts.append(
            f'<text x="{x_of(t):.1f}" y="{y1 + 14}" text-anchor="middle">{fmt_num(t)}</text>'
        )
    parts.append(
        f'<text x="{(x0 + x1) / 2:.1f}" y="{y1 + 30}" text-anchor="middle">{escape(xlabel)}</text>'
    )
    for j, n in enumerate(names):
        path = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in series[n])
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{series_color(n, j)}" stroke-width="1.5">'
            f"<title>{escape(n)}</title></polyline>"
        )
        for x, y in series[n]:
            parts.append(
                f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="2" fill="{series_color(n, j)}"/>'
            )
    parts.append(f'<line x1="{x0}" x2="{x1}" y1="{y1}" y2="{y1}" stroke="#333"/>')
    if show_legend:
        _legend(parts, names, x0, y1 + 46, width)
    parts.append("</svg>")
    return "".join(parts)
