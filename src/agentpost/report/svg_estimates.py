"""SVG charts of estimates and counts: a forest plot of rates with confidence intervals, and a
shaded count matrix. Same conventions as ``report.svg`` (self-contained ``<svg class="plot">``).

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from agentpost.report.svg import MARGINS, color, fmt_num, nice_ticks, open_svg


def interval_chart(
    rows: Sequence[tuple[str, float | None, float | None, float | None]],
    *,
    title: str,
    lo: float = 0.0,
    hi: float = 1.0,
    width: int = 640,
) -> str:
    """A forest plot: one row per ``(label, value, ci_low, ci_high)``; NA rows say 'NA'."""
    row_h, x0, x1 = 22, 150, width - 60
    height = MARGINS["t"] + row_h * len(rows) + 30
    ticks = nice_ticks(lo, hi)

    def x_of(v: float) -> float:
        return x0 + (v - ticks[0]) / ((ticks[-1] - ticks[0]) or 1.0) * (x1 - x0)

    parts = open_svg(width, height, title)
    yb = MARGINS["t"] + row_h * len(rows)
    for t in ticks:
        parts.append(
            f'<line x1="{x_of(t):.1f}" x2="{x_of(t):.1f}" y1="{MARGINS["t"]}" y2="{yb}" stroke="#e4e4e4"/>'
        )
        parts.append(
            f'<text x="{x_of(t):.1f}" y="{yb + 14}" text-anchor="middle">{fmt_num(t)}</text>'
        )
    for i, (label, v, a, b) in enumerate(rows):
        y = MARGINS["t"] + row_h * i + row_h / 2
        parts.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        if v is None:
            parts.append(
                f'<text x="{x0 + 4}" y="{y + 4:.1f}" fill="#888">NA (no eligible cases)</text>'
            )
            continue
        if a is not None and b is not None:
            parts.append(
                f'<line x1="{x_of(a):.1f}" x2="{x_of(b):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{color(0)}" stroke-width="2"/>'
            )
        ci = f" [{fmt_num(a)}, {fmt_num(b)}]" if a is not None and b is not None else ""
        parts.append(
            f'<circle cx="{x_of(v):.1f}" cy="{y:.1f}" r="4" fill="{color(3)}">'
            f"<title>{escape(label)}: {fmt_num(v)}{ci}</title></circle>"
        )
        parts.append(f'<text x="{x1 + 6}" y="{y + 4:.1f}">{fmt_num(v)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def count_matrix(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    counts: Sequence[Sequence[int]],
    *,
    title: str,
    row_title: str = "",
    col_title: str = "",
) -> str:
    """A heat-shaded count table; ``counts[i][j]`` for row ``i``, column ``j``."""
    cw, ch, x0, y0 = 100, 34, 130, 66
    width = max(x0 + cw * len(col_labels) + 20, 7 * len(title) + 40)
    height = y0 + ch * len(row_labels) + 16
    top = max([c for r in counts for c in r] or [0]) or 1
    parts = open_svg(width, height, title)
    parts.append(
        f'<text x="{x0 + cw * len(col_labels) / 2:.1f}" y="{y0 - 26}" text-anchor="middle" '
        f'font-style="italic">{escape(col_title)}</text>'
    )
    parts.append(f'<text x="6" y="{y0 - 6}" font-style="italic">{escape(row_title)}</text>')
    for j, c in enumerate(col_labels):
        parts.append(
            f'<text x="{x0 + cw * (j + 0.5):.1f}" y="{y0 - 6}" text-anchor="middle">{escape(c)}</text>'
        )
    for i, r in enumerate(row_labels):
        y = y0 + ch * i
        parts.append(
            f'<text x="{x0 - 8}" y="{y + ch / 2 + 4:.1f}" text-anchor="end">{escape(r)}</text>'
        )
        for j in range(len(col_labels)):
            n = counts[i][j]
            shade = 0.08 + 0.8 * n / top
            parts.append(
                f'<rect x="{x0 + cw * j}" y="{y}" width="{cw - 2}" height="{ch - 2}" '
                f'fill="{color(0)}" fill-opacity="{shade:.2f}" stroke="#999"/>'
            )
            fill = "#fff" if shade > 0.5 else "#000"
            parts.append(
                f'<text x="{x0 + cw * (j + 0.5):.1f}" y="{y + ch / 2 + 4:.1f}" '
                f'text-anchor="middle" fill="{fill}" font-size="13">{n}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
