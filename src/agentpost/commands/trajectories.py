"""`agentpost import | stats | show`: canonical trajectories from scaffold logs.

Layer: edges.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from agentpost.commands._options import agent_option, output_file, task_option
from agentpost.trajectory.importers import FORMATS


def register(app: typer.Typer) -> None:
    app.command("import")(import_cmd)
    app.command("stats")(stats_cmd)
    app.command("show")(show_cmd)


def import_cmd(
    paths: list[Path] = typer.Argument(..., help="Files or folders (folders are walked)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output canonical JSONL."),
    fmt: str | None = typer.Option(
        None,
        "--format",
        help=f"Importer: {', '.join(FORMATS)}, or a dotted module path (default: detected).",
    ),
    keep_raw: bool = typer.Option(False, "--keep-raw", help="Keep the source records in `raw`."),
    as_json: bool = typer.Option(False, "--json", help="Print the import summary as JSON."),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Import files in this many processes (large folders)."
    ),
    summary: Path | None = typer.Option(
        None, "--summary", help="Also write the import summary document (agentpost.import/1)."
    ),
    skip_hidden: bool = typer.Option(
        False,
        "--skip-hidden",
        help="Leave dot-folders out of folder walks (by default .claude, .codex, .openhands "
        "and other dot-folders are imported).",
    ),
    name: str | None = typer.Option(
        None,
        "--name",
        help="Name this source: its run id in every trajectory, so reports and "
        "compare tell it from other imports of the same model.",
    ),
) -> None:
    """Import trajectories into one canonical JSONL file.

    Prints one coverage line per source format (usage, tool-call arguments, results, exit codes, outcomes read) and a warning naming file and field for each file holding less than its layout promises.

    Bad files are listed on stderr and make the exit status 1; the good ones are still written.
    """
    from agentpost.trajectory.import_summary import import_to_file, write_import_summary

    output_file(out)
    res = import_to_file(paths, out, fmt, keep_raw, workers, skip_hidden, run_id=name)
    if summary is not None:
        args = {"paths": [str(p) for p in paths], "format": fmt or "auto", "keep_raw": keep_raw,
                **({"name": name} if name else {})}  # fmt: skip
        write_import_summary(summary, res, args)
    if as_json:
        import json

        typer.echo(json.dumps(res.to_json()))
    else:
        by_fmt = ", ".join(f"{k} {v}" for k, v in sorted(res.formats.items()))
        typer.echo(
            f"imported {res.imported} trajectories from {res.files} files ({by_fmt or 'none'});"
            f" skipped {len(res.skipped)}; failed {len(res.errors)}"
            + (f" -> {out}" if res.out else "")
        )
        for row in res.skipped:
            typer.echo(f"skipped: {row['path']}: {row['reason']}")
        _coverage(res.coverage, res.warnings)
    for err in res.errors:
        print(f"error: {err}", file=sys.stderr)
    if res.errors:
        raise typer.Exit(1)


SHOWN_WARNINGS = 20  # the rest are in --json and --summary


def _coverage(coverage: dict[str, dict[str, int]], warnings: list[str]) -> None:
    from agentpost.trajectory.coverage import coverage_line
    from agentpost.trajectory.import_summary import grouped

    for fmt, counts in coverage.items():
        typer.echo(coverage_line(fmt, counts))
    warnings = grouped(warnings)
    for w in warnings[:SHOWN_WARNINGS]:
        typer.echo(f"warning: {w}")
    if len(warnings) > SHOWN_WARNINGS:
        more = len(warnings) - SHOWN_WARNINGS
        typer.echo(f"warning: {more} more (all of them: --json or --summary FILE)")


def stats_cmd(
    file: Path = typer.Argument(..., help="Canonical JSONL."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
) -> None:
    """Turns, tool calls and tokens per trajectory, and their totals."""
    import orjson

    from agentpost.errors import InputError
    from agentpost.trajectory.io import iter_jsonl
    from agentpost.trajectory.render import stats_row, stats_table, stats_totals
    from agentpost.trajectory.select import select

    trajs = iter_jsonl(file)
    if agents or tasks:
        trajs = select(list(trajs), agents, tasks)
    rows = [stats_row(t) for t in trajs]
    if not rows:
        raise InputError(file, "byte 0", "no trajectories (empty file)")
    totals = stats_totals(rows)
    if as_json:
        sys.stdout.write(orjson.dumps({"trajectories": rows, "totals": totals}).decode() + "\n")
        return

    from agentpost.trajectory.render import console

    console().print(stats_table(rows, totals))


def show_cmd(
    file: Path = typer.Argument(..., help="Canonical JSONL."),
    id: str | None = typer.Option(None, "--id", help="Trajectory id (default: the first)."),
    full: bool = typer.Option(False, "--full", help="Print long texts whole, not clipped."),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
) -> None:
    """Render one trajectory in the terminal (the first of --agent/--task, or --id)."""
    from rich.console import Console

    from agentpost.errors import InputError
    from agentpost.trajectory.io import iter_jsonl
    from agentpost.trajectory.render import render
    from agentpost.trajectory.select import select

    trajs = iter_jsonl(file)
    if agents or tasks:
        trajs = select(list(trajs), agents, tasks)
    for t in trajs:
        if id is None or t.id == id:
            render(t, Console(), full)
            return
    if id is None:
        raise InputError(file, "byte 0", "no trajectories (empty file)")
    raise InputError(file, None, f"no trajectory with id {id!r}")
