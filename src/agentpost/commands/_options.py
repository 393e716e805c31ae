"""Option values several commands share: a sandbox backend by name, a task suite by path or name,
prices, and config dataclasses whose own checks become one-line input errors.

Layer: edges.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentpost.errors import InputError


def sandbox_backend(name: str, option: str = "--backend"):
    """The sandbox backend ``name`` (``bwrap``, ``docker`` or ``module:Class``)."""
    from agentpost.sandbox.registry import get_backend

    try:
        return get_backend(name)
    except ValueError as e:
        raise InputError(None, option, str(e)) from None


def bundled_suites() -> dict[str, Path]:
    """Every suite shipped inside the package, by name: the terminal suite(s) of ``tasks`` and
    the security suite(s) of ``security``; any command that takes a suite takes these names."""
    from agentpost.security.suite import bundled_suite_dir
    from agentpost.tasks.loader import bundled_suite_path

    roots = (bundled_suite_path().parent, bundled_suite_dir().parent)
    return {p.name: p for root in roots for p in sorted(root.iterdir())
            if p.is_dir() and not p.name.startswith(("_", "."))}  # fmt: skip


def suite_dir(value: str | Path) -> Path:
    """A task suite given as a directory, or as the name of a bundled suite (``terminal``,
    ``secure``): one resolver for every command that takes ``--suite``."""
    value = str(value)
    path = Path(value)
    if path.is_dir():
        return path
    bundled = bundled_suites()
    if "/" not in value and not path.exists():
        if value in bundled:
            return bundled[value]
        raise InputError(value, "--suite", "no suite directory or bundled suite of that name "
                         f"(bundled: {', '.join(bundled)})")  # fmt: skip
    raise InputError(value, None, "not a task suite directory")


def suite_dirs(values: list | None) -> list[Path] | None:
    """``suite_dir`` of each value (None when none is given: the command's default)."""
    return [suite_dir(v) for v in values] if values else None


AGENT_HELP = ("Only the trajectories of this agent, named as the verdict names it (its model, "
              "plus [run ID] when the model ran in several runs); repeatable.")  # fmt: skip
TASK_HELP = "Only the trajectories of this task id; repeatable."


def agent_option(annotated: bool = False):
    """The ``--agent`` filter every command that reads trajectories takes (``annotated``: the
    form for ``Annotated[...] = None`` parameters)."""
    import typer

    return typer.Option("--agent", help=AGENT_HELP) if annotated else typer.Option(
        None, "--agent", help=AGENT_HELP)  # fmt: skip


def task_option(annotated: bool = False, help: str = TASK_HELP):
    """The ``--task`` filter every command that reads trajectories takes."""
    import typer

    return typer.Option("--task", help=help) if annotated else typer.Option(
        None, "--task", help=help)  # fmt: skip


PRICE_FLAGS = {"input": "--price-in", "cached": "--price-cached", "output": "--price-out",
               "unit": "--price-unit"}  # fmt: skip


def price_option(flag: str):
    """The typer option of one ``--price-*`` flag; every command declares them with this."""
    import typer

    what = {"--price-in": "uncached input tokens", "--price-out": "output tokens",
            "--price-cached": "cached input tokens (default 0.1 x --price-in: HERO spec b.10 prices a cached token at a tenth of an uncached one)"}[flag]  # fmt: skip
    return typer.Option(None, flag, help=f"Price per 1M {what}.")


def prices(price_in: float | None, price_cached: float | None, price_out: float | None,
           unit: str = "USD"):  # fmt: skip
    """The ``--price-in/--price-cached/--price-out`` flags of every command, as one
    ``agentpost.prices.Prices`` (per million tokens), or None when none is given."""
    from agentpost.prices import Prices

    if price_in is None and price_cached is None and price_out is None:
        return None
    if price_in is None or price_out is None:
        raise InputError(None, "--price-in/--price-out", "give both, or neither")
    return config(Prices, PRICE_FLAGS, input=price_in, cached=price_cached, output=price_out,
                  unit=unit)  # fmt: skip


def config(cls, flags: dict[str, str] | None = None, **kw):
    """``cls(**kw)`` for a config dataclass that validates itself. Its ``ValueError`` names the
    field (``Cls.field must be ...``) and becomes a one-line ``InputError`` placed at that
    field's flag in ``flags`` (or at no flag: the message names the field)."""
    try:
        return cls(**kw)
    except ValueError as e:
        m = re.match(rf"{cls.__name__}\.(\w+)", str(e))
        where = (flags or {}).get(m.group(1)) if m else None
        raise InputError(None, where, str(e)) from None


def read_trajectory_files(
    files: list[Path], empty: str, agents: list[str] | None = None, tasks: list[str] | None = None
) -> tuple[list, dict[str, str]]:
    """(trajectories, id → the folder of its file) from JSONL ``files``, each file and each
    trajectory once (``trajectory.select.read_files`` warns about repeats), only ``agents`` and
    ``tasks`` when given; a missing file or no trajectory at all is an ``InputError`` (``empty``
    says what was expected). The folders are what recorded snapshot references resolve against."""
    from agentpost.trajectory.inputs import read_files
    from agentpost.trajectory.select import select

    trajs, roots = [], {}
    for f, batch in read_files(files):
        for t in batch:
            trajs.append(t)
            roots[t.id] = str(Path(f).resolve().parent)
    if not trajs:
        raise InputError(files[0], None, empty)
    return select(trajs, agents, tasks), roots


def output_file(path: Path | None) -> Path | None:
    """``-o FILE`` of a command: a missing folder above it is created, and said so on stderr
    (one ``note:`` line), the same way for every command that writes a file."""
    if path is not None and not path.parent.exists():
        import sys

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(path.parent, None, f"cannot create the folder: {e.strerror}") from None
        print(f"note: created the folder {path.parent} for {path.name}", file=sys.stderr)
    return path
