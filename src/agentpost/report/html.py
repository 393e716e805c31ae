"""The report page: one self-contained HTML document built from independent sections.

A ``Section`` is what every area renderer returns (title, body HTML, provenance notes). The page
inlines its CSS and carries a Content-Security-Policy that forbids every network fetch and every
script but the ones the page inlines itself, each admitted by its SHA-256 hash (the trajectory
viewer's), so a report that tried to load anything, or a script smuggled in through trajectory
text, would fail loudly in the browser (the Chromium test counts such console errors) instead of
quietly depending on the network.

Layer: pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from agentpost.report.svg import fmt_num

FORMAT = "agentpost.report/1"

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3b57;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px 0;font-size:22px}
header p{margin:0;opacity:.85;font-size:13px}
nav{padding:8px 28px;background:#eef2f6;font-size:13px}
nav a{margin-right:14px;color:#1f3b57}
main{padding:8px 28px 40px 28px;max-width:1240px}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:14px 18px;margin:18px 0}
section h2{margin-top:0;font-size:18px}
h3{font-size:15px;margin:16px 0 6px 0}
table{border-collapse:collapse;font-size:12.5px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f2f4f7}
td.l,th.l{text-align:left}
td:not(.l){white-space:nowrap}
.note{color:#555;font-size:13px;background:#fff8e1;border-left:3px solid #e6a700;padding:6px 10px}
.caveat{color:#5a1d00;background:#fdecea;border-left-color:#c62828;font-weight:600}
.skip{color:#666;font-style:italic}
.plots{display:flex;flex-wrap:wrap;gap:10px}
.prov{font-size:11.5px;color:#555;border-top:1px dashed #ccc;margin-top:12px;padding-top:6px}
.prov code{font-size:11px;word-break:break-all}
details{margin:6px 0}
.tw{overflow-x:auto;max-width:100%}
p.src{font-size:12px;color:#555;margin-top:2px}
summary{cursor:pointer;color:#1f3b57;font-size:13px}
"""


@dataclass
class Section:
    """One area of the report. ``present`` is False when the area was not run (rendered as a
    short note); ``provenance`` holds one line per source of numbers in the section."""

    key: str
    title: str
    body: str = ""
    present: bool = True
    provenance: list[str] = field(default_factory=list)
    css: str = ""  # extra style rules the section needs


def not_run(key: str, title: str, why: str) -> Section:
    return Section(key, title, f'<p class="skip">Not run: {escape(why)}</p>', present=False)


def note(text: str, *, strong: bool = False) -> str:
    """A highlighted remark; ``strong`` for a caveat that qualifies every number after it."""
    return f'<p class="{"note caveat" if strong else "note"}">{escape(text)}</p>'


def cell(v: Any) -> str:
    if v is None:
        return "NA"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int | float):
        return fmt_num(v)
    return escape(str(v))


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, left: int = 1) -> str:
    """An HTML table; the first ``left`` columns are left-aligned labels."""
    th = "".join(
        f'<th class="{"l" if i < left else ""}">{escape(h)}</th>' for i, h in enumerate(header)
    )
    body = []
    for r in rows:
        tds = "".join(
            f'<td class="{"l" if i < left else ""}">{cell(v)}</td>' for i, v in enumerate(r)
        )
        body.append(f"<tr>{tds}</tr>")
    rows_html = "".join(body)
    return f'<div class="tw"><table><thead><tr>{th}</tr></thead><tbody>{rows_html}</tbody></table></div>'


MAX_ROWS = 500  # a table lists at most this many rows (the viewer lists every trajectory)


def capped(rows: list, key: Any, what: str, where: str) -> tuple[list, str]:
    """``rows`` when there are at most ``MAX_ROWS``; else the ``MAX_ROWS`` largest by ``key``
    (a function of a row; None counts as smallest), in their order, and a note saying so:
    ``what`` names the rows and the ordering, ``where`` where to see them all."""
    if len(rows) <= MAX_ROWS:
        return rows, ""

    def rank(i: int) -> tuple:
        v = key(rows[i])
        return (v is None, -(v or 0), i)

    keep = sorted(sorted(range(len(rows)), key=rank)[:MAX_ROWS])
    return [rows[i] for i in keep], note(
        f"The table lists the {MAX_ROWS} {what} of {len(rows)}; {where}."
    )


def details(summary: str, inner: str, *, open_: bool = False) -> str:
    """A collapsible block (no script needed): long tables stay one click away."""
    flag = " open" if open_ else ""
    return f"<details{flag}><summary>{escape(summary)}</summary>{inner}</details>"


def _shorten(v: Any, limit: int = 160) -> Any:
    """Long strings (a system prompt among the arguments) cut to ``limit`` characters; an
    absolute local path shown by its last part (``…/demo``): a report names no local path."""
    if isinstance(v, str) and v.startswith("/") and "\n" not in v and len(v) < 4096:
        return "…/" + v.rstrip("/").rsplit("/", 1)[-1]
    if isinstance(v, str) and len(v) > limit:
        return v[:limit] + f"… ({len(v)} chars)"
    if isinstance(v, dict):
        return {k: _shorten(x, limit) for k, x in v.items()}
    if isinstance(v, list):
        return [_shorten(x, limit) for x in v]
    return v


def producer_line(source: str, producer: dict[str, Any] | None, fmt: str | None = None) -> str:
    """'file — name version, args {...}' for a footnote; says so when a file has no producer."""
    if not producer:
        return f"{source}: no producer block in the file"
    args = json.dumps(_shorten(producer.get("args", {})), sort_keys=True, default=str)
    f = f" [{fmt}]" if fmt else ""
    return f"{source}{f}: {producer.get('name', '?')} {producer.get('version', '?')}, args {args}"


def _section_html(s: Section) -> str:
    prov = ""
    if s.provenance:
        items = "".join(f"<li><code>{escape(p)}</code></li>" for p in s.provenance)
        prov = f'<div class="prov">Produced by:<ul>{items}</ul></div>'
    return f'<section id="{escape(s.key)}"><h2>{escape(s.title)}</h2>{s.body}{prov}</section>'


def page(
    title: str,
    subtitle: str,
    sections: Sequence[Section],
    report_producer: dict[str, Any],
    *,
    scripts: Sequence[tuple[str, str]] = (),
    own_files: bool = False,
) -> str:
    """The whole document. ``report_producer`` is the report's own producer block.
    ``scripts``: ``(code, csp_hash)`` pairs, inlined at the end of the body and admitted by the
    Content-Security-Policy by their hash only (no other script can run). ``own_files``: the
    page also runs scripts from its own folder (the viewer's data beside it: 'self', which for a
    page opened from disk is the file: scheme; still nothing from the network)."""
    csp = CSP
    if scripts:
        csp += "; script-src " + " ".join(h for _, h in scripts) + (" 'self'" if own_files else "")
    extra_css = "".join(s.css for s in sections if s.css)
    tail = "".join(f"<script>{code}</script>" for code, _ in scripts)
    nav = "".join(f'<a href="#{escape(s.key)}">{escape(s.title)}</a>' for s in sections)
    body = "".join(_section_html(s) for s in sections)
    meta = escape(json.dumps({"format": FORMAT, "producer": report_producer}, sort_keys=True))
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="agentpost-report" content="{meta}">'
        f"<title>{escape(title)}</title><style>{CSS}{extra_css}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>"
        f"<nav>{nav}</nav><main>{body}"
        f'<p class="prov">Rendered by {escape(report_producer.get("name", "?"))} '
        f"{escape(str(report_producer.get('version', '?')))}, args "
        f"<code>{escape(json.dumps(report_producer.get('args', {}), sort_keys=True))}</code>"
        f"</p></main>{tail}</body></html>\n"
    )
