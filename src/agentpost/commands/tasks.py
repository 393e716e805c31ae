"""`agentpost tasks ...`: list a task suite, and check that its oracles, no-ops and wrong
solutions score as they must.

Layer: edges.
"""

from __future__ import annotations

import json

import typer

from agentpost.commands._options import sandbox_backend, suite_dir
from agentpost.errors import InputError

tasks_app = typer.Typer(help="Harbor / Terminal-Bench task suites.", no_args_is_help=True)


@tasks_app.command("list")
def list_command(
    suite: str = typer.Option(
        "terminal", "--suite", help="A suite directory or a bundled suite name."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the tasks of a suite."""
    from agentpost.tasks.loader import load_suite

    errors: list[InputError] = []
    tasks = load_suite(suite_dir(suite), errors)
    rows = [
        {
            "id": t.id,
            "format": t.format,
            "category": t.metadata.get("category"),
            "difficulty": t.metadata.get("difficulty"),
            "wrong_solutions": len(t.wrong_solutions),
        }
        for t in tasks
    ]
    skipped = [str(e) for e in errors]
    if as_json:
        typer.echo(json.dumps({"tasks": rows, "skipped": skipped}))
        return
    for r in rows:
        typer.echo(
            f"{r['id']:28} {r['format']:17} {r['category'] or '-':18} {r['difficulty'] or '-'}"
        )
    for line in skipped:
        typer.echo(f"skipped: {line}", err=True)


@tasks_app.command("check")
def check_command(
    suite: str = typer.Option(
        ..., "--suite", help="A suite directory, a task directory, or a bundled suite name."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    workers: int = typer.Option(2, "--workers", min=1, help="Tasks checked at a time."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
    task_id: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    executor: str = typer.Option(
        "local", "--executor", help="Where checks run: local (threads) or ray (Ray workers)."
    ),
) -> None:
    """Run each task's oracle, a no-op and its wrong solutions in fresh sandboxes.

    Exits 1 unless every task scores oracle 1, no-op 0, wrong 0.
    """
    from agentpost.components import resolve
    from agentpost.sandbox.executors import EXECUTORS
    from agentpost.tasks.check import check_suite
    from agentpost.tasks.loader import load_suite

    try:  # the one loader's check, before any sandbox starts (a path must import)
        resolve(EXECUTORS, executor, "executor")
    except ValueError as e:
        raise InputError(None, "--executor", str(e)) from None
    errors: list[InputError] = []
    tasks = load_suite(suite_dir(suite), errors)
    if task_id:
        unknown = sorted(set(task_id) - {t.id for t in tasks})
        if unknown:
            raise InputError(suite, "--task", f"unknown task ids: {', '.join(unknown)}")
        tasks = [t for t in tasks if t.id in task_id]
    result = check_suite(tasks, sandbox_backend(backend), workers=workers, executor=executor)
    result["skipped"] = [str(e) for e in errors]
    if as_json:
        typer.echo(json.dumps(result))
    else:
        for r in result["tasks"]:
            typer.echo(
                f"{'ok ' if r['ok'] else 'BAD'} {r['id']:28} oracle={r.get('oracle_reward')} "
                f"nop={r.get('nop_reward')} wrong={r.get('wrong_reward')} check_ok={r.get('check_ok')}"
            )
            for run, why in (r.get("errors") or {}).items():
                typer.echo(f"    {run}: {_one_line(why)}")
            for item in r.get("unservable") or []:
                what = "note" if item["what"] == "note" else f"cannot serve {item['what']}"
                typer.echo(f"    {what}: {_one_line(item['why'])}")
        for line in result["skipped"]:
            typer.echo(f"SKIPPED {line}")
    if not result["ok"] or errors:
        raise typer.Exit(1)


def _one_line(text: str, limit: int = 300) -> str:
    """The last non-empty lines of an error, joined, at most ``limit`` characters."""
    flat = " | ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return flat if len(flat) <= limit else "..." + flat[-limit:]


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
