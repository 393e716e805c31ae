"""Every command's help reads well in typer's rich output.

Typer (rich mode) keeps single line breaks inside a help paragraph, so a docstring wrapped at
100 columns shows up broken mid-sentence, in `agentpost --help` (first paragraph) as in the
command's own help. Each paragraph of a command's help must therefore be one line.
"""

from __future__ import annotations

import inspect

import typer.main

from agentpost import cli


def _commands(cmd, path):
    yield path, cmd
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _commands(sub, [*path, name])


def test_every_help_paragraph_is_one_line() -> None:
    cli._register()
    root = typer.main.get_command(cli.app)
    seen, bad = 0, []
    for path, cmd in _commands(root, ["agentpost"]):
        seen += 1
        for para in inspect.cleandoc(cmd.help or "").split("\n\n"):
            if "\n" in para.strip():
                bad.append(f"{' '.join(path)}: {para[:60]!r}")
        for p in cmd.params:
            if "\n" in (getattr(p, "help", None) or ""):
                bad.append(f"{' '.join(path)} {p.name}: option help has a line break")
    assert seen > 20  # the walk reached the sub-commands
    assert not bad, "\n".join(bad)
