"""`agentpost summary RUN_DIR` (the verdict) and `agentpost compare RUN_A RUN_B`.

Layer: edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import atomic_write, write_json

COMPARE = fmt("agentpost.compare")


def register(app: typer.Typer) -> None:
    app.command("summary", no_args_is_help=True)(summary)
    app.command("compare", no_args_is_help=True)(compare)


def _mark_unavailable(doc: dict) -> None:
    """Say so when a recommended command is not part of this build (yet): the command tree is
    the one running this command (click's root context), so commands/ never imports the CLI."""
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:  # called as a library function: there is no command tree to check against
        return
    root = ctx.find_root().command
    for a in doc["agents"]:
        sig = a["signal"]
        words = (sig.get("command") or "").split()
        if len(words) >= 3 and words[0] == "agentpost":
            group = getattr(root, "commands", {}).get(words[1])
            sub = getattr(group, "commands", None)
            if group is None or (sub is not None and words[2] not in sub):
                sig["available"] = False
                sig["command"] += "  (not in this build of agentpost yet)"


def summary(
    run_dir: Path = typer.Argument(..., help="A run directory (run, import, demo or diagnose)."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Also write the JSON here."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Per agent: the behaviours that cost it most (effect sizes, 95% CIs, example trajectories) and the training signal to build next, with its command."""
    from agentpost.report.rundata import load
    from agentpost.report.verdict import verdict
    from agentpost.report.verdict_view import lines

    data = load(run_dir)
    first = str(run_dir / data.files[0]) if data.files else None
    doc = verdict(list(data.rows.values()), data.records, data.grades, n_boot=bootstrap,
                  seed=seed, trajectories=first, suite=data.suite)  # fmt: skip
    _mark_unavailable(doc)
    doc["producer"] = producer(verdict, run_dir=str(run_dir), bootstrap=bootstrap, seed=seed)
    if out is not None:
        write_json(out, doc, indent=None)
    if as_json:
        typer.echo(json.dumps(doc))
    elif not doc["agents"]:
        typer.echo(f"{run_dir}: no trajectories or security grades found")
    else:
        typer.echo("\n".join(lines(doc)))


def compare(
    run_a: Path = typer.Argument(..., help="Run directory A (the baseline)."),
    run_b: Path = typer.Argument(..., help="Run directory B (may be A again with --agent-b)."),
    agent_a: str | None = typer.Option(None, "--agent-a", help="The agent of A to compare."),
    agent_b: str | None = typer.Option(None, "--agent-b", help="The agent of B to compare."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Also write it: FILE.html (a report page) or FILE.json."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Paired resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
) -> None:
    """Deltas B − A with paired bootstrap 95% CIs (pairs are tasks): resolution, tokens, TRS, unproductive turns, the seven SCVD metrics, FuncPass and SecPass."""
    from agentpost.report.compare import compare as compare_sides
    from agentpost.report.compare_view import lines
    from agentpost.report.rundata import load, pairs

    a, b = load(run_a), load(run_b)
    docs = [compare_sides(x, y, n_boot=bootstrap, seed=seed)
            for x, y in pairs(a, b, agent_a, agent_b)]  # fmt: skip
    made_by = producer(compare_sides, run_a=str(run_a), run_b=str(run_b), agent_a=agent_a,
                       agent_b=agent_b, bootstrap=bootstrap, seed=seed)  # fmt: skip
    doc = {"format": COMPARE, "producer": made_by, "comparisons": docs}
    if out is not None:
        _write_compare(out, doc)
    if as_json:
        typer.echo(json.dumps(doc))
    else:
        typer.echo("\n\n".join("\n".join(lines(d)) for d in docs))


def _write_compare(out: Path, doc: dict) -> None:
    from agentpost.report.compare_view import section
    from agentpost.report.html import page

    if out.suffix == ".html":
        sec = section(doc["comparisons"])
        atomic_write(out, page("agentpost compare", "B − A", [sec] if sec else [], doc["producer"]))
    else:
        write_json(out, doc, indent=None)
