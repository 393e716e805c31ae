"""`agentpost images ...`: build the offline base images and task images for the docker backend,
and show the FROM table that maps task Dockerfiles onto them.

Layer: edges.
"""

from __future__ import annotations

import json
import time

import typer

from agentpost.commands._options import suite_dir

images_app = typer.Typer(help="Offline images for the docker backend.", no_args_is_help=True)


@images_app.command("build")
def build_command(
    suite: list[str] = typer.Option(
        [], "--suite", help="Also build every task image of this suite (repeatable)."
    ),
    base: list[str] = typer.Option(
        [],
        "--base",
        help="Bases to build: KIND or KIND@RELEASE (python@bullseye); default: bookworm's "
        "minimal, python, build and trixie's python, build.",
    ),
    from_table: str = typer.Option(
        None, "--from-table", help="TOML file whose [from] patterns override the FROM table."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the tags built (and failures) as JSON; logs go to stderr."
    ),
) -> None:
    """Build the local base images (cached by content hash) and, with --suite, task images.

    Exits 1 when any task image cannot be built (each failure is printed with its reason)."""
    import os

    from agentpost.sandbox.docker import DockerBackend
    from agentpost.sandbox.images import DEFAULT_BASES, ensure_base
    from agentpost.tasks.images import ensure_image
    from agentpost.tasks.loader import load_suite

    if from_table:
        os.environ["AGENTPOST_FROM_TABLE"] = from_table
    backend = DockerBackend()
    say = (lambda m: typer.echo(m, err=True)) if as_json else typer.echo
    doc: dict = {"bases": {}, "tasks": {}, "failed": {}, "skipped": []}
    for name in base or list(DEFAULT_BASES):
        t0 = time.monotonic()
        tag = doc["bases"][name] = ensure_base(backend, name, log=say)
        say(f"base {name:16} {tag}  ({time.monotonic() - t0:.1f} s)")
    for s in suite:
        errors: list = []
        for task in load_suite(suite_dir(s), errors):
            t0 = time.monotonic()
            try:
                tag = doc["tasks"][task.id] = ensure_image(task, backend, log=say)
                say(f"task {task.id:40} {tag}  ({time.monotonic() - t0:.1f} s)")
            except Exception as e:  # one task's failure never stops the others
                doc["failed"][task.id] = str(e)
                say(f"FAIL {task.id:40} {e}")
        for e in errors:
            doc["skipped"].append(str(e))
            say(f"SKIP {e}")
    failed = len(doc["failed"]) + len(doc["skipped"])
    if as_json:
        typer.echo(json.dumps(doc))
    if failed:
        raise typer.Exit(1)


@images_app.command("table")
def table_command(
    from_table: str = typer.Option(None, "--from-table", help="TOML overrides file."),
    suite: list[str] = typer.Option(
        [], "--suite", help="Also say where each task's FROM lines map (repeatable)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Print the FROM table: which local base (Debian release, Python) each task FROM pattern builds on, and which FROMs cannot be served and why; with --suite, each task's FROMs."""
    from agentpost.sandbox.images import describe_table, load_from_table, table_rows
    from agentpost.tasks.images import task_froms
    from agentpost.tasks.loader import load_suite

    table = load_from_table(from_table)
    rows = table_rows(describe_table(table))
    tasks: dict = {}
    for s_ in suite:
        for task in load_suite(suite_dir(s_), []):
            tasks[task.id] = task_froms(task, table)
    if as_json:
        doc = {"from": {r["pattern"]: r["target"] for r in rows}, "rows": rows}
        if suite:
            doc["tasks"] = tasks
        typer.echo(json.dumps(doc))
        return
    typer.echo(f"{'FROM pattern':38} {'base':16} {'Debian':9} {'Python':6} then")
    for r in rows:
        if r["base"] is None:
            typer.echo(f"{r['pattern']:38} {r['target']}")
        else:
            extra = "; ".join(r["extra"])
            typer.echo(
                f"{r['pattern']:38} {r['base']:16} {r['release'] or '-':9} "
                f"{r['python'] or '-':6} {extra}"
            )
    for tid, froms in tasks.items():
        for f in froms:
            typer.echo(f"task {tid:36} FROM {f['image']:34} -> {f['target']}")


def register(app: typer.Typer) -> None:
    app.add_typer(images_app, name="images")
