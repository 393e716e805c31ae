"""`agentpost security demo`: the scripted security agents on the suite, graded, annotated and
attributed.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend, suite_dir
from agentpost.commands.security._output import echo
from agentpost.errors import InputError


def demo_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name (default: secure)."
    ),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    workers: int = typer.Option(4, "--workers", min=1, help="Trajectories run at once."),
    agents: list[str] | None = typer.Option(
        None,
        "--policy",
        help="Scripted policies, repeatable (default: secure-minded, functional-only; also "
        "generic-tester, mixed); each goes by scripted/<name>.",
    ),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Run scripted security agents on the suite, then grade, annotate and attribute.

    Writes trajectories.jsonl, grades.jsonl, annotations.jsonl, labels.jsonl, summary.json (metrics, per-CWE tables and attribution) and attribution.json under OUT.
    """
    from agentpost.security.demo_output import write_demo
    from agentpost.security.pipeline import scripted_demo
    from agentpost.security.scripted import choose_agents
    from agentpost.security.suite import load_suite, select_tasks

    chosen = load_suite(suite_dir(suite) if suite else None)
    try:
        chosen = select_tasks(chosen, tasks)
    except ValueError as e:
        raise InputError(None, "--task", str(e)) from None
    try:
        names = choose_agents(agents)
    except ValueError as e:
        raise InputError(None, "--policy", str(e)) from None
    out.mkdir(parents=True, exist_ok=True)  # before the work: an unwritable -o fails at once
    res = scripted_demo(chosen, sandbox_backend(backend), workers=workers, agents=names)
    write_demo(out, res, chosen)  # what `agentpost demo` writes under security/
    echo({"out": str(out), "metrics": res["metrics"]})
