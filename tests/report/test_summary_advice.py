"""`agentpost summary` marks a recommended command that this build lacks, checked against the
command tree that is running (so commands/ never imports the CLI module)."""

from __future__ import annotations

import click
import typer.main

from agentpost import cli
from agentpost.commands.summary import _mark_unavailable


def _doc(*commands: str) -> dict:
    return {"agents": [{"signal": {"command": c}} for c in commands]}


def test_advice_missing_from_the_running_command_tree_is_marked() -> None:
    cli._register()
    root = typer.main.get_command(cli.app)
    doc = _doc("agentpost hero advantages T.jsonl", "agentpost hero nosuch T.jsonl",
               "agentpost nosuchgroup x y", "agentpost diagnose T.jsonl --suite S")  # fmt: skip
    with click.Context(root):
        _mark_unavailable(doc)
    marks = [a["signal"].get("available", True) for a in doc["agents"]]
    assert marks == [True, False, False, True]
    assert doc["agents"][1]["signal"]["command"].endswith("(not in this build of agentpost yet)")
    # called as a library function (no command running): nothing is claimed either way
    lib = _doc("agentpost nosuchgroup x y")
    _mark_unavailable(lib)
    assert lib == _doc("agentpost nosuchgroup x y")
