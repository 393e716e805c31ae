"""The comparison in words: a table for ``agentpost compare`` and a report section.

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.intervals import UNKNOWN
from agentpost.report.html import Section, note, table
from agentpost.report.svg import fmt_num

TITLE = "Compare runs: B − A with paired bootstrap intervals"
HEADER = ["metric", "A", "B", "B − A", "95% CI (or why none)", "tasks paired", "meaning"]


def _tasks(m: dict[str, Any]) -> str:
    return str(m["pairs"]) if m.get("paired", True) else f"unpaired ({m['only_a']} | {m['only_b']})"


def _ci(m: dict[str, Any]) -> str:
    """``[low, high]``, or why there is no interval (too few tasks, no spread)."""
    if m["ci"]:
        return f"[{fmt_num(m['ci'][0])}, {fmt_num(m['ci'][1])}]"
    return m.get("ci_note") or UNKNOWN


def rows(doc: dict[str, Any]) -> list[list[Any]]:
    return [[m["metric"], m["a"], m["b"], m["delta"], _ci(m), _tasks(m), m["explain"]]
            for m in doc["metrics"]]  # fmt: skip


def lines(doc: dict[str, Any]) -> list[str]:
    out = [f"A = {doc['a']}", f"B = {doc['b']}",
           f"paired by {doc['paired_by']}, {doc['n_boot']} bootstrap resamples, seed {doc['seed']}"]  # fmt: skip
    w = max((len(m["metric"]) for m in doc["metrics"]), default=6)
    out.append(f"{'metric':<{w}}  {'A':>8}  {'B':>8}  {'B − A':>8}  {'tasks':<14}  95% CI")
    for m in doc["metrics"]:
        out.append(f"{m['metric']:<{w}}  {fmt_num(m['a']):>8}  {fmt_num(m['b']):>8}  "
                   f"{fmt_num(m['delta']):>8}  {_tasks(m):<14}  {_ci(m)}")  # fmt: skip
    paired = [m for m in doc["metrics"] if m.get("paired", True)]
    if ({m["only_a"] for m in paired} | {m["only_b"] for m in paired}) - {0}:
        out.append("tasks only one side ran are left out of the pairs")
    out += [f"unpaired: {x}" for x in sorted({m["why"] for m in doc["metrics"] if m.get("why")})]
    if not doc["metrics"]:
        out.append("no metric in common: the two sides measured nothing alike")
    return out


def body(doc: dict[str, Any]) -> str:
    head = (f"<h3>A = {escape(doc['a'])}; B = {escape(doc['b'])}</h3>"
            + note("Each delta is B − A over the tasks both ran; the interval redraws those "
                   "tasks with replacement (a paired bootstrap), so it reflects task-to-task "
                   "variation. An interval that excludes 0 is a difference this sample supports."))  # fmt: skip
    if not doc["metrics"]:
        return head + '<p class="skip">No metric in common: the two sides share no task.</p>'
    return head + table(HEADER, rows(doc), left=1)


def section(docs: list[dict[str, Any]], title: str = TITLE, key: str = "compare") -> Section | None:
    if not docs:
        return None
    prov = [f"agentpost.report.compare, {d['n_boot']} paired resamples by task, seed {d['seed']}"
            for d in docs[:1]]  # fmt: skip
    return Section(key, title, "".join(body(d) for d in docs), provenance=prov)
