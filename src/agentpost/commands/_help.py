"""Help that reads as words: the value column of every option names what to give, never a Python
type (typer shows ``<bool>``, ``<list[Path]>``, ``<str>``), and a flag shows none.

``tidy(command)`` walks the click command tree once (``cli.command()`` calls it) and sets each
parameter's metavar from its click type: a flag gets none, a number ``N`` or ``NUMBER``, a path
``PATH``, a choice its values, anything else ``TEXT``; an argument is named by its parameter
name in capitals (``FILES...`` when it takes several).

Layer: edges.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import get_args

import click

WORDS = {int: "N", float: "NUMBER"}


def _metavar(p: click.Parameter) -> str:
    desc = getattr(p, "type_descriptor", None)  # typer >= 0.20 keeps the annotation here
    if desc is not None:
        if desc.is_choice:
            return "|".join(str(c) for c in desc.choices or ())
        ann = desc.annotation
        if desc.is_list and get_args(ann):
            ann = get_args(ann)[0]
        if desc.is_path or (isinstance(ann, type) and issubclass(ann, PurePath)):
            return "PATH"
        return WORDS.get(ann, "TEXT")
    t = getattr(p, "type", None)  # older typer: click's own types
    if isinstance(t, click.Choice):
        return "|".join(str(c) for c in t.choices)
    if isinstance(t, click.Path):
        return "PATH"
    return {"integer": "N", "float": "NUMBER"}.get(getattr(t, "name", ""), "TEXT")


def tidy(cmd: click.Command) -> click.Command:
    """``cmd`` with every parameter's metavar set (see the module docstring); returns it."""
    help_opt = cmd.get_help_option(click.Context(cmd))
    for p in [*cmd.params, *([help_opt] if help_opt else [])]:
        if p.param_type_name == "option" and (
            getattr(p, "is_flag", False) or getattr(p, "count", 0)
        ):
            p.metavar = ""
        elif p.param_type_name == "argument":
            p.metavar = (p.name or "value").upper()
            word = _metavar(p) + ("..." if p.nargs != 1 else "")
            if hasattr(p, "display_type_rich"):  # typer's value column of an argument
                p.display_type_rich = lambda ctx, w=word: w  # type: ignore[method-assign]
        elif p.metavar is None:
            p.metavar = _metavar(p)
    for sub in (getattr(cmd, "commands", None) or {}).values():
        tidy(sub)
    return cmd
