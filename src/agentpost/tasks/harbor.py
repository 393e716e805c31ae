"""Read a Harbor task directory: ``instruction.md``, ``task.toml`` (``[metadata]``, ``[agent]``
``timeout_sec``/``user``/``env``, ``[verifier]`` the same, ``[solution].env``, ``[environment]``
``workdir``, ``cpus``, ``memory_mb`` (or ``memory = "2G"``), ``storage_mb`` (or ``storage``),
``build_timeout_sec``, ``healthcheck``, and agentpost's own
``[agentpost]`` table), ``environment/`` (``Dockerfile``), ``tests/test.sh``,
``solution/solve.sh``; multi-step tasks list ``[[steps]]`` (``name``, ``[steps.agent]``/
``[steps.verifier]`` timeouts) with ``steps/<name>/instruction.md``, ``tests/test.sh`` and
``solution/solve.sh``. Whether the evaluator needs the network comes from
``[agentpost].evaluator_network`` only: Harbor's ``allow_internet`` (true by default) is a
permission, not a need, and sandboxes here never get a network.

Layer: io.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.tasks.fields import (
    agentpost_table,
    maybe,
    positive_number,
    read_task_text,
    size_mb,
    wrong_solutions,
)
from agentpost.tasks.model import Step, Task

_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def _read_toml(path: Path, root: Path) -> dict[str, Any]:
    text = read_task_text(path, root)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError(path, None, "TOML nested too deeply") from None
    except tomllib.TOMLDecodeError as e:
        m = _TOML_POS.search(str(e))
        where = f"line {m.group(1)}, column {m.group(2)}" if m else None
        raise InputError(path, where, _TOML_POS.sub("", str(e)).strip()) from None


def _table(data: dict, key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise InputError(path, f"[{key}]", "must be a table")
    return value


def _env_table(table: dict, path: Path, where: str) -> dict[str, str]:
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str | int | float) for v in env.values()):
        raise InputError(path, f"{where}.env", "must be a table of strings")
    return {str(k): str(v) for k, v in env.items()}


def _user(table: dict, path: Path, where: str) -> str | None:
    user = table.get("user")
    if user is not None and (not isinstance(user, str | int) or isinstance(user, bool)):
        raise InputError(path, f"{where}.user", "must be a user name or uid")
    return None if user is None else str(user)


def _healthcheck(environment: dict, path: Path) -> str | None:
    """``healthcheck = "cmd"`` or ``[environment.healthcheck] command = "cmd"``."""
    hc = environment.get("healthcheck")
    if isinstance(hc, dict):
        hc = hc.get("command", hc.get("cmd"))
    if hc is not None and not isinstance(hc, str):
        raise InputError(path, "[environment].healthcheck", "must be a command string")
    return hc


def _steps(root: Path, data: dict, path: Path) -> tuple[Step, ...]:
    raw = data.get("steps", [])
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise InputError(path, "[[steps]]", "must be an array of tables")
    steps = []
    for i, st in enumerate(raw):
        where = f"[[steps]] #{i + 1}"
        name = st.get("name")
        if not isinstance(name, str) or not name or "/" in name:
            raise InputError(path, f"{where}.name", "must be a directory name under steps/")
        d = root / "steps" / name
        for need in ("instruction.md", "tests/test.sh"):
            if not (d / need).is_file():
                raise InputError(d / need, None, f"missing for step {name!r}")
        agent, verifier = _table(st, "agent", path), _table(st, "verifier", path)
        steps.append(
            Step(
                name=name,
                instruction=read_task_text(d / "instruction.md", root),
                tests_dir=d / "tests",
                solution_script=maybe(d / "solution" / "solve.sh"),
                agent_timeout_s=positive_number(
                    agent, "timeout_sec", 600.0, path, f"{where}.agent"
                ),
                verifier_timeout_s=positive_number(
                    verifier, "timeout_sec", 120.0, path, f"{where}.verifier"
                ),
            )
        )
    return tuple(steps)


def load_harbor(root: Path) -> Task:
    toml_path = root / "task.toml"
    data = _read_toml(toml_path, root)
    ap = agentpost_table(_table(data, "agentpost", toml_path), toml_path, "[agentpost]")
    verifier = _table(data, "verifier", toml_path)
    agent = _table(data, "agent", toml_path)
    environment = _table(data, "environment", toml_path)
    network = ap.get("evaluator_network", False)
    if not isinstance(network, bool):
        raise InputError(toml_path, "[agentpost].evaluator_network", "must be true or false")
    steps = _steps(root, data, toml_path)
    instruction_path = root / "instruction.md"
    if steps:
        instruction = "\n\n".join(f"## Step {s.name}\n\n{s.instruction}" for s in steps)
    elif instruction_path.is_file() or instruction_path.is_symlink():
        instruction = read_task_text(instruction_path, root)
    else:
        raise InputError(instruction_path, None, "missing instruction.md")
    tests = root / "tests"
    if not steps and not (tests / "test.sh").is_file():
        raise InputError(tests / "test.sh", None, "missing Harbor verifier script")
    given = "workdir" in ap or "workdir" in environment
    workdir = ap.get("workdir", environment.get("workdir", "/app"))
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise InputError(toml_path, "[environment].workdir", "must be an absolute sandbox path")
    env_dir = maybe(root / "environment")
    cpus = environment.get("cpus")
    return Task(
        id=str(ap.get("id", root.name)),
        path=root,
        format="harbor",
        instruction=instruction,
        workdir=workdir,
        evaluator_network=network,
        agent_timeout_s=positive_number(
            agent, "timeout_sec", 600.0, toml_path, "[agent].timeout_sec"
        ),
        verifier_timeout_s=positive_number(
            verifier, "timeout_sec", 120.0, toml_path, "[verifier].timeout_sec"
        ),
        environment_dir=env_dir,
        tests_dir=tests if tests.is_dir() else None,
        solution_script=maybe(root / "solution" / "solve.sh"),
        wrong_solutions=wrong_solutions(root),
        metadata=dict(_table(data, "metadata", toml_path)),
        agentpost=dict(ap),
        dockerfile=maybe(root / "environment" / "Dockerfile"),
        agent_user=_user(agent, toml_path, "[agent]"),
        verifier_user=_user(verifier, toml_path, "[verifier]"),
        cpus=None if cpus is None else positive_number(environment, "cpus", 1, toml_path, "cpus"),
        memory_mb=size_mb(environment, "memory", toml_path, "[environment]"),
        storage_mb=size_mb(environment, "storage", toml_path, "[environment]"),
        workdir_given=given,
        build_timeout_s=positive_number(
            environment, "build_timeout_sec", 1800.0, toml_path, "[environment].build_timeout_sec"
        ),
        healthcheck=_healthcheck(environment, toml_path),
        agent_env={
            **_env_table(agent, toml_path, "[agent]"),
            **_env_table(_table(data, "solution", toml_path), toml_path, "[solution]"),
        },
        verifier_env=_env_table(verifier, toml_path, "[verifier]"),
        steps=steps,
    )
