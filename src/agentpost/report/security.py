"""Report section: SecureVibe grading and behaviour attribution (spec b.2, b.3, b.9).

Reads a grade document (``agentpost.security.grade/1``: per agent the ``security.metrics``
summary, FuncPass, SecPass, gap, and its per-CWE table), the attribution document
(``agentpost.security.attribution/1``: per agent FuncPass/SecPass and behaviour rates with Wilson
intervals, paired-difference r, phi) and, when present, ``security check`` output (reference
implementations). Rates are shown as the files hold them; nothing is recomputed.

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.report.html import Section, details, not_run, note, producer_line, table
from agentpost.report.svg import bar_chart
from agentpost.report.svg_estimates import interval_chart

TITLE = "Security (SecureVibe)"
BEHAVIOURS = ("planning", "coding", "testing")
LEVELS = ("target_aligned", "generic", "any")


def _cwe_key(c: str) -> tuple[int, str]:
    """CWE-22 before CWE-121 (numeric order); anything else after, by name."""
    tail = str(c).rsplit("-", 1)[-1]
    return (int(tail), str(c)) if tail.isdigit() else (1 << 30, str(c))


def _cwe_part(agents: dict[str, Any], per_agent_cwe: dict[str, Any], pooled: dict[str, Any]) -> str:
    tables = per_agent_cwe or ({"all agents": pooled} if pooled else {})
    cwes = sorted({c for pc in tables.values() for c in (pc or {})}, key=_cwe_key)
    if not cwes:
        return note("No per-CWE table in the file.")
    series = {}
    for a, pc in tables.items():
        series[f"{a} FuncPass"] = [((pc or {}).get(c) or {}).get("func_pass") for c in cwes]
        series[f"{a} SecPass"] = [((pc or {}).get(c) or {}).get("sec_pass") for c in cwes]
    chart = bar_chart(
        cwes,
        series,
        title="FuncPass and SecPass per CWE",
        ylabel="pass rate",
        width=900,
        height=340,
    )
    rows = [
        [
            a,
            c,
            *[
                ((pc or {}).get(c) or {}).get(k)
                for k in ("n", "func_pass", "sec_pass", "security_gap")
            ],
        ]
        for a, pc in tables.items()
        for c in cwes
    ]
    return chart + details(
        f"Per CWE and agent ({len(rows)} rows)",
        table(["agent", "CWE", "samples", "FuncPass", "SecPass", "gap"], rows, left=2),
    )


def _summary_part(data: dict[str, Any]) -> str:
    """A ``security demo`` summary: ``metrics`` {agent: summary}, pooled ``per_cwe`` and, from
    ``agentpost demo``, ``per_agent_cwe`` {agent: per-CWE summary}."""
    agents = data.get("metrics") or {}
    cols = ("n", "aborted", "func_pass", "sec_pass", "security_gap", "insec")
    heads = ("samples", "aborted", "FuncPass", "SecPass", "gap (Func − Sec)", "InSec (gap / Func)")
    out = table(
        ["agent", *heads], [[a, *[(b or {}).get(c) for c in cols]] for a, b in agents.items()]
    )
    return out + _cwe_part(agents, data.get("per_agent_cwe") or {}, data.get("per_cwe") or {})


def _grades_part(grades: list[tuple[str, dict[str, Any]]]) -> str:
    """Single-candidate grades (``agentpost security grade --json``)."""
    cols = ("status", "func", "sec", "reward", "aborted", "patch_applied")
    return table(
        ["file", "task", *cols],
        [[src, g.get("task_id"), *[g.get(c) for c in cols]] for src, g in grades],
        left=2,
    )


def _rate(v: Any) -> tuple[float | None, float | None, float | None]:
    if not isinstance(v, dict):
        return (v, None, None) if isinstance(v, int | float) else (None, None, None)
    ci = v.get("ci95") or v.get("ci") or [None, None]
    return v.get("rate", v.get("value")), ci[0], ci[1]


def _attribute_part(data: dict[str, Any]) -> str:
    agents = data.get("agents") or {}
    plots, rows = [], []
    for agent, block in agents.items():
        beh = block.get("func_correct") or {}
        plot_rows = []
        for b in BEHAVIOURS:
            for level in LEVELS:
                v = (beh.get(b) or {}).get(level)
                if v is None:
                    continue
                rate, lo, hi = _rate(v)
                plot_rows.append((f"{b} · {level.replace('_', '-')}", rate, lo, hi))
                rows.append([agent, b, level, v.get("k"), v.get("n"), rate, lo, hi])
        if plot_rows:
            n = block.get("n_func_correct")
            plots.append(
                interval_chart(
                    plot_rows, title=f"{agent}: {n} functionally correct (95% CI)", width=540
                )
            )
    if not rows:
        return note("The attribution file has no behaviour rates.")
    out = f'<div class="plots">{"".join(plots)}</div>'
    out += details(
        f"Behaviour rates ({len(rows)} rows)",
        table(["agent", "behaviour", "label", "k", "n", "rate", "CI low", "CI high"], rows, left=3),
    )
    return out + _statistics_part(data)


def _statistics_part(data: dict[str, Any]) -> str:
    """Paired-difference r per behaviour and the phi coefficients of spec b.3."""
    out = ""
    paired = data.get("paired_difference") or {}
    if paired:
        out += (
            f"<p>Paired differences across tasks, A = {escape(str(data.get('agent_a')))} "
            f"minus B = {escape(str(data.get('agent_b')))}:</p>"
        )
        out += table(
            ["behaviour", "r (Δ target-aligned vs Δ SecPass)", "tasks", "NA because"],
            [
                [b, p.get("r"), p.get("n_tasks"), p.get("na_reason") or ""]
                for b, p in paired.items()
            ],
        )
    phi = data.get("phi") or {}
    rows = [
        [k, v.get("phi"), v.get("n11"), v.get("n10"), v.get("n01"), v.get("n00")]
        for k, v in phi.items()
        if isinstance(v, dict)
    ]
    if rows:
        out += table(
            [
                "indicator (functionally correct, pooled)",
                "phi vs security pass",
                "n11",
                "n10",
                "n01",
                "n00",
            ],
            rows,
        )
    return out


def _check_part(data: dict[str, Any]) -> str:
    rows = [
        [
            t.get("id"),
            ",".join(str(c) for c in t.get("cwes", [])),
            (t.get("secure") or {}).get("func"),
            (t.get("secure") or {}).get("sec"),
            (t.get("vulnerable") or {}).get("func"),
            (t.get("vulnerable") or {}).get("sec"),
            t.get("ok"),
        ]
        for t in data.get("tasks", [])
    ]
    out = table(
        ["task", "CWEs", "secure func", "secure sec", "vulnerable func", "vulnerable sec", "ok"],
        rows,
        left=2,
    )
    bad = sum(not t.get("ok") for t in data.get("tasks", []))
    if bad:
        out = note(f"{bad} of {len(rows)} tasks fail the check (their grades are below).") + out
    problems = [
        [tid, impl, str((g or {}).get("detail") or "")[-300:], (g or {}).get("status"),
         (g or {}).get("func"), (g or {}).get("sec")]
        for tid, grades in sorted((data.get("problems") or {}).items())
        for impl, g in sorted((grades or {}).items())
    ]  # fmt: skip
    if problems:
        out += details(
            f"Why the failing tasks fail ({len(problems)} grades, last 300 characters of detail)",
            table(["task", "reference", "detail", "status", "func", "sec"], problems, left=3),
            open_=True,
        )
    return out


def render(
    check: tuple[str, dict[str, Any]] | None,
    summary: tuple[str, dict[str, Any]] | None,
    attribute: tuple[str, dict[str, Any]] | None,
    grades: list[tuple[str, dict[str, Any]]] | None = None,
) -> Section:
    if attribute is None and summary is not None and summary[1].get("attribution"):
        attribute = (
            summary[0],
            {"producer": summary[1].get("producer"), **summary[1]["attribution"]},
        )
    if not (check or summary or attribute or grades):
        return not_run(
            "security", TITLE, "no security summary, grade, attribution or check JSON found"
        )
    parts, prov = [], []
    for label, item, fn in (
        ("FuncPass and SecPass", summary, _summary_part),
        ("Behaviour rates on functionally correct trajectories", attribute, _attribute_part),
        ("Reference implementations of the suite", check, _check_part),
    ):
        if item is None:
            continue
        src, data = item
        parts += [f"<h3>{label}</h3>", fn(data)]
        prov.append(producer_line(src, data.get("producer"), data.get("format")))
    if grades:
        parts += ["<h3>Graded candidates</h3>", _grades_part(grades)]
        prov += [producer_line(src, g.get("producer"), g.get("format")) for src, g in grades]
    return Section("security", TITLE, "".join(parts), provenance=prov)
