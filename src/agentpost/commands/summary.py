"""`agentpost summary RUN_DIR` (the verdict) and `agentpost compare RUN_A RUN_B`.

Layer: edges.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from agentpost.commands._options import agent_option, output_file, task_option
from agentpost.commands._progress import bar, progress_option
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import atomic_write, write_json
from agentpost.errors import InputError
from agentpost.intervals import RESAMPLES

BOOT_HELP = "Bootstrap resamples for the intervals of means and token shares (0: none)."

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
    bootstrap: int = typer.Option(RESAMPLES, "--bootstrap", min=0, help=BOOT_HELP),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
    progress: bool | None = progress_option(),
) -> None:
    """Per agent: the behaviours that cost it most (effect sizes, 95% intervals, example trajectories) and the training signal to build next, with its command."""
    from agentpost.report.rundata import from_found
    from agentpost.report.scan import nothing_here, scan
    from agentpost.report.verdict import verdict
    from agentpost.report.verdict_view import lines

    found = scan(run_dir.resolve())
    with bar("reading", progress, as_json) as shown:
        data = from_found(run_dir.resolve(), found, agents, tasks, progress=shown)
        if not data.rows and not data.grades:
            raise nothing_here(run_dir, found)
        if shown is not None:
            shown.stage("bootstrap")
        rows = [dict(r, file=str(run_dir / r["file"]) if r.get("file") else None)
                for r in data.rows.values()]  # fmt: skip
        doc = verdict(rows, data.records, data.grades, n_boot=bootstrap, seed=seed,
                      suite=data.suite)  # fmt: skip
    _mark_unavailable(doc)
    doc["producer"] = producer(verdict, run_dir=str(run_dir), bootstrap=bootstrap, seed=seed,
                               agents=agents, tasks=tasks)  # fmt: skip
    if out is not None:
        write_json(output_file(out), doc, indent=None)
    if as_json:
        typer.echo(json.dumps(doc))
    else:
        typer.echo("\n".join(lines(doc)))


def compare(
    runs: list[Path] = typer.Argument(
        ...,
        help="Run directories: A (the baseline), then one or more to compare with it, each as B "
        "(a run may be A again, with --agent-b).",
    ),
    agent_a: str | None = typer.Option(None, "--agent-a", help="The agent of A to compare."),
    agent_b: str | None = typer.Option(
        None, "--agent-b", help="The agent of each B to compare (the same name in every B)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="Also write it: FILE.html (a report page) or FILE.json."
    ),
    bootstrap: int = typer.Option(
        RESAMPLES, "--bootstrap", min=0, help="Bootstrap resamples for the intervals (0: none)."
    ),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    tasks: list[str] | None = task_option(),
) -> None:
    """Deltas B − A with paired bootstrap 95% intervals (pairs are tasks; two-sample intervals when the runs share too few tasks): resolution, tokens, TRS, unproductive turns, the seven SCVD metrics, FuncPass and SecPass."""
    from agentpost.report.compare import compare as compare_sides
    from agentpost.report.compare_view import lines
    from agentpost.report.rundata import load, pairs

    if len(runs) < 2:
        raise InputError(None, "RUNS", "give two or more run directories: A, then each B")
    a = load(runs[0], tasks=tasks)
    docs = []
    for run_b in runs[1:]:
        b = load(run_b, tasks=tasks)
        docs += [compare_sides(x, y, n_boot=bootstrap, seed=seed)
                 for x, y in pairs(a, b, agent_a, agent_b)]  # fmt: skip
    if not any(d["metrics"] for d in docs):
        raise InputError(None, None, f"{runs[0]} and {', '.join(map(str, runs[1:]))} have no "
                         "metric in common (no trajectories or grades of the same kind): nothing "
                         "to compare")  # fmt: skip
    made_by = producer(compare_sides, run_a=str(runs[0]), run_b=[str(r) for r in runs[1:]],
                       agent_a=agent_a, agent_b=agent_b, bootstrap=bootstrap, seed=seed,
                       tasks=tasks)  # fmt: skip
    doc = {"format": COMPARE, "producer": made_by, "comparisons": docs}
    if out is not None:
        _write_compare(output_file(out), doc)
        print(f"wrote {out} ({len(docs)} comparisons)", file=sys.stderr)
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
