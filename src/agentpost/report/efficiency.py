"""Report section: HERO efficiency analyses (spec HERO b.2, b.8-b.10) and the advantage preview.

Reads the ``agentpost.efficiency/1`` document of ``agentpost efficiency --json`` (per-trajectory
rows, per-model tables, per-(model, task) groups with their variation among resolved rollouts)
and, when present, the output of ``agentpost hero advantages --json``. Nothing is recomputed.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.efficiency.variation import task_variation
from agentpost.report.html import Section, cell, details, not_run, note, producer_line, table
from agentpost.report.svg import bar_chart

TITLE = "Token efficiency (HERO)"
MODEL_COLS = ("trs", "resolution_rate", "mean_tokens_m", "cache_hit_rate", "unproductive_turn_rate")
NO_LOGPROBS = (
    "No logprobs in these trajectories, so turn entropy and its association with "
    "unproductive turns cannot be computed. Record top-k logprobs (agentpost run with "
    "an OpenAI-compatible server that returns them) to see this analysis."
)


KINDS = ("repeated_call", "over_exploration", "tool_error", "unproductive")
TRAJ_KINDS = ("repeated_call_turns", "over_exploration_turns", "tool_error_turns")


def _model_part(models: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    cols = ("trajectories", *MODEL_COLS, "read_only_share", "mean_turns", "cost_per_task")
    parts = [table(["model", *cols], [[m.get("model"), *[m.get(c) for c in cols]] for m in models])]
    series = {
        str(m.get("model")): [(m.get("behaviour_counts") or {}).get(k) for k in KINDS]
        for m in models
    }
    plots = [
        bar_chart(
            list(KINDS), series, title="Unproductive turns by kind, per model", ylabel="turns"
        )
    ]
    shown = [r for r in rows if r.get("unproductive_turns")][:150]  # the table has every row
    if shown:
        cats = [f"{r.get('task_id')}/{str(r.get('model')).split('/')[-1]}" for r in shown]
        plots.append(
            bar_chart(
                cats,
                {k[:-6].replace("_", " "): [r.get(k) for r in shown] for k in TRAJ_KINDS},
                title="Unproductive turns by kind, per trajectory (those with any)",
                ylabel="turns",
                stacked=True,
                width=900,
            )
        )
    cols = (
        "task_id",
        "model",
        "resolved",
        "turns",
        "tokens",
        "cache_hit_rate",
        "read_only_turns",
        *TRAJ_KINDS,
        "unproductive_turn_rate",
        "mean_entropy",
    )
    per_traj = table(
        ["trajectory", *cols], [[r.get("id"), *[r.get(c) for c in cols]] for r in rows], left=3
    )
    return (
        "".join(parts)
        + f'<div class="plots">{"".join(plots)}</div>'
        + details(f"Per trajectory ({len(rows)} trajectories)", per_traj)
    )


def variation_rows(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups with at least two resolved rollouts (where variation among successes exists)."""
    out = []
    for g in groups:
        v = g.get("variation") or {}
        if (v.get("n_resolved") or 0) >= 2:
            out.append({"model": g.get("model"), "task": g.get("task_id"), **v})
    return out


POOLED = "all models pooled"


def pooled_variation(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task, the variation among the resolved rollouts of every model together (the demo's
    policies stand in for one policy's group). Same statistic as the per-model rows."""
    by_task: dict[str, list[float]] = {}
    for r in rows:
        if r.get("resolved") and r.get("tokens") is not None:
            by_task.setdefault(str(r.get("task_id")), []).append(float(r["tokens"]))
    return [
        {"model": POOLED, "task": t, **task_variation(c)} for t, c in by_task.items() if len(c) >= 2
    ]


def _variation_part(groups: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    var = variation_rows(groups)
    if len({r.get("model") for r in rows}) > 1:
        var += pooled_variation(rows)
    if not var:
        return note(
            "No task has two or more resolved rollouts of one model, so efficiency "
            "variation among successes is undefined here."
        )
    cats = [
        v["task"] if v["model"] == POOLED else f"{v['task']}/{str(v['model']).split('/')[-1]}"
        for v in var
    ]
    chart = bar_chart(
        cats,
        {
            "C_max / C_min": [v.get("cmax_cmin") for v in var],
            "p90 / p10": [v.get("p90_p10") for v in var],
        },
        title="Efficiency variation among resolved rollouts of a task",
        ylabel="ratio",
        width=900,
    )
    cols = ("n_resolved", "min_tokens", "max_tokens", "cmax_cmin", "p90_p10", "cv")
    pooled = any(v["model"] == POOLED for v in var)
    head = (
        note(
            "Rows marked 'all models pooled' treat every resolved rollout of a task as one group "
            "(here the reference policies stand in for one policy's G rollouts)."
        )
        if pooled
        else ""
    )
    tab = table(
        ["model", "task", *cols],
        [[v["model"], v["task"], *[v.get(c) for c in cols]] for v in var],
        left=2,
    )
    return head + chart + details(f"Variation per task ({len(var)} rows)", tab)


def _entropy_part(models: list[dict[str, Any]]) -> str:
    with_assoc = [m for m in models if m.get("association")]
    if not with_assoc:
        return note(NO_LOGPROBS)
    parts, rows = [], []
    for m in with_assoc:
        a = m["association"]
        buckets = a.get("buckets") or {}
        series = {
            f"{b} entropy ({v.get('turns')} turns)": [v.get(f"{k}_rate") for k in KINDS]
            for b, v in buckets.items()
        }
        parts.append(
            bar_chart(
                list(KINDS),
                series,
                title=f"Behaviour rate by entropy bucket: {m.get('model')}",
                ylabel="share of turns",
                width=520,
            )
        )
        ci = a.get("r_ci") or [None, None]
        me = a.get("mean_entropy") or {}
        rows.append(
            [
                m.get("model"),
                a.get("turns"),
                a.get("percentile"),
                me.get("unproductive"),
                me.get("productive"),
                a.get("point_biserial_r"),
                ci[0],
                ci[1],
            ]
        )
    others = [str(m.get("model")) for m in models if not m.get("association")]
    extra = note(f"No logprobs for: {', '.join(others)}.") if others else ""
    return (
        f'<div class="plots">{"".join(parts)}</div>'
        + extra
        + table(
            [
                "model",
                "turns",
                "low bucket ≤ percentile",
                "mean h unproductive",
                "mean h productive",
                "point-biserial r",
                "CI low",
                "CI high",
            ],
            rows,
        )
    )


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _advantage_part(adv: dict[str, Any]) -> str:
    rollouts = adv.get("rollouts") or []
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rollouts:
        groups.setdefault(str(r.get("group")), []).append(r)
    rows = []
    for g, rs in groups.items():
        means = [m for r in rs if (m := _mean(r.get("turn_advantages") or [])) is not None]
        solved = sum(bool(r.get("resolved")) for r in rs) if "resolved" in rs[0] else None
        rows.append(
            [
                g,
                len(rs),
                solved,
                rs[0].get("p"),
                rs[0].get("gate"),
                min(means, default=None),
                max(means, default=None),
            ]
        )
    cats = [
        f"{r.get('group')}/{str(r.get('agent') or i).split('/')[-1]}"
        for i, r in enumerate(rollouts)
    ]
    means = [_mean(r.get("turn_advantages") or []) for r in rollouts]
    series = {
        "resolved": [
            m if r.get("resolved") else None for m, r in zip(means, rollouts, strict=True)
        ],
        "not resolved": [
            None if r.get("resolved") else m for m, r in zip(means, rollouts, strict=True)
        ],
    }
    if "resolved" not in (rollouts[0] if rollouts else {}):
        series = {"mean turn advantage": means}
    chart = bar_chart(
        cats,
        series,
        title="HERO advantage per rollout (mean over its turns)",
        stacked=True,  # the two series never share a rollout: full-width bars
        ylabel="advantage",
        width=900,
        height=360,
    )
    head = note(adv["note"]) if adv.get("note") else ""
    return (
        head
        + chart
        + table(
            ["group", "rollouts", "resolved", "p", "gate w", "min mean adv.", "max mean adv."], rows
        )
        + (f"<p>Clipped fraction of turn tokens: {cell(adv.get('clipped_fraction'))}.</p>")
    )


def render(
    eff: tuple[str, dict[str, Any]] | None, adv: tuple[str, dict[str, Any]] | None
) -> Section:
    if eff is None and adv is None:
        return not_run(
            "efficiency",
            TITLE,
            "no efficiency JSON found (run `agentpost efficiency "
            "RUN_DIR/trajectories.jsonl --out RUN_DIR/efficiency.json`)",
        )
    parts, prov = [], []
    if eff is not None:
        src, data = eff
        models, rows = data.get("models") or [], data.get("trajectories") or []
        parts += [
            "<h3>Per model: TRS, resolution, tokens, cache, unproductive turns</h3>",
            _model_part(models, rows),
            "<h3>Efficiency variation among successes</h3>",
            _variation_part(data.get("groups") or [], rows),
            "<h3>Turn entropy against unproductive turns</h3>",
            _entropy_part(models),
        ]
        prov.append(producer_line(src, data.get("producer"), data.get("format")))
    if adv is not None:
        src, data = adv
        parts += ["<h3>Preview: HERO advantages on the groups</h3>", _advantage_part(data)]
        prov.append(producer_line(src, data.get("producer"), data.get("format")))
    return Section("efficiency", TITLE, "".join(parts), provenance=prov)
