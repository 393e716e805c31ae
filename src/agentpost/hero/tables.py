"""Readable terminal tables for ``agentpost efficiency`` and ``agentpost hero advantages``.

They show the same numbers as the ``--json`` documents (``agentpost.efficiency/1``,
``agentpost.hero-advantages/1``), rounded; rates are shown in percent there where the JSON holds
fractions.

Layer: io.
"""

from __future__ import annotations

from rich.table import Table

from agentpost.intervals import UNKNOWN
from agentpost.trajectory.render import console as new_console


def _fmt(v: object, spec: str = ".3g") -> str:
    return UNKNOWN if v is None else format(v, spec) if isinstance(v, float) else str(v)


def _pct(v: float | None) -> str:
    return UNKNOWN if v is None else f"{100 * v:.1f}"


def _table(
    title: str, columns: list[str], rows: list[list[str]], *, text_last: bool = False
) -> Table:
    """A rich table whose first column folds long names and whose numbers never wrap
    (``text_last``: the last column is free text that wraps instead)."""
    t = Table(title=title, title_justify="left")
    t.add_column(columns[0], overflow="fold", min_width=12 if text_last else 20)
    for c in columns[1:-1] if text_last else columns[1:]:
        t.add_column(c, justify="right", no_wrap=True)
    if text_last:
        t.add_column(columns[-1], ratio=1)
    for r in rows:
        t.add_row(*r)
    return t


MAX_GROUPS = 40  # the terminal table lists at most this many (model, task) groups


def _widest(groups: list[dict]) -> list[dict]:
    """All groups, or past ``MAX_GROUPS`` those of widest C_max/C_min (in their order): an RL
    run has thousands."""
    if len(groups) <= MAX_GROUPS:
        return groups
    ratio = [(g.get("variation") or {}).get("cmax_cmin") for g in groups]
    top = sorted(range(len(groups)), key=lambda i: (ratio[i] is None, -(ratio[i] or 0), i))
    return [groups[i] for i in sorted(top[:MAX_GROUPS])]


def print_efficiency(doc: dict) -> None:
    version = doc["producer"]["args"]["classifiers_version"]
    models = doc["models"]
    console = new_console()
    console.print(
        _table(
            "Efficiency per model (n runs, R resolved %, C mean tokens per run in millions, "
            "TRS = R / sqrt(1 + C); cost/task in the prices' unit, see --price-* (per 1M tokens); price/tok vs base "
            "= price of one token relative to --baseline, lower with more cache hits, not the "
            "cost of a task)",
            ["agent", "n", "R%", "C (M)", "TRS", "cache%", "cost/task", "price/tok vs base"],
            [
                [
                    _fmt(m["model"]),
                    str(m["trajectories"]),
                    _pct(m["resolution_rate"]),
                    _fmt(m["mean_tokens_m"]),
                    _fmt(m["trs"], ".1f"),
                    _pct(m["cache_hit_rate"]),
                    _fmt(m["cost_per_task"], ".3g"),
                    _fmt(m["relative_inference_cost"]),
                ]
                for m in models
            ],
        )
    )
    counts = ("read_only", "repeated_call", "over_exploration", "tool_error", "check_run")
    console.print(
        _table(
            f"Turns per behaviour, classifiers {version} (RO read-only, rep repeated call, "
            "OE over-exploration run, err tool error: a misused tool; chk check run: a failed "
            "run of a script the agent wrote, by design, not unproductive)",
            ["agent", "turns", "unprod%", "RO", "rep", "OE", "err", "chk"],
            [
                [_fmt(m["model"]), str(m["turns"]), _pct(m["unproductive_turn_rate"])]
                + [str(m["behaviour_counts"].get(k, 0)) for k in counts]
                for m in models
            ],
        )
    )
    shown = _widest(doc["groups"])
    console.print(
        _table(
            "Efficiency variation among the resolved rollouts (res of n) of each task",
            ["agent / task", "n", "res", "TRS", "Cmax/Cmin", "p90/p10", "CV"],
            [
                [
                    f"{_fmt(r['model'])} / {_fmt(r['task_id'])}",
                    str(r["rollouts"]),
                    # no known outcome in the group: "-", as R% says, not a resolved count of 0
                    UNKNOWN if r["resolution_rate"] is None else str(r["variation"]["n_resolved"]),
                    _fmt(r["trs"], ".1f"),
                    _fmt(r["variation"]["cmax_cmin"], ".2f"),
                    _fmt(r["variation"]["p90_p10"], ".2f"),
                    _fmt(r["variation"]["cv"], ".2f"),
                ]
                for r in shown
            ],
        )
    )
    if len(shown) < len(doc["groups"]):
        console.print(f"(the {len(shown)} groups of widest variation of {len(doc['groups'])}; "
                      "--json or -o has them all)")  # fmt: skip
    for m in models:
        a = m["association"]
        if a:
            low, rest = a["buckets"]["low"], a["buckets"]["rest"]
            ci = UNKNOWN if a["r_ci"] is None else f"[{a['r_ci'][0]:.2f}, {a['r_ci'][1]:.2f}]"
            console.print(
                f"{m['model']}: unproductive turns {_pct(low['unproductive_rate'])}% of "
                f"low-entropy turns (h <= q{a['percentile']:g}) vs {_pct(rest['unproductive_rate'])}%"
                f" of the rest; point-biserial r {_fmt(a['point_biserial_r'], '.2f')}, "
                f"{100 * a['ci']:g}% CI {ci}"
            )


def print_advantages(doc: dict) -> None:
    def turns(adv: list[float]) -> str:
        text = " ".join(f"{x:+.3f}" for x in adv[:8])
        return text + (f" … ({len(adv)} turns)" if len(adv) > 8 else "")

    rows = [
        [
            str(r["group"]),
            "yes" if r["resolved"] else "no",
            f"{r['tokens']:,.0f}",
            _fmt(r["p"], ".2f"),
            _fmt(r["gate"], ".3f"),
            turns(r["turn_advantages"]),
        ]
        for r in doc["rollouts"]
    ]
    args = doc["producer"]["args"]
    title = (
        f"HERO advantages ({args['ablation'] or 'hero'}, τ={args['tau']:g}, λ={args['lam']:g}); "
        f"clipped fraction {doc['clipped_fraction']:.3f}"
    )
    columns = ["group", "resolved", "tokens", "p", "gate w", "turn advantages"]
    t = _table(title, columns, rows, text_last=True)
    new_console().print(t)
