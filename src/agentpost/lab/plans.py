"""The scripted behaviours of one lab task, as command lists over the task's own commands.

``task_plans(task)`` reads the task's oracle and wrong candidate (the last line of its solution
scripts), its explore views and its check, and lays them out as ``transcript.plans`` (the
student's behaviours) or their ``transcript.verified`` forms (the teacher's).

Layer: io (reads the task's scripts).
"""

from __future__ import annotations

from pathlib import Path

from agentpost.lab.transcript import plans, verified
from agentpost.tasks.model import Task


def last_command(script: Path) -> str:
    """The command of a generated one-line solution script (its last non-comment line)."""
    lines = [ln for ln in script.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return lines[-1]


def task_commands(task: Task) -> tuple[list[str], str, str, str]:
    return (task.explore, last_command(task.solution_script),
            last_command(task.wrong_solutions[0]), task.check or "true")  # fmt: skip


def task_plans(task: Task, teacher: bool = False) -> dict[str, list[str]]:
    """The scripted behaviours on ``task`` (``teacher``: their ``transcript.verified`` forms)."""
    explore, oracle, wrong, check = task_commands(task)
    out = plans(explore, oracle, wrong, check)
    if teacher:
        out = {k: verified(v, oracle, wrong, check) for k, v in out.items()}
    return out
