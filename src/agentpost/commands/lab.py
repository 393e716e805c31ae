"""`agentpost lab ...`: micro-scale experiments (the lab): its task family first.

Layer: edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentpost.errors import InputError

lab_app = typer.Typer(
    help="Micro-scale experiments: do the signals move a tiny policy as the papers say?",
    no_args_is_help=True,
)


@lab_app.command("tasks")
def tasks_command(
    out: Path = typer.Option(Path("lab-tasks"), "--out", "-o", help="Folder to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the family."),
    train: int = typer.Option(60, "--train", min=0, help="Train instances."),
    heldout: int = typer.Option(30, "--heldout", min=0, help="Held-out instances."),
    all_slots: bool = typer.Option(
        False, "--all-slots", help="Draw file and output names too (the experiments use one slot)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the family document."),
) -> None:
    """Write the procedural task family: OUT/train and OUT/heldout are task suites."""
    from agentpost.lab.tasks import write_family

    if out.exists() and not out.is_dir():
        raise InputError(out, None, "not a directory")
    if out.is_dir() and any(
        p for p in out.iterdir() if p.name not in ("train", "heldout", "family.json")
    ):
        raise InputError(out, None, "holds other files; choose an empty or lab-tasks folder")
    doc = write_family(out, seed, train, heldout, one_slot=not all_slots)
    if as_json:
        typer.echo(json.dumps(doc))
        return
    n = {k: len(v) for k, v in doc["splits"].items()}
    typer.echo(f"wrote {n['train']} train and {n['heldout']} held-out tasks under {out} "
               f"(seed {seed}); check them with: agentpost tasks check {out / 'heldout'}")  # fmt: skip


@lab_app.command("hero")
def hero_command(
    out: Path = typer.Option(Path("lab-hero"), "--out", "-o", help="Experiment folder (resumes)."),
    smoke: bool = typer.Option(False, "--smoke", help="A few-minute variant (what CI runs)."),
    steps: int = typer.Option(None, "--steps", min=1, help="RL steps per run."),
    seeds: int = typer.Option(None, "--seeds", min=1, help="Seeds per variant."),
    group: int = typer.Option(None, "--group-size", "-G", min=2, help="Rollouts per prompt (G)."),
    variants: str = typer.Option(None, "--variants", help="Comma-separated, e.g. grpo,hero."),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result document."),
) -> None:
    """HERO vs GRPO and HERO's ablations (HERO spec b.11: each term of the advantage switched off in turn) on a tiny policy trained here (micro scale: directions only)."""
    from agentpost.commands._options import config, sandbox_backend
    from agentpost.lab.hero_lab import HeroLabConfig, run_hero_lab

    base = HeroLabConfig.smoke() if smoke else HeroLabConfig()
    changes = {"steps": steps, "group": group,
               "seeds": tuple(range(seeds)) if seeds is not None else None,
               "variants": tuple(v.strip() for v in variants.split(",") if v.strip())
               if variants else None}  # fmt: skip
    # HeroLabConfig checks every field (the variants against HeroConfig's ablations)
    cfg = config(HeroLabConfig, HERO_FLAGS,
                 **{**asdict_shallow(base), **{k: v for k, v in changes.items() if v is not None}})  # fmt: skip
    with _trainer_prints_to_stderr():
        doc = run_hero_lab(
            out, cfg, sandbox_backend(backend), progress=lambda m: typer.echo(m, err=True)
        )
    if as_json:
        typer.echo(json.dumps(doc, default=str))
        return
    typer.echo(doc["producer"]["caveat"])
    typer.echo("variant\tresolved\ttokens\tunproductive\tentropy")
    for v, row in doc["table"].items():
        cells = [f"{row[k]['mean']:.3f} [{row[k]['ci95'][0]:.3f}, {row[k]['ci95'][1]:.3f}]"
                 for k in ("resolved", "tokens", "unproductive", "entropy")]  # fmt: skip
        typer.echo("\t".join([v, *cells]))
    typer.echo(f"wrote {out / 'hero_lab.json'}")


@lab_app.command("scvd")
def scvd_command(
    out: Path = typer.Option(Path("lab-scvd"), "--out", "-o", help="Experiment folder (resumes)."),
    smoke: bool = typer.Option(False, "--smoke", help="A few-minute variant (what CI runs)."),
    seeds: int = typer.Option(None, "--seeds", min=1, help="Fine-tuning seeds per variant."),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result document."),
) -> None:
    """SCVD vs FTD: the stage-1 policy as student, a scripted verify-and-repair teacher (micro scale)."""
    from agentpost.commands._options import config, sandbox_backend
    from agentpost.lab.scvd_lab import ScvdLabConfig, run_scvd_lab

    cfg = ScvdLabConfig.smoke() if smoke else ScvdLabConfig()
    if seeds is not None:
        cfg = config(ScvdLabConfig, {"seeds": "--seeds"},
                     **{**asdict_shallow(cfg), "seeds": tuple(range(seeds))})  # fmt: skip
    with _trainer_prints_to_stderr():
        doc = run_scvd_lab(
            out, cfg, sandbox_backend(backend), progress=lambda m: typer.echo(m, err=True)
        )
    if as_json:
        typer.echo(json.dumps(doc, default=str))
        return
    typer.echo(doc["producer"]["caveat"])
    cols = ("final_acc_all", "ICA", "EDR", "VPR", "RSR", "R2W")
    typer.echo("variant\t" + "\t".join(("PASS@1", *cols[1:])) + "\tturns\ttokens")
    for v, row in doc["table"].items():
        cells = [_cell(row[k]) for k in cols]
        typer.echo("\t".join([v, *cells, f"{row['turns']:.1f}", f"{row['tokens']:.0f}"]))
    typer.echo(f"wrote {out / 'scvd_lab.json'}")


HERO_FLAGS = {"steps": "--steps", "group": "--group-size", "seeds": "--seeds",
              "variants": "--variants"}  # fmt: skip


def asdict_shallow(cfg) -> dict:
    """A dataclass's fields as keyword arguments, nested configs kept as objects."""
    from dataclasses import fields

    return {f.name: getattr(cfg, f.name) for f in fields(cfg)}


def _trainer_prints_to_stderr():
    """The trainers print their logs with ``print``: keep stdout for the result (``--json``)."""
    import contextlib
    import sys

    return contextlib.redirect_stdout(sys.stderr)


def _cell(x: dict) -> str:
    if x["mean"] is None:
        return "NA"
    ci = x.get("ci95")
    return f"{x['mean']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
