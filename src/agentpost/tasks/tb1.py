"""Read a Terminal-Bench 1 task directory: ``task.yaml`` (``instruction``, or the older
``descriptions`` list whose ``base`` entry holds it; ``max_agent_timeout_sec``,
``max_test_timeout_sec``, metadata keys), ``run-tests.sh`` (optional, as in TB1: a task without one
gets ``DEFAULT_TB1_RUNNER``), ``tests/``, ``solution.sh``, ``Dockerfile``; TB1 tasks build their
files in the Dockerfile, so ``environment_dir`` is None unless the task ships an ``environment/``
directory. The work directory is ``workdir`` (or ``[agentpost].workdir``), ``/app`` by default.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.tasks.fields import (
    agentpost_table,
    maybe,
    positive_number,
    read_task_text,
    wrong_solutions,
)
from agentpost.tasks.model import Task


def _read_yaml(path: Path, root: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(read_task_text(path, root))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise InputError(path, where, str(getattr(e, "problem", None) or e)) from None
    if not isinstance(data, dict):
        raise InputError(path, None, "must be a mapping")
    return data


def _tb1_instruction(data: dict[str, Any], yaml_path: Path) -> str:
    """``instruction``, or (older TB1 tasks) the ``base`` entry of ``descriptions``."""
    instruction = data.get("instruction")
    descriptions = data.get("descriptions")
    if instruction is None and isinstance(descriptions, list):
        base = [d for d in descriptions if isinstance(d, dict) and d.get("key") == "base"]
        instruction = (base[0].get("description") or base[0].get("instruction")) if base else None
    if not isinstance(instruction, str) or not instruction.strip():
        raise InputError(yaml_path, "instruction", "missing or not a string")
    return instruction


def load_tb1(root: Path) -> Task:
    yaml_path = root / "task.yaml"
    data = _read_yaml(yaml_path, root)
    instruction = _tb1_instruction(data, yaml_path)
    run_tests = root / "run-tests.sh"
    if not run_tests.is_file() and not (root / "tests").is_dir():
        raise InputError(root, None, "Terminal-Bench 1 task has neither run-tests.sh nor tests/")
    ap = agentpost_table(data.get("agentpost") or {}, yaml_path, "agentpost")
    workdir = data.get("workdir", ap.get("workdir", "/app"))
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise InputError(yaml_path, "workdir", "must be an absolute sandbox path")
    network = data.get("evaluator_network", ap.get("evaluator_network", False))
    if not isinstance(network, bool):
        raise InputError(yaml_path, "evaluator_network", "must be true or false")
    meta_keys = ("author_email", "author_name", "difficulty", "category", "tags", "parser_name")
    solution = root / "solution.sh"
    return Task(
        id=root.name,
        path=root,
        format="terminal-bench-1",
        instruction=instruction,
        workdir=workdir,
        evaluator_network=network,
        agent_timeout_s=positive_number(
            data, "max_agent_timeout_sec", 600.0, yaml_path, "max_agent_timeout_sec"
        ),
        verifier_timeout_s=positive_number(
            data, "max_test_timeout_sec", 120.0, yaml_path, "max_test_timeout_sec"
        ),
        environment_dir=maybe(root / "environment"),
        tests_dir=maybe(root / "tests"),
        solution_script=solution if solution.is_file() else maybe(root / "solution" / "solve.sh"),
        wrong_solutions=wrong_solutions(root),
        metadata={k: data[k] for k in meta_keys if k in data},
        agentpost=dict(ap),
        run_tests_script=maybe(run_tests),
        dockerfile=maybe(root / "Dockerfile"),
        workdir_given="workdir" in data or "workdir" in ap,
    )
