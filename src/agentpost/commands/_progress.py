"""The progress bar of commands that read many trajectories (efficiency, summary, report).

``bar(what, wanted, as_json)`` yields a callable the package calls with the bytes of every line
it reads (``progress(nbytes)``), whose ``total(nbytes)`` sets the size of what will be read (the
trajectory files found), and whose ``stage(text)`` names what follows the reading (the
verdict's bootstrap, the page); or None when there is no bar. The bar is rich's,
on stderr, over the files' total size, with the trajectories counted so far: shown when asked
(``--progress``), else only when stderr is a terminal and the output is not ``--json``, so tests,
pipes and JSON stay quiet.

Layer: edges.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

HELP = ("A progress bar on stderr (default: shown when stderr is a terminal and the output is "
        "not --json).")  # fmt: skip


def progress_option():
    """The ``--progress/--no-progress`` option of every command that reads trajectories."""
    import typer

    return typer.Option(None, "--progress/--no-progress", help=HELP, show_default=False)


class _Bar:
    def __init__(self, progress, task) -> None:
        self._p, self._task, self.n = progress, task, 0

    def __call__(self, nbytes: int) -> None:
        if nbytes > 1:
            self.n += 1
        self._p.update(self._task, advance=nbytes, n=self.n)

    def total(self, nbytes: int) -> None:
        self._p.update(self._task, total=nbytes or None)

    def stage(self, text: str) -> None:
        self._p.update(self._task, description=text)


@contextmanager
def bar(what: str, wanted: bool | None, as_json: bool = False) -> Iterator:
    """See the module docstring: the ``progress`` callable, or None."""
    on = wanted if wanted is not None else (sys.stderr.isatty() and not as_json)
    if not on:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[n]} trajectories"), TimeElapsedColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), transient=False) as p:
        task = p.add_task(what, total=None, n=0)
        b = _Bar(p, task)
        yield b
        b.stage(f"{what}: done")
