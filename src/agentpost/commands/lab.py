"""`agentpost lab ...`: micro-scale experiments (the lab): the task family, the pre-flight table,
HERO vs GRPO and the b.11 ablations, SCVD vs FTD, and the results document.

``--scale`` picks a preset (``lab.presets``): ``smoke`` (what CI runs, seconds), ``cpu`` (the
experiment on 2 cores), ``gpu`` (larger, for ``scripts/lab-gpu.sh`` on a CUDA machine). The hero
and scvd experiments may share one folder: the tasks, memo, corpora and SFT policy are made once.

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
SCALES = ("smoke", "cpu", "gpu")


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


def _scale(scale: str) -> str:
    if scale not in SCALES:
        raise InputError(None, "--scale", f"must be one of {', '.join(SCALES)}, got {scale!r}")
    return scale


@lab_app.command("preflight")
def preflight_command(
    out: Path = typer.Option(Path("lab"), "--out", "-o", help="Experiment folder (resumes)."),
    scale: str = typer.Option("cpu", "--scale", help="smoke | cpu | gpu."),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    draw: int = typer.Option(
        None,
        "--draw",
        min=0,
        help="Another draw of the groups with this sampling seed, written to preflight-sN.json.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the pre-flight document."),
) -> None:
    """Is the SFT policy in the methods' regime? Groups of 8 on held-out tasks at T = 1."""
    from agentpost.commands._options import sandbox_backend
    from agentpost.lab.preflight import preflight_stage
    from agentpost.lab.presets import hero_config

    cfg = hero_config(_scale(scale))
    with _trainer_prints_to_stderr():
        pf = preflight_stage(out, cfg.policy, sandbox_backend(backend), cfg.preflight_group,
                       progress=lambda m: typer.echo(m, err=True), draw=draw)  # fmt: skip
    if as_json:
        typer.echo(json.dumps(pf, default=str))
        return
    typer.echo(preflight_table(pf))
    typer.echo(f"wrote {out / ('preflight.json' if draw is None else f'preflight-s{draw}.json')}")


def preflight_table(pf: dict) -> str:
    s = pf["summary"]
    lines = ["task\tp\tCmax/Cmin\tpaths"]
    for r in pf["tasks"]:
        paths = ", ".join(f"{k} {v}" for k, v in sorted(r["paths"].items()))
        lines.append(f"{r['task']}\t{r['p']:.3f}\t{r['cost_ratio']:.2f}\t{paths}")
    lines.append(f"share of tasks with p in [0.4, 0.8]: {s['share_in_regime']:.3f}; median "
                 f"Cmax/Cmin {s['median_cost_ratio']:.2f} over {s['tasks_with_ratio']} tasks; "
                 f"resolved {s['resolved']:.3f}; wrong candidates {s['wrong_candidates']}, "
                 f"exposed by the check {s['exposed']:.3f}, repaired by the oracle "
                 f"{s['repaired']:.3f}; in regime: {s['in_regime']}")  # fmt: skip
    return "\n".join(lines)


@lab_app.command("hero")
def hero_command(
    out: Path = typer.Option(Path("lab"), "--out", "-o", help="Experiment folder (resumes)."),
    scale: str = typer.Option("cpu", "--scale", help="smoke | cpu | gpu."),
    smoke: bool = typer.Option(False, "--smoke", help="Same as --scale smoke."),
    steps: int = typer.Option(None, "--steps", min=1, help="RL steps per run."),
    seeds: int = typer.Option(None, "--seeds", min=1, help="Seeds per variant."),
    group: int = typer.Option(None, "--group-size", "-G", min=2, help="Rollouts per prompt (G)."),
    variants: str = typer.Option(None, "--variants", help="Comma-separated, e.g. grpo,hero."),
    workers: int = typer.Option(None, "--workers", min=1, help="Processes for the RL runs."),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result document."),
) -> None:
    """HERO vs GRPO and HERO's ablations (HERO spec b.11: each term of the advantage switched off in turn) on a tiny policy trained here (micro scale: directions only)."""
    from agentpost.commands._options import config, sandbox_backend
    from agentpost.lab.hero_lab import HeroLabConfig, run_hero_lab
    from agentpost.lab.presets import hero_config

    base = hero_config("smoke" if smoke else _scale(scale))
    changes = {"steps": steps, "group": group, "workers": workers,
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
    typer.echo("variant\tresolved\ttokens\ttokens/success\tunproductive\tentropy")
    for v, row in doc["table"].items():
        cells = [_cell(row[k], 0 if k.startswith("tokens") else 3)
                 for k in ("resolved", "tokens", "tokens_success", "unproductive", "entropy")]  # fmt: skip
        typer.echo("\t".join([v, *cells]))
    _directions(doc)
    typer.echo(f"wrote {out / 'hero_lab.json'}")


@lab_app.command("scvd")
def scvd_command(
    out: Path = typer.Option(Path("lab"), "--out", "-o", help="Experiment folder (resumes)."),
    scale: str = typer.Option("cpu", "--scale", help="smoke | cpu | gpu."),
    smoke: bool = typer.Option(False, "--smoke", help="Same as --scale smoke."),
    seeds: int = typer.Option(None, "--seeds", min=1, help="Fine-tuning seeds per variant."),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result document."),
) -> None:
    """SCVD vs FTD: the SFT policy as student, a longer-trained policy as teacher (micro scale)."""
    from agentpost.commands._options import config, sandbox_backend
    from agentpost.lab.presets import scvd_config
    from agentpost.lab.scvd_lab import ScvdLabConfig, run_scvd_lab

    cfg = scvd_config("smoke" if smoke else _scale(scale))
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
    cols = ("pass1", "ICA", "EDR", "VPR", "RSR", "W2R", "R2W")
    typer.echo("variant\t" + "\t".join(cols) + "\tturns\ttokens")
    for v, row in doc["table"].items():
        cells = [_cell(row[k]) for k in cols]
        typer.echo("\t".join([v, *cells, f"{row['turns']['mean']:.1f}",
                              f"{row['tokens']['mean']:.0f}"]))  # fmt: skip
    _directions(doc)
    typer.echo(f"wrote {out / 'scvd_lab.json'}")


@lab_app.command("results")
def results_command(
    hero: Path = typer.Option(..., "--hero", help="Folder of `agentpost lab hero`."),
    scvd: Path = typer.Option(..., "--scvd", help="Folder of `agentpost lab scvd`."),
    out: Path = typer.Option(
        Path("docs/lab/results.json"), "--out", "-o", help="The results document to write."
    ),
    markdown: Path = typer.Option(None, "--markdown", help="Also write the tables as Markdown."),
    load: str = typer.Option("", "--load", help="The load average measured during the runs."),
    code: str = typer.Option("", "--code", help="The commit the experiments ran at."),
    as_json: bool = typer.Option(False, "--json", help="Print the results document."),
) -> None:
    """The results document (docs/lab/results.json) and tables from finished experiments."""
    from agentpost.report.lab import results_doc, results_markdown

    docs = {}
    for name, d, f in (("hero", hero, "hero_lab.json"), ("scvd", scvd, "scvd_lab.json")):
        path = d / f
        if not path.is_file():
            raise InputError(path, None, f"no {f}: run `agentpost lab {name} -o {d}` first")
        docs[name] = json.loads(path.read_text())
    from agentpost.lab import directions

    registered = {"hero": [d.to_json() for d in directions.HERO],
                  "scvd": [d.to_json() for d in directions.SCVD]}  # fmt: skip
    doc = results_doc(docs["hero"], docs["scvd"], load=load, registered=registered, code=code)
    from agentpost.documents.write import atomic_write, write_json

    write_json(out, doc)
    if markdown:
        pf_path = hero / "preflight.json"
        pf = json.loads(pf_path.read_text()) if pf_path.is_file() else None
        atomic_write(markdown, results_markdown(doc, docs["hero"], docs["scvd"], pf))
    if as_json:
        typer.echo(json.dumps(doc, default=str))
        return
    typer.echo(f"wrote {out}" + (f" and {markdown}" if markdown else ""))


HERO_FLAGS = {"steps": "--steps", "group": "--group-size", "seeds": "--seeds", "variants": "--variants",
              "workers": "--workers"}  # fmt: skip


def _directions(doc: dict) -> None:
    for d in doc.get("directions", []):
        typer.echo(f"{d['verdict']}\t{d['name']}\t{_cell(d['estimate'], 3)}\t{d['expected']}")


def asdict_shallow(cfg) -> dict:
    """A dataclass's fields as keyword arguments, nested configs kept as objects."""
    from dataclasses import fields

    return {f.name: getattr(cfg, f.name) for f in fields(cfg)}


def _trainer_prints_to_stderr():
    """The trainers print their logs with ``print``: keep stdout for the result (``--json``)."""
    import contextlib
    import sys

    return contextlib.redirect_stdout(sys.stderr)


def _cell(x: dict, digits: int = 3) -> str:
    if x.get("mean") is None:
        return "NA"
    ci = x.get("ci95")
    return f"{x['mean']:.{digits}f}" + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
