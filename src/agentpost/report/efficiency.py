"""Report section: HERO efficiency analyses (spec HERO b.2, b.8-b.10) and the advantage preview.

Reads the ``agentpost.efficiency/1`` document of ``agentpost efficiency --json`` (per-trajectory
rows, per-model tables, per-(model, task) groups with their variation among resolved rollouts)
and, when present, the output of ``agentpost hero advantages --json``. Nothing is recomputed
(the variation among successes of all models pooled per task uses the same statistic,
``hero.variation.task_variation``, over the file's rows). The first efficiency file is shown
in full; the entropy part draws on every efficiency file (the demo adds one for a loopback fake
model whose logprobs are synthetic), printing each file's ``note`` before its charts.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.hero.variation import task_variation
from agentpost.intervals import UNKNOWN
from agentpost.report.advantages import advantage_part
from agentpost.report.explain import acronyms, cost_units, trs_caveat
from agentpost.report.html import Section, capped, details, not_run, note, producer_line, table
from agentpost.report.palette import label, short
from agentpost.report.runs import per_run_part
from agentpost.report.svg import bar_chart, top_n

TITLE = "Token efficiency (HERO)"
NO_LOGPROBS = (
    "No logprobs in these trajectories, so turn entropy and its association with "
    "unproductive turns cannot be computed. Record top-k logprobs (agentpost run with "
    "an OpenAI-compatible server that returns them) to see this analysis."
)


MAX_BARS = 40  # per-trajectory and per-task charts: top 40 and one "others" bar
KINDS = ("repeated_call", "over_exploration", "tool_error", "unproductive")
# per trajectory: the three unproductive kinds, and check runs (failed by design, not counted)
TRAJ_KINDS = (
    "repeated_call_turns",
    "over_exploration_turns",
    "tool_error_turns",
    "check_run_turns",
)


# per-model columns of the efficiency document and their headers (the keys are in the footnote)
MODEL_TABLE = (
    ("trajectories", "trajectories"),
    ("trs", "TRS"),
    ("resolution_rate", "resolution rate"),
    ("mean_tokens", "mean tokens"),
    ("cache_hit_rate", "cache hit"),
    ("unproductive_turn_rate", "unproductive turns"),
    ("read_only_share", "read-only turns"),
    ("mean_turns", "mean turns"),
    ("cost_per_task", "cost per task"),
)


def model_name(m: dict[str, Any]) -> str:
    """A model row's name; trajectories that recorded none are grouped under ``null`` (NA)."""
    return UNKNOWN if m.get("model") is None else str(m["model"])


def model_value(m: dict[str, Any], key: str) -> Any:
    """``m[key]``; ``mean_tokens`` is the file's ``mean_tokens_m`` × 10⁶ (0.00107 M reads badly)."""
    if key == "mean_tokens":
        v = m.get("mean_tokens_m")
        return None if v is None else v * 1e6
    return m.get(key)


def _model_part(
    models: list[dict[str, Any]], rows: list[dict[str, Any]], prices: dict[str, Any] | None = None
) -> str:
    models = sorted(models, key=model_name)
    caveat = trs_caveat(models)
    cols = [k for k, _ in MODEL_TABLE]
    parts = [
        table(
            ["model", *[h for _, h in MODEL_TABLE]],
            [[model_name(m), *[model_value(m, c) for c in cols]] for m in models],
        ),
        f'<p class="src">{acronyms(["TRS"])} Mean tokens: prompt + completion tokens of all '
        "model calls of a run (cached prompt tokens included). Cache hit: cached / all prompt "
        "tokens. Read-only turns: turns whose calls change nothing (ls, cat, grep). "
        f"{cost_units(prices)} Columns are the keys {', '.join(cols)} of each model row "
        "(mean tokens = mean_tokens_m × 10⁶).</p>",
        note(caveat, strong=True) if caveat else "",
    ]
    # models on the axis, one colour per kind (as in the per-trajectory chart): any number of
    # models stays readable; "unproductive" counts each turn once, whatever its kinds
    series = {
        k.replace("_", " "): [(m.get("behaviour_counts") or {}).get(k) for m in models]
        for k in (*KINDS, "check_run")  # check runs: failed by design, not unproductive
    }
    plots = [
        bar_chart(
            [short(model_name(m)) for m in models],
            series,
            title="Unproductive turns by kind, and check runs (a failed run of a script the "
            "agent wrote: by design, not unproductive), per model (click: its trajectories)",
            ylabel="turns",
            width=640 if len(models) <= 8 else 900,
            links=[f"#agent={model_name(m)}&flag=U" for m in models],
        )
    ]
    rows = sorted(
        rows, key=lambda r: (str(r.get("model")), str(r.get("task_id")), str(r.get("id")))
    )
    with_any = [r for r in rows if r.get("unproductive_turns")]
    if len(with_any) > MAX_BARS + 1:
        parts.append(
            note(f"The per-trajectory chart shows the {MAX_BARS} trajectories with most "
                 f"unproductive turns and the mean of the other {len(with_any) - MAX_BARS}; "
                 "the table lists all.")
        )  # fmt: skip
    if with_any:  # grouped, not stacked: one turn can be of several kinds
        cats, series, links = top_n(
            [label(r.get("task_id"), r.get("model")) for r in with_any],
            {k[:-6].replace("_", " "): [r.get(k) for r in with_any] for k in TRAJ_KINDS},
            MAX_BARS,
            [f"#traj={r.get('id')}" for r in with_any],
        )
        plots.append(
            bar_chart(
                cats,
                series,
                title="Unproductive turns by kind, per trajectory (those with any; a turn "
                "may be of several kinds; click a bar to open it)",
                ylabel="turns",
                width=900,
                links=links,
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
    listed, cut = capped(rows, lambda r: r.get("unproductive_turns"),
                         "trajectories with most unproductive turns",
                         "the trajectory viewer lists all, sortable by unproductive turns")  # fmt: skip
    per_traj = table(
        ["trajectory", *[c.replace("_", " ") for c in cols]],
        [[r.get("id"), *[r.get(c) for c in cols]] for r in listed],
        left=3,
    )
    return (
        "".join(parts)
        + f'<div class="plots">{"".join(plots)}</div>'
        + cut
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
    cats = [v["task"] if v["model"] == POOLED else label(v["task"], v["model"]) for v in var]
    cats, series, _ = top_n(
        cats,
        {
            "C_max / C_min": [v.get("cmax_cmin") for v in var],
            "p90 / p10": [v.get("p90_p10") for v in var],
        },
        MAX_BARS,
    )
    chart = bar_chart(
        cats,
        series,
        title="Efficiency variation among resolved rollouts of a task (C = tokens of a run)",
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
    listed, cut = capped(var, lambda v: v.get("cmax_cmin"), "rows of widest variation (C_max / C_min)",
                         "the efficiency JSON has them all")  # fmt: skip
    tab = table(
        ["model", "task", *cols],
        [[v["model"], v["task"], *[v.get(c) for c in cols]] for v in listed],
        left=2,
    )
    return head + chart + cut + details(f"Variation per task ({len(var)} rows)", tab)


def _association_chart(m: dict[str, Any]) -> str:
    buckets = m["association"].get("buckets") or {}
    series = {
        f"{b} entropy ({v.get('turns')} turns)": [v.get(f"{k}_rate") for k in KINDS]
        for b, v in buckets.items()
    }
    return bar_chart(
        list(KINDS),
        series,
        title=f"Behaviour rate by entropy bucket: {m.get('model')}",
        ylabel="share of turns",
        width=520,
    )


def _association_row(src: str, m: dict[str, Any]) -> list[Any]:
    a = m["association"]
    ci = a.get("r_ci") or [None, None]
    me = a.get("mean_entropy") or {}
    return [model_name(m), src, a.get("turns"), a.get("percentile"), me.get("unproductive"),
            me.get("productive"), a.get("point_biserial_r"), ci[0], ci[1]]  # fmt: skip


ASSOCIATION_HEADER = ["model", "file", "turns", "low bucket ≤ percentile", "mean h unproductive",
                      "mean h productive", "point-biserial r", "CI low", "CI high"]  # fmt: skip


def _entropy_part(docs: list[tuple[str, dict[str, Any]]]) -> str:
    """Every model with an association block, from every efficiency file (the demo adds a
    loopback fake model's file for this); the file's ``note`` is printed before its charts.
    Models without logprobs are named, and when none has any the section says so plainly."""
    parts, rows, without = [], [], []
    for src, doc in docs:
        models = doc.get("models") or []
        with_assoc = [m for m in models if m.get("association")]
        without += [f"{m.get('model')} ({src})" for m in models if not m.get("association")]
        if not with_assoc:
            continue
        if doc.get("note"):
            parts.append(note(f"{src}: {doc['note']}", strong=True))
        charts = "".join(_association_chart(m) for m in with_assoc)
        parts.append(f'<div class="plots">{charts}</div>')
        rows += [_association_row(src, m) for m in with_assoc]
    if not rows:
        return note(NO_LOGPROBS)
    # sorted: the documents list models in the order their rollouts finished
    head = (
        note(f"No logprobs, so no entropy, for: {', '.join(sorted(without))}.") if without else ""
    )
    return head + "".join(parts) + table(ASSOCIATION_HEADER, rows, left=2)


def render(
    effs: list[tuple[str, dict[str, Any]]], adv: tuple[str, dict[str, Any]] | None
) -> Section:
    """``effs``: every efficiency document found; the first is shown in full, the entropy part
    draws on all of them. ``adv``: a HERO advantages document."""
    eff = effs[0] if effs else None
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
            _model_part(
                models, rows, ((data.get("producer") or {}).get("args") or {}).get("prices")
            ),
            per_run_part(data.get("runs") or []),
            "<h3>Efficiency variation among successes</h3>",
            _variation_part(data.get("groups") or [], rows),
            "<h3>Turn entropy against unproductive turns</h3>",
            _entropy_part(effs),
        ]
        prov += [producer_line(s, d.get("producer"), d.get("format")) for s, d in effs]
    if adv is not None:
        src, data = adv
        parts += ["<h3>Preview: HERO advantages on the groups</h3>", advantage_part(data)]
        prov.append(producer_line(src, data.get("producer"), data.get("format")))
    return Section("efficiency", TITLE, "".join(parts), provenance=prov)
