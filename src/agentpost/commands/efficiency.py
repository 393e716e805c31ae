"""`agentpost efficiency FILE.jsonl...` (HERO analyses) and `agentpost hero advantages GROUPS.json`.

The first prints the ``agentpost.efficiency/1`` document (see ``agentpost.efficiency.analyze``)
with ``--json``, else readable tables. The second prints one advantage per turn and the gate per
rollout: ``{"rollouts": [{"group", "turn_advantages": [...], "gate": w}], ...}``.

Layer: edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentpost.errors import InputError

hero_app = typer.Typer(
    help="HERO training signal: inspect the hierarchical advantage.", no_args_is_help=True
)


def _window(value: str) -> str | int:
    if value in ("since_last_write", "anywhere"):
        return value
    try:
        return int(value)
    except ValueError:
        raise InputError(
            None,
            "--repeat-window",
            f"expected since_last_write, anywhere or an integer, got {value!r}",
        ) from None


def efficiency(
    files: list[Path] = typer.Argument(..., help="Canonical trajectory JSONL files."),
    as_json: bool = typer.Option(False, "--json", help="Print the full JSON document."),
    out: Path | None = typer.Option(None, "--out", help="Also write the JSON document here."),
    repeat_window: str = typer.Option(
        "since_last_write", "--repeat-window", help="since_last_write | anywhere | N turns."
    ),
    entropy_topk: int = typer.Option(10, "--entropy-topk", help="Top-k log-probs per token."),
    entropy_tail: bool = typer.Option(
        False, "--entropy-tail", help="Tail-bucket entropy instead of renormalising top-k."
    ),
    entropy_tokens: str = typer.Option("all", "--entropy-tokens", help="all | action_only."),
    price_in: float = typer.Option(1.0, "--price-in", help="Price per uncached input token."),
    price_cached: float | None = typer.Option(
        None, "--price-cached", help="Price per cached input token (0.1 x in)."
    ),
    price_out: float = typer.Option(1.0, "--price-out", help="Price per output token."),
    price_unit: str = typer.Option("relative", "--price-unit", help="Label of the prices."),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Model whose per-token cost is 1.0."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for r's CI."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Token efficiency, unproductive behaviours and entropy association per trajectory/model."""
    from agentpost.efficiency.analyze import analyze
    from agentpost.efficiency.cost import Prices
    from agentpost.trajectory.io import read_jsonl

    if entropy_tokens not in ("all", "action_only"):
        raise InputError(
            None, "--entropy-tokens", f"expected all or action_only, got {entropy_tokens!r}"
        )
    trajs = []
    for f in files:
        if not f.is_file():
            raise InputError(f, None, "no such file")
        trajs += read_jsonl(f)
    doc = analyze(
        trajs,
        repeat_window=_window(repeat_window),
        entropy_topk=entropy_topk,
        entropy_renorm=not entropy_tail,
        entropy_tokens=entropy_tokens,
        prices=Prices(price_in, price_cached, price_out, price_unit),
        baseline=baseline,
        n_boot=bootstrap,
        seed=seed,
        inputs=[str(f) for f in files],
    )
    text = json.dumps(doc, ensure_ascii=False)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    if as_json:
        typer.echo(text)
    else:
        _print_tables(doc)


def _fmt(v: object, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec) if isinstance(v, float) else str(v)


def _print_tables(doc: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(
        title=f"Efficiency per model (classifiers {doc['producer']['args']['classifiers_version']})"
    )
    cols = [
        "model",
        "trajectories",
        "resolution_rate",
        "mean_tokens_m",
        "trs",
        "cache_hit_rate",
        "unproductive_turn_rate",
        "relative_inference_cost",
    ]
    for c in cols + ["repeated", "over-expl.", "tool err."]:
        t.add_column(c)
    for m in doc["models"]:
        bc = m["behaviour_counts"]
        t.add_row(
            *[_fmt(m[c]) for c in cols],
            str(bc["repeated_call"]),
            str(bc["over_exploration"]),
            str(bc["tool_error"]),
        )
    g = Table(title="Efficiency variation among resolved rollouts per task")
    for c in ("model", "task", "rollouts", "resolution_rate", "trs", "Cmax/Cmin", "p90/p10", "CV"):
        g.add_column(c)
    for r in doc["groups"]:
        v = r["variation"]
        g.add_row(
            _fmt(r["model"]),
            _fmt(r["task_id"]),
            str(r["rollouts"]),
            _fmt(r["resolution_rate"]),
            _fmt(r["trs"]),
            _fmt(v["cmax_cmin"], ".2f"),
            _fmt(v["p90_p10"], ".2f"),
            _fmt(v["cv"], ".2f"),
        )
    console = Console()
    console.print(t)
    console.print(g)
    for m in doc["models"]:
        a = m["association"]
        if a:
            low, rest = a["buckets"]["low"], a["buckets"]["rest"]
            console.print(
                f"{m['model']}: unproductive rate low-entropy {_fmt(low['unproductive_rate'])}"
                f" vs rest {_fmt(rest['unproductive_rate'])}; point-biserial r "
                f"{_fmt(a['point_biserial_r'])} CI {a['r_ci']}"
            )


@hero_app.command("advantages", no_args_is_help=True)
def advantages(
    groups_file: Path = typer.Argument(
        ..., help='{"rollouts": [{"group","resolved","tokens","turns":[{"entropy","tokens"}]}]}'
    ),
    as_json: bool = typer.Option(True, "--json/--no-json", help="Print JSON (the only format)."),
    ablation: str | None = typer.Option(None, "--ablation", help="A spec b.11 variant name."),
    tau: float | None = typer.Option(None, "--tau", help="Gate threshold (default 0.6)."),
    lam: float | None = typer.Option(None, "--lam", help="Gate ceiling λ (default 0.3)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random-20% control."),
) -> None:
    """Per-turn HERO advantages and the gate of each rollout's group."""
    from dataclasses import replace

    from agentpost.efficiency.advantage import batch_from_json, hero_advantages
    from agentpost.efficiency.config import ABLATIONS, HeroConfig

    try:
        data = json.loads(groups_file.read_text())
    except FileNotFoundError:
        raise InputError(groups_file, None, "no such file") from None
    except json.JSONDecodeError as e:
        raise InputError(groups_file, f"line {e.lineno}", f"invalid JSON: {e.msg}") from None
    if ablation is not None and ablation not in ABLATIONS:
        raise InputError(None, "--ablation", f"unknown {ablation!r}; known: {', '.join(ABLATIONS)}")
    cfg = replace(
        HeroConfig(seed=seed), **{k: v for k, v in (("tau", tau), ("lam", lam)) if v is not None}
    )
    cfg = cfg.with_ablation(ablation)
    try:
        batch = batch_from_json(data)
    except ValueError as e:
        raise InputError(groups_file, None, str(e)) from None
    a = hero_advantages(batch, **cfg.kwargs())
    rollouts = []
    for i, g in enumerate(batch.group):
        turns = a.turn[batch.turn_rollout == i]
        rollouts.append(
            {
                "group": batch.group_ids[g],
                "turn_advantages": turns.tolist(),
                "gate": float(a.gate[g]),
            }
        )
    doc = {
        "format": "agentpost.hero-advantages/1",
        "producer": {
            "name": "agentpost.hero.advantages",
            "version": _version(),
            "args": {"ablation": ablation, **cfg.kwargs()},
        },
        "rollouts": rollouts,
        "clipped_fraction": a.clipped_fraction(batch),
    }
    typer.echo(json.dumps(doc))


def _version() -> str:
    from agentpost import __version__

    return __version__


def register(app: typer.Typer) -> None:
    app.command("efficiency", no_args_is_help=True)(efficiency)
    app.add_typer(hero_app, name="hero")
