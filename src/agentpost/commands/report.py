"""`agentpost report RUN_DIR`.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import agent_option, output_file, task_option
from agentpost.commands._progress import bar, progress_option


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run_dir: Path = typer.Argument(
        ..., help="A run directory (diagnose, run, efficiency, security or demo output)."
    ),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="HTML file, or a folder for report.html (default: RUN_DIR)."
    ),
    compare: Path | None = typer.Option(
        None, "--compare", help="A second run directory: add a compare section (B = it)."
    ),
    agent_a: str | None = typer.Option(None, "--agent-a", help="With --compare: agent of A."),
    agent_b: str | None = typer.Option(None, "--agent-b", help="With --compare: agent of B."),
    agents: list[str] | None = agent_option(),
    tasks: list[str] | None = task_option(),
    progress: bool | None = progress_option(),
) -> None:
    """Render an offline HTML report for any run directory (a large run's trajectories in a folder beside it); prints its path."""
    import sys

    from agentpost.report.build import render_run_dir

    def warn(m: str) -> None:
        print(f"warning: {m}", file=sys.stderr)

    if out is not None and out.suffix == ".html":
        output_file(out)
    with bar("reading", progress) as shown:
        path = render_run_dir(run_dir, out, warn, compare_to=compare, agents=(agent_a, agent_b),
                              only_agents=agents, only_tasks=tasks, require=True,
                              progress=shown)  # fmt: skip
    print(path)
