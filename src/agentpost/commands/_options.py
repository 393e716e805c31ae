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


def suite_dir(value: str) -> Path:
    """A task suite given as a directory, or as the name of a bundled suite (``terminal``)."""
    from agentpost.tasks.loader import bundled_suite_path

    path = Path(value)
    if path.is_dir():
        return path
    if "/" not in value and not path.exists():
        return bundled_suite_path(value)
    raise InputError(value, None, "not a task suite directory")


PRICE_FLAGS = {"input": "--price-in", "cached": "--price-cached", "output": "--price-out",
               "unit": "--price-unit"}  # fmt: skip


def price_option(flag: str):
    """The typer option of one ``--price-*`` flag; every command declares them with this."""
    import typer

    what = {"--price-in": "uncached input tokens", "--price-out": "output tokens",
            "--price-cached": "cached input tokens (default 0.1 x --price-in, spec b.10)"}[flag]  # fmt: skip
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


def read_trajectory_files(files: list[Path], empty: str) -> tuple[list, dict[str, str]]:
    """(trajectories, id → the folder of its file) from JSONL ``files``; a missing file or no
    trajectory at all is an ``InputError`` (``empty`` says what was expected). The folders are
    what recorded snapshot references resolve against."""
    from agentpost.trajectory.io import read_jsonl

    for f in files:
        if not f.is_file():
            raise InputError(f, None, "no such trajectory file")
    trajs, roots = [], {}
    for f in files:
        for t in read_jsonl(f):
            trajs.append(t)
            roots[t.id] = str(f.resolve().parent)
    if not trajs:
        raise InputError(files[0], None, empty)
    return trajs, roots
