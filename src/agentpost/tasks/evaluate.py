"""Run a task inside a sandbox: set up its work directory, run a solution script, grade it.

Harbor: the tests directory is copied (fresh) into ``/tests`` and ``/tests/test.sh`` runs in the
work directory; it must write ``/logs/verifier/reward.txt`` (a number) or ``reward.json`` (a
number, ``{"reward": x}``, or a one-entry object of numbers). Terminal-Bench 1: ``run-tests.sh``
runs with ``TEST_DIR=/tests`` and, as in Terminal-Bench's ``PytestParser``, the per-test lines
after pytest's "short test summary info" header (``-rA``) decide: resolved when every test is
PASSED, XFAIL or SKIPPED. Output without that header is unparsable (``evaluator_invalid``: real
TB1 runners install pytest from the network, which an offline sandbox lacks). Only a task whose
``parser_name`` is not ``pytest`` is graded by the runner's exit code (a departure: TB1's other
parsers are benchmark-specific).

A missing or unparsable reward is ``evaluator_invalid``, never a silent 0. Before the tests are
copied in, ``verifier.isolate`` removes everything the agent could have planted for grading
(stale reward files, ``/tests``, /tmp and HOME), so an agent cannot pre-write its own reward.

With the docker backend the task's Dockerfile is built (``tasks.images``) and the sandbox starts
from that image, so ``prepare`` copies nothing. Harbor's users: solutions run as
``[agent].user`` (the sandbox's default user), the verifier as ``[verifier].user`` (default
root); only the docker backend has other users. Multi-step tasks are graded per step
(``evaluate(..., step=i)`` runs that step's tests).

Departure from Harbor: for the sandbox backends without images (bubblewrap) the environment's
``Dockerfile`` is not built; the other files of ``environment/`` are copied into the work
directory, and an optional ``environment/agentpost-setup.sh`` (which the Dockerfile also runs) is
executed there once, e.g. to create a git repository that a package cannot ship.

Layer: io.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from agentpost.components import resolve
from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult, Sandbox, SandboxSpec
from agentpost.tasks.model import REWARD_JSON, REWARD_TXT, EvalResult, Task
from agentpost.tasks.verifier import VERIFIER_ENV, Tampered, isolate

HEALTHCHECK_TRIES = 30

OUTPUT_CHARS = 8000
# For a TB1 task without run-tests.sh. TB1's default installs pytest with uv from the network;
# offline we use the sandbox's own pytest (none: no summary, so ``evaluator_invalid``).
DEFAULT_TB1_RUNNER = '#!/bin/bash\npython3 -m pytest -rA "$TEST_DIR/test_outputs.py"\n'
SETUP_SCRIPT = "agentpost-setup.sh"
_NOT_COPIED = {"Dockerfile", SETUP_SCRIPT, ".dockerignore"}
_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(\S+)", re.M)
_PYTEST_SUMMARY = re.compile(r"=+\s*short test summary info\s*=+", re.I)

# Task families graded their own way: format → "module:function(task, sandbox) -> EvalResult". A
# string resolved at run time, so this generic evaluator imports no family and a family may use it.
FAMILY_EVALUATORS = {"swebench": "agentpost.tasks.swebench.grade:evaluate_instance"}


def spec_for(
    task: Task, network: bool | None = None, backend: object | None = None, **overrides
) -> SandboxSpec:
    """A sandbox spec for ``task``: its work directory is writable; the network follows the
    evaluator's need unless ``network`` says otherwise. With the docker ``backend`` the task's
    image is built (once) from its Dockerfile."""
    net = task.evaluator_network if network is None else network
    docker = getattr(backend, "name", None) == "docker"
    if docker and "image" not in overrides:  # Harbor's container: tasks.images.container_spec
        from agentpost.tasks.images import container_spec

        overrides = {**container_spec(task, backend), **overrides}
    workdir = overrides.pop("workdir", task.workdir)
    writable = ("/app", "/logs", "/tests", "/solution")
    if workdir not in writable and workdir != "/":
        writable = (workdir, *writable)
    if task.agent_user or task.verifier_user:
        if backend is not None and not docker:
            raise InfraError(
                f"{task.id}: runs as user {task.agent_user or task.verifier_user!r}; "
                "only the docker backend has other users"
            )
        overrides.setdefault("user", task.agent_user)
    return SandboxSpec(workdir=workdir, writable_dirs=writable, network=net, **overrides)


def _tail(res: ExecResult, limit: int = OUTPUT_CHARS) -> str:
    text = res.stdout + (("\n[stderr]\n" + res.stderr) if res.stderr else "")
    return text if len(text) <= limit else "[...truncated...]\n" + text[-limit:]


def prepare(task: Task, sandbox: Sandbox) -> ExecResult | None:
    """Copy the task environment into the work directory and run its setup script, if any.

    Returns the setup script's result (None when there is none). A sandbox started from the
    task's own image already holds its environment; then only the healthcheck runs."""
    env_dir = task.environment_dir
    if sandbox.spec.image and task.dockerfile is not None:
        healthcheck(task, sandbox)
        return None
    if env_dir is None or not env_dir.is_dir():
        return None
    with tempfile.TemporaryDirectory(prefix="agentpost-env-") as tmp:
        staged = Path(tmp) / "env"
        shutil.copytree(
            env_dir, staged, symlinks=True, ignore=lambda d, names: _skip(env_dir, d, names)
        )  # links stay links: a task's symlink must not copy a host file in
        sandbox.put_dir(str(staged), task.workdir)
    setup = env_dir / SETUP_SCRIPT
    if not setup.is_file():
        return None
    sandbox.put("/tmp/" + SETUP_SCRIPT, setup.read_bytes(), 0o755)
    res = sandbox.exec(f"bash /tmp/{SETUP_SCRIPT}", cwd=task.workdir, timeout_s=120)
    if res.exit_code != 0:
        raise InfraError(f"{task.id}: {SETUP_SCRIPT} failed ({res.exit_code}): {_tail(res, 500)}")
    return res


def healthcheck(task: Task, sandbox: Sandbox) -> None:
    """Run ``[environment].healthcheck`` until it passes (once a second, a bounded number of
    tries); an environment that never gets healthy is an infrastructure failure."""
    if not task.healthcheck:
        return
    for _ in range(HEALTHCHECK_TRIES):
        res = sandbox.exec(
            task.healthcheck, cwd=sandbox.spec.workdir, timeout_s=30, **_as_root(task)
        )
        if res.exit_code == 0:
            return
        sandbox.exec("sleep 1", timeout_s=5)
    raise InfraError(f"{task.id}: healthcheck never passed: {_tail(res, 300)}")


def _as_root(task: Task) -> dict:
    """exec keyword for the verifier's user: only where the task names users (docker)."""
    if task.agent_user or task.verifier_user:
        return {"user": task.verifier_user or "0"}
    return {}


def _skip(root: Path, d: str, names: list[str]) -> list[str]:
    return [n for n in names if n in _NOT_COPIED] if Path(d) == root else []


def run_script(
    task: Task, sandbox: Sandbox, host_script: Path, timeout_s: float | None = None
) -> ExecResult:
    """Copy ``host_script``'s directory into ``/solution`` and run the script in the work dir."""
    host_script = Path(host_script)
    sandbox.put_dir(str(host_script.parent), "/solution")
    return sandbox.exec(
        f"bash /solution/{host_script.name}",
        cwd=sandbox.spec.workdir,
        timeout_s=timeout_s or task.agent_timeout_s,
        **({"env": task.agent_env} if task.agent_env else {}),
    )


def evaluate(task: Task, sandbox: Sandbox, step: int | None = None) -> EvalResult:
    """Grade the sandbox's current state with the task's evaluator (a multi-step task: with
    step ``step``'s tests; its last step when ``step`` is None). A SWE-bench task is graded
    like the harness (``tasks.swebench.grade``)."""
    if task.format in FAMILY_EVALUATORS:
        return resolve(FAMILY_EVALUATORS, task.format, "task evaluator")(task, sandbox)
    if task.steps:
        i = len(task.steps) - 1 if step is None else step
        st = task.steps[i]
        task = replace(
            task, tests_dir=st.tests_dir, verifier_timeout_s=st.verifier_timeout_s, steps=()
        )
    if task.evaluator_network and not sandbox.spec.network:
        return EvalResult(
            "infra_error", None, None, "evaluator needs the network; sandbox has none"
        )
    if task.tests_dir is None and task.run_tests_script is None:
        return EvalResult("evaluator_invalid", None, None, f"{task.id}: task has no tests")
    try:
        res = _run_verifier(task, sandbox)
    except Tampered as e:
        return EvalResult("ok", 0.0, False, str(e), {"tampered": True})
    except Exception as e:  # a sandbox failure, not the evaluator's verdict
        return EvalResult("infra_error", None, None, f"{type(e).__name__}: {e}")
    out = _tail(res)
    details = {"exit_code": res.exit_code, "duration_s": round(res.duration_s, 3)}
    if res.timed_out:
        return EvalResult("timeout", None, None, out, details)
    if task.format == "terminal-bench-1":
        return _tb1_result(res, out, details, task.metadata.get("parser_name", "pytest"))
    reward, why = _read_reward(sandbox)
    if reward is None:
        return EvalResult("evaluator_invalid", None, None, f"{why}\n{out}", details)
    return EvalResult("ok", reward, reward >= 1.0 - 1e-9, out, details)


def _run_verifier(task: Task, sandbox: Sandbox) -> ExecResult:
    isolate(sandbox, sandbox.spec.writable_dirs, **_as_root(task))  # the task's (spec_for)
    if task.tests_dir is not None and task.tests_dir.is_dir():
        sandbox.put_dir(str(task.tests_dir), "/tests")
    if task.format == "terminal-bench-1":
        runner = task.run_tests_script
        script = runner.read_bytes() if runner else DEFAULT_TB1_RUNNER.encode()
        sandbox.put("/tests/run-tests.sh", script, 0o755)
        cmd = "bash /tests/run-tests.sh"
    else:
        cmd = "bash /tests/test.sh"
    return sandbox.exec(
        cmd,
        cwd=sandbox.spec.workdir,
        timeout_s=task.verifier_timeout_s,
        env={**task.verifier_env, **VERIFIER_ENV},
        **_as_root(task),
    )


def parse_reward_text(text: str) -> float | None:
    """``reward.txt``: one number (surrounding whitespace allowed)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_reward_json(text: str) -> float | None:
    """``reward.json``: a number, ``{"reward": x}``, or an object with exactly one number."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        if "reward" in data:
            data = data["reward"]
        else:
            nums = [v for v in data.values() if isinstance(v, int | float)]
            data = nums[0] if len(nums) == 1 and len(data) == 1 else None
    if isinstance(data, bool) or not isinstance(data, int | float):
        return None
    return parse_reward_text(str(data))


def _read_reward(sandbox: Sandbox) -> tuple[float | None, str]:
    for path, parse in ((REWARD_TXT, parse_reward_text), (REWARD_JSON, parse_reward_json)):
        try:
            raw = sandbox.get(path).decode("utf-8", "replace")
        except FileNotFoundError:
            continue
        value = parse(raw)
        if value is None:
            return None, f"unparsable reward in {path}: {raw[:200]!r}"
        return value, ""
    return None, f"no reward file ({REWARD_TXT} or {REWARD_JSON})"


def _tb1_result(res: ExecResult, out: str, details: dict, parser: str) -> EvalResult:
    if parser == "pytest":
        parts = _PYTEST_SUMMARY.split(res.stdout, maxsplit=1)
        outcomes = {name: st for st, name in _PYTEST_LINE.findall(parts[-1])} if parts[1:] else {}
        if not outcomes:
            why = "no pytest short test summary (-rA) with test results in run-tests.sh output"
            return EvalResult("evaluator_invalid", None, None, f"{why}\n{out}", details)
        details["tests"] = outcomes
        ok = all(s in ("PASSED", "XFAIL", "SKIPPED") for s in outcomes.values())
        return EvalResult("ok", 1.0 if ok else 0.0, ok, out, details)
    if res.exit_code in (126, 127) or res.exit_code is None:
        return EvalResult("evaluator_invalid", None, None, out, details)
    ok = res.exit_code == 0
    return EvalResult("ok", 1.0 if ok else 0.0, ok, out, details)
