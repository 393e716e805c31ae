"""Report section and results document of the lab's experiments (``agentpost lab hero``,
``agentpost lab scvd``, ``agentpost lab results``).

HERO vs GRPO: per arm the final held-out resolution, tokens per rollout (C_i), tokens per
successful rollout, unproductive-turn rate and turn entropy with 95% intervals over seeds and
tasks and the paired difference against GRPO, then the curves (held-out figures per evaluation
step, mean over seeds). SCVD vs FTD: per policy PASS@1 and the self-verification metrics with
intervals, turns and tokens. Both: the verdict of each pre-registered direction. Every table
opens with the experiment's own caveat: micro scale, directions only.

``results_doc`` is ``docs/lab/results.json`` (producer block, pre-flight, seeds, directions);
``results_markdown`` the tables of ``docs/lab.md``, both built from the experiments' own files.

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.documents.formats import fmt, producer
from agentpost.report.html import Section, note, table
from agentpost.report.svg import line_chart

TITLE = "Lab: do the signals move a tiny policy as the papers say?"
RESULTS_FORMAT = fmt("agentpost.lab-results")
HERO_COLS = (("resolved", "held-out resolved"), ("tokens", "tokens / rollout (C_i)"),
             ("tokens_success", "tokens / successful rollout"),
             ("unproductive", "unproductive-turn rate"), ("entropy", "turn entropy"))  # fmt: skip
SCVD_COLS = (("pass1", "PASS@1"), ("ICA", "ICA"), ("VTR", "VTR"), ("EDR", "EDR"),
             ("VPR", "VPR"), ("RSR", "RSR"), ("W2R", "W2R"), ("R2W", "R2W"))  # fmt: skip


def _est(x: dict[str, Any] | None, digits: int = 3) -> str:
    if not x or x.get("mean") is None or x["mean"] != x["mean"]:
        return "NA"
    ci = x.get("ci95")
    body = f"{x['mean']:.{digits}f}"
    return body + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else " (no CI)")


def _digits(key: str) -> int:
    return 0 if key.startswith("tokens") else 3


def hero_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for arm, row in doc["table"].items():
        cells = [arm]
        for key, _ in HERO_COLS:
            text = _est(row.get(key), _digits(key))
            delta = (row.get(key) or {}).get("delta_vs_grpo")
            if delta:
                text += f" (Δ {_est(delta, _digits(key))})"
            cells.append(text)
        rows.append(cells)
    return rows


def scvd_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for arm, row in doc["table"].items():
        cells = [arm, *[_est(row.get(k)) for k, _ in SCVD_COLS]]
        cells += [_est(row.get("turns"), 2), _est(row.get("tokens"), 0), str(row.get("n", ""))]
        rows.append(cells)
    return rows


def direction_rows(doc: dict[str, Any]) -> list[list[str]]:
    return [[d["name"], d["expected"], _est(d["estimate"], _digits(d["metric"])), d["verdict"]]
            for d in doc.get("directions", [])]  # fmt: skip


def curve_points(doc: dict[str, Any], key: str) -> dict[str, list[tuple[float, float]]]:
    by: dict[str, dict[int, list[float]]] = {}
    for run in doc.get("runs", []):
        for point in run["curve"]:
            v = point.get(key)
            if v is not None and v == v:
                by.setdefault(run["variant"], {}).setdefault(point["step"], []).append(v)
    return {arm: [(s, sum(v) / len(v)) for s, v in sorted(steps.items())]
            for arm, steps in by.items()}  # fmt: skip


def curve_rows(doc: dict[str, Any]) -> list[list[str]]:
    """[arm, step, resolved, tokens, tokens per success] per evaluation point (mean of seeds)."""
    keys = ("resolved", "tokens", "tokens_success")
    pts = {k: {a: dict(v) for a, v in curve_points(doc, k).items()} for k in keys}
    out = []
    for arm, steps in pts["resolved"].items():
        for step in sorted(steps):
            cells = [pts[k].get(arm, {}).get(step) for k in keys]
            out.append([arm, str(step), *["NA" if c is None else f"{c:.{3 if i == 0 else 0}f}"
                                           for i, c in enumerate(cells)]])  # fmt: skip
    return out


def hero_curves(doc: dict[str, Any]) -> str:
    charts = []
    for key, label in (HERO_COLS[0], HERO_COLS[2]):
        charts.append(line_chart(curve_points(doc, key),
                                 title=f"{label} by RL step (held-out, mean over seeds)",
                                 xlabel="RL step", ylabel=label))  # fmt: skip
    return "".join(charts)


def render(hero: tuple[str, dict] | None, scvd: tuple[str, dict] | None) -> Section:
    parts, prov = [], []
    hero_head = ["arm", *[label for _, label in HERO_COLS]]
    scvd_head = ["policy", *[label for _, label in SCVD_COLS], "turns", "tokens", "rollouts"]
    for src, doc, title, head, rows in (
        (*(hero or (None, None)), "HERO vs GRPO and the b.11 ablations", hero_head, hero_rows),
        (*(scvd or (None, None)), "SCVD vs FTD", scvd_head, scvd_rows),
    ):
        if doc is None:
            continue
        prov.append(src)
        prod = doc.get("producer", {})
        parts.append(f"<h3>{escape(title)}</h3>")
        parts.append(note(prod.get("caveat", "Micro scale."), strong=True))
        extra = {k: prod[k] for k in ("teacher", "annotator") if k in prod}
        if extra:
            parts.append(note("; ".join(f"{k}: {v}" for k, v in extra.items())))
        parts.append(table(head, rows(doc)))
        if doc.get("directions"):
            parts.append(table(["direction", "expected", "estimate", "verdict"],
                               direction_rows(doc)))  # fmt: skip
        if rows is hero_rows:
            parts.append(hero_curves(doc))
    return Section("lab", TITLE, "".join(parts), provenance=prov)


def not_run(registered: dict[str, list[dict[str, Any]]], docs: dict[str, dict[str, Any]]
            ) -> list[dict[str, Any]]:  # fmt: skip
    """The pre-registered directions (``{experiment: [Direction.to_json()]}``) an experiment's
    document has no verdict for, each with the arms it lacked: they are listed, never dropped."""
    out = []
    for exp, dirs in registered.items():
        doc = docs.get(exp) or {}
        have = {d["name"] for d in doc.get("directions", [])}
        arms = set(doc.get("table", {}))
        for d in dirs:
            if d["name"] in have:
                continue
            lacking = [a for a in (d["a"], d["b"]) if a is not None and a not in arms]
            out.append({"experiment": exp, "name": d["name"], "expected": d["expected"],
                        "estimate": None, "verdict": "not run",
                        "reason": ("arm(s) not run: " + ", ".join(lacking)) if lacking
                        else "no estimate in the experiment's document"})  # fmt: skip
    return out


def policy_of(doc: dict[str, Any]) -> dict[str, Any]:
    """Which SFT policy an experiment started from (its document's ``sft`` block)."""
    sft = doc.get("sft") or {}
    return {"params": sft.get("params"), "stage1_epochs": (sft.get("config") or {}).get(
                "sft_epochs"), "supervised_tokens": sft.get("supervised_tokens"),
            "loss_last": sft.get("loss_last")}  # fmt: skip


def policies(hero: dict[str, Any], scvd: dict[str, Any]) -> dict[str, Any]:
    """Both experiments' SFT policies and whether they are the same one (so no table mixes the
    figures of two policies unlabelled); the pre-flight above is the HERO folder's."""
    h, c = policy_of(hero), policy_of(scvd)
    return {"hero": h, "scvd": c, "same": h == c and h["params"] is not None}


def results_doc(hero: dict[str, Any], scvd: dict[str, Any], load: str = "",
                registered: dict[str, list[dict[str, Any]]] | None = None,
                code: str = "") -> dict[str, Any]:  # fmt: skip
    """``docs/lab/results.json``: what the two experiments found, from their own documents.
    With ``registered`` (the pre-registered directions per experiment), a direction whose arms
    did not run is listed with verdict ``not run`` and the arms it lacked."""
    pf = hero.get("preflight") or {}
    return {
        "format": RESULTS_FORMAT,
        "producer": producer(
            results_doc,
            load=load,
            code=code,
            experiments={
                "hero": hero.get("producer", {}).get("name"),
                "scvd": scvd.get("producer", {}).get("name"),
            },
        ),
        "preflight": {
            k: pf.get(k)
            for k in (
                "share_in_regime",
                "median_cost_ratio",
                "resolved",
                "exposed",
                "repaired",
                "paths",
                "in_regime",
                "tasks",
                "rollouts",
            )
        },  # fmt: skip
        "policy": policies(hero, scvd),
        "seeds": {"hero": hero.get("seeds"), "scvd": scvd.get("seeds")},
        "directions": [
            {
                "experiment": exp,
                "name": d["name"],
                "expected": d["expected"],
                "estimate": d["estimate"],
                "verdict": d["verdict"],
            }
            for exp, doc in (("hero", hero), ("scvd", scvd))
            for d in doc.get("directions", [])
        ]  # fmt: skip
        + not_run(registered or {}, {"hero": hero, "scvd": scvd}),
        "wall_s": {"hero": hero.get("wall_s"), "scvd": scvd.get("wall_s")},
        "arms": {"hero": list(hero.get("table", {})), "scvd": list(scvd.get("table", {}))},
        # seconds of training summed over the runs (each run's own clock; runs overlapped)
        "train_s": {
            exp: round(sum(r.get("train_s") or 0 for r in doc.get("runs", [])), 1)
            for exp, doc in (("hero", hero), ("scvd", scvd))
        },  # fmt: skip
    }


def runs_markdown(res: dict[str, Any]) -> str:
    """What ran: arms, seeds, wall time, load and code of each experiment (from ``res``)."""
    prod = res.get("producer", {}).get("args", {})
    lines = [f"- {exp}: arms {', '.join(res.get('arms', {}).get(exp) or []) or 'none'}; seeds "
             f"{res['seeds'].get(exp)}; training {res.get('train_s', {}).get(exp)} s summed over "
             f"its runs; the last (resuming) invocation {res['wall_s'].get(exp)} s"
             for exp in ("hero", "scvd")]  # fmt: skip
    pol = res.get("policy") or {}
    if pol:
        known = all((pol.get(e) or {}).get("params") is not None for e in ("hero", "scvd"))
        lines.append("- policy: " + ("not recorded in the experiments' documents" if not known
                                     else "the same SFT checkpoint in both experiments"
                                     if pol.get("same") else "DIFFERENT SFT checkpoints: "
                                     f"hero {pol.get('hero')}, scvd {pol.get('scvd')}"))  # fmt: skip
    lines.append(
        f"- load average (1, 5, 15 min): "
        f"{prod.get('load') or 'not given'}; code: {prod.get('code') or 'not given'}"
    )
    return "\n".join(lines) + "\n"


def _md(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def preflight_markdown(pf: dict[str, Any]) -> str:
    """The pre-flight table: per held-out task its group's success, C_max/C_min among its
    successes and the paths its rollouts took; then the summary line."""
    rows = [[r["task"], f"{r['p']:.3f}",
             "NA" if r["cost_ratio"] != r["cost_ratio"] else f"{r['cost_ratio']:.2f}",
             ", ".join(f"{k} {v}" for k, v in sorted(r["paths"].items()))]
            for r in pf["tasks"]]  # fmt: skip
    s = pf["summary"]
    lo, hi = 0.4, 0.8
    tail = (f"\nShare of tasks with group success in [{lo}, {hi}]: **{s['share_in_regime']:.3f}** "
            f"({s['tasks']} tasks, {s['rollouts']} rollouts, resolved {s['resolved']:.3f}); "
            f"median C_max/C_min among a task's successes **{s['median_cost_ratio']:.2f}** "
            f"({s['tasks_with_ratio']} tasks with two or more successes); rollouts forming a "
            f"candidate {s['candidates']:.3f}; wrong candidates {s['wrong_candidates']}, exposed "
            f"by the task's check **{s['exposed']:.3f}**, repaired by the oracle from that state "
            f"**{s['repaired']:.3f}**. Paths: "
            + ", ".join(f"{k} {v:.3f}" for k, v in s["paths"].items()) + ".\n")  # fmt: skip
    return _md(["held-out task", "group success p", "C_max/C_min", "paths (of 8)"], rows) + tail


def hero_dynamics_markdown(hero: dict[str, Any]) -> str:
    """Per arm, over its runs' RL steps: how often HERO's gate was open, its mean weight, and the
    share of groups kept (the gate is 0 below τ; dropped groups give no gradient)."""
    by: dict[str, list[dict]] = {}
    for run in hero.get("runs", []):
        by.setdefault(run["variant"], []).extend(run.get("dynamics", []))
    rows = []
    for arm, steps in by.items():
        if not steps:
            continue
        n = len(steps)
        rows.append([arm, str(n),
                     f"{sum(1 for x in steps if x.get('frac_gated', 0) > 0) / n:.2f}",
                     f"{sum(x.get('frac_gated', 0) for x in steps) / n:.2f}",
                     f"{sum(x.get('gate_mean', 0) for x in steps) / n:.3f}",
                     f"{sum(x.get('frac_groups_kept', 0) for x in steps) / n:.2f}",
                     f"{sum(x.get('resolution_rate', 0) for x in steps) / n:.2f}"])  # fmt: skip
    return _md(["arm", "RL steps (all seeds)", "steps with a gate open", "groups gated (mean)",
                "gate weight (mean)", "groups kept (mean)", "train-time resolution (mean)"],
               rows)  # fmt: skip


def _num(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def scvd_data_markdown(scvd: dict[str, Any]) -> str:
    """One paragraph on SCVD's data and teacher, from ``scvd_lab.json``."""
    d, t = scvd.get("data") or {}, scvd.get("teacher") or {}
    if not d:
        return ""
    tok = d.get("supervised_tokens", {})
    pool = d.get("ftd_pool", {})
    fits = [f"{r['variant']} s{r['seed']} {r['loss_first']:.3f} → {r['loss_last']:.3f}"
            for r in scvd.get("runs", []) if r.get("loss_first") is not None]  # fmt: skip
    return (f"\nData: {d.get('student_rollouts')} student rollouts on train tasks "
            f"(outcomes {d.get('outcomes')}); D_SC {d.get('rows')} rows on {d.get('tasks')} tasks, "
            f"{d.get('repairs')} of them with a repair; D_FTD {d.get('rows')} rows on the same "
            f"tasks, from {pool.get('rows')} teacher solutions out of {pool.get('attempts')} "
            f"attempts; supervised tokens D_SC {tok.get('sc')}, D_FTD {tok.get('ftd')}. Teacher "
            f"held-out PASS@1 {_num(t.get('heldout_pass1'))}. Fine-tune loss (first → last step): "
            + "; ".join(fits) + ".\n")  # fmt: skip


def results_markdown(res: dict[str, Any], hero: dict[str, Any], scvd: dict[str, Any],
                     preflight: dict[str, Any] | None = None) -> str:  # fmt: skip
    """The result tables of ``docs/lab.md`` (Markdown)."""
    parts = ["### Runs\n", runs_markdown(res),
             "\n### Pre-flight (SFT policy, held-out, T = 1, groups of 8)\n",
             preflight_markdown(preflight) if preflight else "not found\n",
             "\n### HERO vs GRPO and the b.11 ablations (final step, held-out)\n",
             _md(["arm", *[label for _, label in HERO_COLS]], hero_rows(hero)),
             "\n### HERO: curves (held-out, mean over seeds)\n",
             _md(["arm", "step", "resolved", "tokens / rollout", "tokens / successful rollout"],
                 curve_rows(hero)),
             "\n### HERO: training dynamics (per RL step, all seeds)\n",
             hero_dynamics_markdown(hero),
             "\n### SCVD vs FTD (held-out)\n",
             _md(["policy", *[label for _, label in SCVD_COLS], "turns", "tokens", "rollouts"],
                 scvd_rows(scvd)),
             scvd_data_markdown(scvd),
             "\n### Directions\n",
             _md(["experiment", "direction", "expected", "estimate [95% CI]", "verdict"],
                 [[d["experiment"], d["name"], d["expected"],
                   _est(d["estimate"], 0 if "tokens" in d["name"] else 3),
                   d["verdict"] + (f" ({d['reason']})" if d.get("reason") else "")]
                  for d in res["directions"]])]  # fmt: skip
    return "".join(parts)
