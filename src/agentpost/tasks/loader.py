"""Task directories into one ``Task`` model: a suite, one task, the bundled suites.

A directory with ``task.toml`` is a Harbor task (``tasks.harbor``), one with ``task.yaml`` a
Terminal-Bench 1 task (``tasks.tb1``); the field readers both share are in ``tasks.fields``. A
directory with ``swebench.toml`` (or that file itself) is a SWE-bench suite
(``tasks.swebench.suite``: one task per instance of the user's instance file).
The work directory is ``/app`` unless the task says otherwise; sandboxes here never get a
network, so only ``[agentpost].evaluator_network`` says the evaluator needs one.

``load_suite`` skips a task directory that does not load and reports why (``errors``), so one
broken task never hides the others.

Layer: io.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from agentpost.errors import InputError
from agentpost.tasks.fields import check_task_files
from agentpost.tasks.harbor import load_harbor
from agentpost.tasks.model import Task
from agentpost.tasks.tb1 import load_tb1

SWEBENCH_CONFIG = "swebench.toml"


def bundled_suite_path(name: str = "terminal") -> Path:
    """The directory of a suite shipped inside the package."""
    path = Path(__file__).resolve().parent / "suites" / name
    if not path.is_dir():
        raise InputError(name, None, f"no bundled suite named {name!r}")
    return path


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file() or (path / "task.yaml").is_file()


def load_suite(directory: str | Path, errors: list[InputError] | None = None) -> list[Task]:
    """Every task directory directly under ``directory`` (or ``directory`` itself), by id.

    A task that does not load is skipped and its ``InputError`` appended to ``errors`` (when
    ``errors`` is None, a warning names it). Raises only when no task loads at all."""
    root = Path(directory)
    if root.name == SWEBENCH_CONFIG and root.is_file():
        root = root.parent
    if (root / SWEBENCH_CONFIG).is_file():
        return _load_swebench(root / SWEBENCH_CONFIG, errors)
    if not root.is_dir():
        raise InputError(root, None, "not a directory")
    if is_task_dir(root):
        return [load_task(root)]
    tasks, failed = [], []
    for p in sorted(root.iterdir()):
        if p.is_dir() and is_task_dir(p):
            try:
                tasks.append(load_task(p))
            except InputError as e:
                failed.append(e)
    if errors is not None:
        errors.extend(failed)
    else:
        for e in failed:
            warnings.warn(f"skipped task: {e}", stacklevel=2)
    if not tasks:
        why = "; ".join(str(e) for e in failed) or "no task directories (task.toml or task.yaml)"
        raise InputError(root, None, f"no task loads: {why}")
    return tasks


def _load_swebench(config: Path, errors: list[InputError] | None) -> list[Task]:
    from agentpost.tasks.swebench.suite import load

    failed: list[InputError] = []
    tasks = load(config, failed)
    if errors is not None:
        errors.extend(failed)
    else:
        for e in failed:
            warnings.warn(f"skipped instance: {e}", stacklevel=3)
    if not tasks:
        why = "; ".join(str(e) for e in failed) or "no instances"
        raise InputError(config, None, f"no instance loads: {why}")
    return tasks


def load_task(path: str | Path) -> Task:
    try:
        root = Path(path).resolve()
    except (RuntimeError, OSError) as e:  # a symlink loop
        raise InputError(path, None, f"cannot resolve: {e}") from None
    if (root / "task.toml").is_file() or (root / "task.toml").is_symlink():
        task = load_harbor(root)
    elif (root / "task.yaml").is_file() or (root / "task.yaml").is_symlink():
        task = load_tb1(root)
    else:
        raise InputError(root, None, "not a task directory (no task.toml or task.yaml)")
    check_task_files(task)  # the files the host reads later: below the task dir, no link
    return task
