"""The progress bar of commands that read many trajectories (efficiency, summary, report).

``bar(files, what, wanted, as_json)`` yields a callable the package calls with the bytes of
every line it reads (``progress(nbytes)``), and whose ``stage(text)`` names what follows the
reading (the verdict's bootstrap, the page); or None when there is no bar. The bar is rich's,
on stderr, over the files' total size, with the trajectories counted so far: shown when asked
(``--progress``), else only when stderr is a terminal and the output is not ``--json``, so tests,
pipes and JSON stay quiet.

Layer: edges.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

HELP = ("A progress bar on stderr (default: shown when stderr is a terminal and the output is "
        "not --json).")  # fmt: skip


def progress_option():
    """The ``--progress/--no-progress`` option of every command that reads trajectories."""
    import typer

    return typer.Option(None, "--progress/--no-progress", help=HELP, show_default=False)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def trajectory_files(run_dir: Path) -> list[Path]:
    """The ``*.jsonl`` files of a run directory (depth <= 3), for the bar's total only: what is
    read is decided by ``report.scan``."""
    out = []
    for depth in range(4):
        out += [p for p in run_dir.glob("/".join(["*"] * depth + ["*.jsonl"])) if p.is_file()]
    return out


class _Bar:
    def __init__(self, progress, task) -> None:
        self._p, self._task, self.n = progress, task, 0

    def __call__(self, nbytes: int) -> None:
        if nbytes > 1:
            self.n += 1
        self._p.update(self._task, advance=nbytes, n=self.n)

    def stage(self, text: str) -> None:
        self._p.update(self._task, description=text)


@contextmanager
def bar(files: Sequence[Path], what: str, wanted: bool | None, as_json: bool = False) -> Iterator:
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
        task = p.add_task(what, total=sum(_size(f) for f in files) or None, n=0)
        b = _Bar(p, task)
        yield b
        b.stage(f"{what}: done")
