"""`agentpost ...`: read inputs, call pure code, write outputs; no logic of its own.

Each area's commands live in ``agentpost/commands/<area>.py`` with a ``register(app)`` function;
this module only assembles them and turns typed errors into one-line messages with a non-zero
exit. Heavy imports happen inside commands, never here.

Layer: edges.
"""

from __future__ import annotations

import importlib
import sys

import typer
import typer.main

from agentpost.errors import AgentpostError

# Areas in the order they register (typer lists plain commands before command groups).
AREAS = [
    "trajectories",
    "run",
    "tasks",
    "sandbox",
    "images",
    "replay",
    "efficiency",
    "scvd",
    "security",
    "train",
    "demo",
    "report",
    "summary",
    "lab",
]

app = typer.Typer(
    name="agentpost",
    help="Find which behaviour holds a coding agent back, and turn it into a training signal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from agentpost import __version__

        print(f"agentpost {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Find which behaviour holds a coding agent back, and turn it into a training signal."""


def _register() -> None:
    if app.registered_commands:  # once per process (tests call ``main`` many times)
        return
    for area in AREAS:
        importlib.import_module(f"agentpost.commands.{area}").register(app)


def command():
    """The CLI's click command tree, its help tidied (``commands._help.tidy``: no Python type
    names, flags without a value column); ``main`` runs it and tests read it."""
    from agentpost.commands._help import tidy

    _register()
    return tidy(typer.main.get_command(app))


def main(argv: list[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default: ``sys.argv[1:]``); typed errors and failures to read or
    write a named path become one ``error:`` line and exit status 2, never a traceback. Old
    option spellings are rewritten first (``commands._aliases``), each with a warning."""
    from agentpost.commands._aliases import rewrite_warn
    from agentpost.commands._signals import interrupted_code, signals_as_interrupt

    argv, warnings = rewrite_warn(list(sys.argv[1:] if argv is None else argv))
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    cli = command()
    try:
        with signals_as_interrupt() as caught:  # SIGTERM/SIGHUP unwind (and clean up) like Ctrl-C
            try:
                cli(args=argv, prog_name="agentpost")
            except SystemExit:
                if caught:  # click said "Aborted!": exit as the signal would have
                    sys.exit(interrupted_code(caught))
                raise
    except AgentpostError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:  # a path the user named: unwritable, a symlink loop, a full disk
        if e.filename is None:
            raise
        print(f"error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        sys.exit(2)
