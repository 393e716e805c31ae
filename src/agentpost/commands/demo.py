"""`agentpost demo [-o DIR] [--backend NAME]`: every stage offline, one report.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    out: Path = typer.Option(
        Path("agentpost-demo"),
        "-o",
        "--out",
        help="Output directory (reused: finished stages are skipped).",
    ),
    attempts: int = typer.Option(
        1, "--group-size", "-G", min=1, help="Rollouts per task and reference policy (G)."
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only the first N tasks of each bundled suite (a quick look)."
    ),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
) -> None:
    """Run every stage offline on the bundled suites and write JSON per stage plus report.html.

    Scripted agents in sandboxes (bubblewrap by default): no model, no network.

    The last line printed is the path of the report.
    """
    from rich.console import Console

    from agentpost.commands._signals import interrupted_code, signals_as_interrupt
    from agentpost.demo.pipeline import failed_stages, run_demo

    console = Console(stderr=True, highlight=False)
    with signals_as_interrupt() as caught:
        try:
            path = run_demo(
                out,
                attempts=attempts,
                limit=limit,
                backend=backend,
                progress=lambda msg: console.print(f"· {msg}", markup=False),
            )
        except KeyboardInterrupt:
            console.print(f"interrupted: the stages that finished are kept in {out}; run the "
                          "same command again to resume (finished stages are skipped)",
                          markup=False)  # fmt: skip
            raise typer.Exit(interrupted_code(caught)) from None
    failed = failed_stages(path.parent)
    if failed:
        console.print(
            f"[red]stages that did not finish: {', '.join(failed)} (see demo.json and the report)[/red]"
        )
    print(path)  # the last line, whatever happened
    if failed:
        raise typer.Exit(1)
