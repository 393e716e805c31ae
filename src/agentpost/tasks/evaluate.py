"""Run a task inside a sandbox: set up its work directory, run a solution script, grade it.

Grading: the tests run in the verifier's own namespace (``tasks/verifier.py``: the agent's
processes cannot reach them, agent code runs through ``$AGENTPOST_AS_AGENT``, the result is read
after the namespace is empty); Harbor tasks' ``/tests/test.sh`` writes ``/logs/verifier/reward.txt``
or ``reward.json``; a Terminal-Bench 1 task's ``run-tests.sh`` (or ``DEFAULT_TB1_RUNNER``) is
graded by its pytest report or exit code (``tasks/results.py``). Who is to blame for an outcome
that is not a clean verdict is decided in one place (``tasks/outcome.py``): the agent's 0, unless
the control (the oracle in a fresh sandbox of the same spec) fails as well, then
``infra_error`` (the sandbox failed) or ``evaluator_invalid`` (the task cannot grade its oracle).

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

import contextlib
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from agentpost.components import resolve
from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult, Sandbox, SandboxSpec
from agentpost.tasks.fields import SETUP_SCRIPT, read_task_bytes
from agentpost.tasks.model import EvalResult, Task
from agentpost.tasks.outcome import Observation, Outcome, classify
from agentpost.tasks.results import (  # noqa: F401 (parse_reward_*: this module's old API)
    exit_code_outcome,
    harbor_outcome,
    harbor_reward,
    parse_reward_json,
    parse_reward_text,
    pytest_outcome,
)
from agentpost.tasks.verifier import run_tests

HEALTHCHECK_TRIES = 30

OUTPUT_CHARS = 8000
# For a TB1 task without run-tests.sh. TB1's default installs pytest with uv from the network;
# offline we use the image's own pytest, isolated (``-I``: no cwd or PYTHON* variables on the
# path, so a ``pytest.py`` or ``conftest.py`` in the work dir is not the runner), with no config
# or conftest from above /tests and no cache written anywhere.
DEFAULT_TB1_RUNNER = (
    "#!/bin/bash\nexec python3 -I -m pytest -p no:cacheprovider --rootdir=/tests "
    '--confcutdir=/tests -rA "$TEST_DIR/test_outputs.py"\n'
)
# Every pytest the tests start writes its JUnit report into the verifier's own dir when it ends,
# and opens its log file there when it starts (``results.harbor_outcome``: started, no report).
JUNIT = "junit.xml"
STARTED = "pytest.log"
PYTEST_ADDOPTS = (
    f"--junitxml=/logs/verifier/{JUNIT} --log-file=/logs/verifier/{STARTED} -p no:cacheprovider"
)
_NOT_COPIED = {"Dockerfile", SETUP_SCRIPT, ".dockerignore"}

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
    if docker and "image" not in overrides:  # Harbor's container: tasks.container
        from agentpost.tasks.container import container_spec

        overrides = {**container_spec(task, backend), **overrides}
    workdir = overrides.pop("workdir", task.workdir)
    writable = ("/app", "/logs", "/tests", "/solution")
    if workdir not in writable and workdir != "/":
        writable = (workdir, *writable)
    writable = (*writable, *(d for d in task.extra_writable_dirs if d not in writable))
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
    if not (setup.is_file() or setup.is_symlink()):
        return None
    sandbox.put("/tmp/" + SETUP_SCRIPT, read_task_bytes(setup, task.path), 0o755)
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


def evaluate(
    task: Task,
    sandbox: Sandbox,
    step: int | None = None,
    *,
    control: bool = True,
    oracle: bool = False,
) -> EvalResult:
    """Grade the sandbox's current state with the task's evaluator (a multi-step task: with
    step ``step``'s tests; its last step when ``step`` is None). A SWE-bench task is graded
    like the harness (``tasks.swebench.grade``). Blame follows ``outcome.classify``: an outcome
    that is not a clean verdict is the agent's 0 unless the control (the oracle graded the same
    way, in a fresh sandbox of the same spec) fails too; ``control=False`` never grades one
    (then it is the agent's 0). ``oracle=True``: the sandbox holds the oracle's own state
    (``tasks check``), so a clean observation of it is the control (remembered), not graded
    twice."""
    if task.format in FAMILY_EVALUATORS:
        return resolve(FAMILY_EVALUATORS, task.format, "task evaluator")(task, sandbox)
    i = (len(task.steps) - 1 if step is None else step) if task.steps else None
    graded = _at_step(task, i)
    obs, out, details = observe(graded, sandbox)
    ctl = (lambda: control_observation(task, i, sandbox)) if control else None
    if oracle and obs.clean and getattr(sandbox, "backend", None) is not None:
        with _CONTROLS_LOCK:
            _CONTROLS[_control_key(task, i, sandbox)] = obs
        ctl = lambda: obs  # noqa: E731 (the oracle's state is the control's)
    return _result(classify(obs, ctl, static=_static_problem(graded, sandbox)), out, details)


def _at_step(task: Task, i: int | None) -> Task:
    if i is None:
        return task
    st = task.steps[i]
    return replace(task, tests_dir=st.tests_dir, verifier_timeout_s=st.verifier_timeout_s, steps=())


def _static_problem(task: Task, sandbox: Sandbox) -> str:
    if task.evaluator_network and not sandbox.spec.network:
        return "evaluator needs the network; sandbox has none"
    if task.tests_dir is None and task.run_tests_script is None:
        return f"{task.id}: task has no tests"
    return ""


def _result(outcome: Outcome, out: str, details: dict) -> EvalResult:
    if outcome.control is not None:
        details["control"] = outcome.control
    if outcome.kind == "ok":
        r = outcome.reward
        return EvalResult("ok", r, r >= 1.0 - 1e-9, out, details)
    if outcome.kind == "agent":
        details["failure"] = outcome.reason
        return EvalResult("ok", 0.0, False, f"{outcome.reason}\n{out}", details)
    status = "evaluator_invalid" if outcome.evaluator_broken else "infra_error"
    return EvalResult(status, None, None, f"{outcome.reason}\n{out}", details)


def observe(task: Task, sandbox: Sandbox) -> tuple[Observation, str, dict]:
    """Run the task's tests on ``sandbox`` (``verifier.run_tests``) and say what they gave."""
    tb1 = task.format == "terminal-bench-1"
    if tb1:
        runner = task.run_tests_script
        script = read_task_bytes(runner, task.path) if runner else DEFAULT_TB1_RUNNER.encode()
        extra, cmd = {"/tests/run-tests.sh": script}, "bash /tests/run-tests.sh"
    else:
        extra, cmd = {}, "bash /tests/test.sh"
    try:
        run = run_tests(
            sandbox,
            tests_dir=task.tests_dir,
            extra=extra,
            command=cmd,
            cwd=sandbox.spec.workdir,
            timeout_s=task.verifier_timeout_s,
            env={**task.verifier_env, "PYTEST_ADDOPTS": PYTEST_ADDOPTS},
            reads=(JUNIT,) if tb1 else ("reward.txt", "reward.json", JUNIT, (STARTED, 0)),
            exec_kw=_as_root(task),
        )
    except Exception as e:  # a sandbox failure: the control says whose
        why = f"the sandbox failed while grading: {type(e).__name__}: {e}"
        return Observation(None, why, sandbox_failed=True), why, {}
    if run.res is None:
        return Observation(None, run.problem), run.problem or "", {}
    res = run.res
    out = _tail(res)
    details = {"exit_code": res.exit_code, "duration_s": round(res.duration_s, 3)}
    if run.removed_links:
        details["removed_links"] = run.removed_links
    if tb1 and task.metadata.get("parser_name", "pytest") == "pytest":
        obs = pytest_outcome(run.files.get(JUNIT, "missing"), res.stdout)
    elif tb1:
        obs = exit_code_outcome(res.exit_code)
    else:
        obs = harbor_outcome(run.files, JUNIT, STARTED)
    if obs.tests:
        details["tests"] = obs.tests
    problem = _tree_problem(res)
    if problem:
        obs = Observation(obs.reward, problem, obs.tests)
    return obs, out, details


def _tree_problem(res: ExecResult) -> str | None:
    """Why the test tree did not end cleanly (None: it did)."""
    if res.timed_out:
        return f"the tests ran out of time ({res.duration_s:.0f} s)"
    if res.killed:
        return f"the test tree was killed ({res.killed})"
    if res.stopped:
        return "the test process was stopped by a signal"
    if res.exit_code is None or res.exit_code >= 128:
        return f"the test process was killed by a signal (exit {res.exit_code})"
    if res.strays:
        return f"{res.strays} process(es) the tests started outlived them"
    return None


_CONTROLS: dict[tuple, Observation] = {}
_CONTROLS_LOCK = threading.Lock()


def control_observation(task: Task, step: int | None, sandbox: Sandbox) -> Observation:
    """The control for ``task`` (at ``step``) in ``sandbox``'s conditions: its oracle (every
    step's up to ``step``), or nothing for a task without one, run in a fresh sandbox of the
    same spec and backend, then graded the same way, while ``sandbox``'s kept processes are
    frozen (``paused``: they cannot starve it into a timeout). A clean control is remembered for the
    process; one that is not is graded again next time (it may have been a passing fault)."""
    backend = getattr(sandbox, "backend", None)
    if backend is None:
        why = "the sandbox failed while grading: no backend for a control"
        return Observation(None, why, sandbox_failed=True)
    key = _control_key(task, step, sandbox)
    with _CONTROLS_LOCK:
        known = _CONTROLS.get(key)
    if known is not None:
        return known
    paused = getattr(sandbox, "paused", None)  # what the agent left running: frozen meanwhile
    try:
        with paused() if paused else contextlib.nullcontext(), backend.create(sandbox.spec) as box:
            prepare(task, box)
            scripts = (
                [s.solution_script for s in task.steps[: step + 1]]
                if step is not None
                else [task.solution_script]
            )
            for script in scripts:
                if script is not None:
                    run_script(task, box, script)
            obs, _, _ = observe(_at_step(task, step), box)
    except Exception as e:
        why = f"the sandbox failed while grading: {type(e).__name__}: {e}"
        return Observation(None, why, sandbox_failed=True)
    if obs.clean:
        with _CONTROLS_LOCK:
            _CONTROLS[key] = obs
    return obs


def _control_key(task: Task, step: int | None, sandbox: Sandbox) -> tuple:
    return (sandbox.backend.name, str(task.path), task.id, step, repr(sandbox.spec))
