"""Report section: the lab's experiments (``agentpost lab hero``, ``agentpost lab scvd``).

HERO vs GRPO: per variant the final held-out resolution, tokens per rollout (C_i), unproductive
turn rate and turn entropy with 95% CIs over (seed, task) and the paired difference against
GRPO, then the training curves (held-out figures per evaluation step, mean over seeds). SCVD vs
FTD: per policy PASS@1 and the self-verification metrics with CIs, turns and tokens. Every table
opens with the experiment's own caveat: micro scale, directions only.

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.report.html import Section, note, table
from agentpost.report.svg import line_chart

TITLE = "Lab: do the signals move a tiny policy as the papers say?"
HERO_COLS = (("resolved", "held-out resolved"), ("tokens", "tokens / rollout (C_i)"),
             ("unproductive", "unproductive-turn rate"), ("entropy", "turn entropy"))  # fmt: skip
SCVD_COLS = (("final_acc_all", "PASS@1"), ("ICA", "ICA"), ("VTR", "VTR"), ("EDR", "EDR"),
             ("VPR", "VPR"), ("RSR", "RSR"), ("W2R", "W2R"), ("R2W", "R2W"))  # fmt: skip


def _est(x: dict[str, Any] | None, digits: int = 3) -> str:
    if not x or x.get("mean") is None:
        return "NA"
    ci = x.get("ci95")
    body = f"{x['mean']:.{digits}f}"
    return body + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def hero_table(doc: dict[str, Any]) -> str:
    rows = []
    for variant, row in doc["table"].items():
        cells = [variant]
        for key, _ in HERO_COLS:
            digits = 0 if key == "tokens" else 3
            text = _est(row.get(key), digits)
            delta = row.get(key, {}).get("delta_vs_grpo")
            if delta:
                text += f" (Δ {_est(delta, digits)})"
            cells.append(text)
        rows.append(cells)
    return table(["variant", *[label for _, label in HERO_COLS]], rows)


def hero_curves(doc: dict[str, Any]) -> str:
    charts = []
    for key, label in HERO_COLS[:2]:
        series: dict[str, list[tuple[float, float]]] = {}
        by: dict[str, dict[int, list[float]]] = {}
        for run in doc.get("runs", []):
            for point in run["curve"]:
                by.setdefault(run["variant"], {}).setdefault(point["step"], []).append(point[key])
        for variant, steps in by.items():
            series[variant] = [(s, sum(v) / len(v)) for s, v in sorted(steps.items())]
        charts.append(line_chart(series, title=f"{label} by RL step (held-out, mean over seeds)",
                                 xlabel="RL step", ylabel=label))  # fmt: skip
    return "".join(charts)


def scvd_table(doc: dict[str, Any]) -> str:
    rows = [[v, *[_est(row.get(k)) for k, _ in SCVD_COLS], f"{row['turns']:.1f}",
             f"{row['tokens']:.0f}", row["n"]] for v, row in doc["table"].items()]  # fmt: skip
    return table(
        ["policy", *[label for _, label in SCVD_COLS], "turns", "tokens", "rollouts"], rows
    )


def render(hero: tuple[str, dict] | None, scvd: tuple[str, dict] | None) -> Section:
    parts, prov = [], []
    for src, doc, title, body in (
        (*(hero or (None, None)), "HERO vs GRPO and the b.11 ablations", hero_table),
        (*(scvd or (None, None)), "SCVD vs FTD", scvd_table),
    ):
        if doc is None:
            continue
        prov.append(src)
        producer = doc.get("producer", {})
        parts.append(f"<h3>{escape(title)}</h3>")
        parts.append(note(producer.get("caveat", "Micro scale."), strong=True))
        extra = {k: producer[k] for k in ("teacher", "annotator") if k in producer}
        if extra:
            parts.append(note("; ".join(f"{k}: {v}" for k, v in extra.items())))
        parts.append(body(doc))
        if body is hero_table:
            parts.append(hero_curves(doc))
    return Section("lab", TITLE, "".join(parts), provenance=prov)
