"""Check a task suite: per task, the oracle must score 1, doing nothing 0, every wrong solution 0.

Each run uses a fresh sandbox: prepare the environment, run the script (none for the no-op),
run the task's ``[agentpost].check`` command when the run is the oracle or a wrong solution (the
scripted policies rely on it failing visibly on the wrong candidate and passing on the oracle:
``check_ok`` says whether it does, by exit status), then run the hidden evaluator.

Layer: io.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from agentpost.documents.formats import fmt, producer
from agentpost.sandbox.base import Backend
from agentpost.sandbox.executors import JobFailure, LocalExecutor, get_executor
from agentpost.tasks.evaluate import evaluate, prepare, run_script, spec_for
from agentpost.tasks.model import Task

FORMAT = fmt("agentpost.tasks-check")
CHECK_TIMEOUT_S = 60.0
SCRIPT_TAIL = 1500  # characters of the oracle's output kept in its row (why it failed)


def run_once(
    task: Task, backend: Backend, script: Path | None, run_check: bool, oracle: bool = False
) -> dict[str, Any]:
    """One fresh sandbox: prepare, run ``script`` (None: no-op), optionally ``check``, evaluate.
    A multi-step task runs each step's own solution (for the oracle; none for the no-op) and
    tests in turn in the same sandbox; its reward is the mean of the step rewards. ``oracle``:
    ``script`` is the task's oracle, whose grading is then the control (``evaluate``)."""
    out: dict[str, Any] = {"reward": None, "status": None, "check_exit": None}
    try:
        with backend.create(spec_for(task, backend=backend)) as sb:
            prepare(task, sb)
            if task.steps:
                return _run_steps(task, sb, oracle=script is not None, out=out, control=oracle)
            if script is not None:
                res = run_script(task, sb, script)
                out["script_exit"] = res.exit_code
                out["script_killed"], out["script_s"] = res.killed, round(res.duration_s, 1)
                out["script_output"] = (res.stdout + res.stderr)[-SCRIPT_TAIL:]
            if run_check and task.check:
                chk = sb.exec(task.check, cwd=sb.spec.workdir, timeout_s=CHECK_TIMEOUT_S)
                out["check_exit"] = chk.exit_code
            ev = evaluate(task, sb, oracle=oracle)
    except Exception as e:  # a sandbox or setup failure is recorded, never raised per row
        out["status"] = "infra_error"
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    out["reward"], out["status"] = ev.reward, ev.status
    if ev.status != "ok":
        out["error"] = ev.output[-500:]
    else:
        out["output"] = ev.output[-500:]
    return out


def _run_steps(
    task: Task, sb, oracle: bool, out: dict[str, Any], control: bool = False
) -> dict[str, Any]:
    rewards = []
    for i, step in enumerate(task.steps):
        if oracle and step.solution_script is not None:
            run_script(task, sb, step.solution_script, timeout_s=step.agent_timeout_s)
        ev = evaluate(task, sb, step=i, oracle=control)
        if ev.status != "ok":
            out["status"], out["error"] = ev.status, f"step {step.name}: {ev.output[-500:]}"
            return out
        rewards.append(ev.reward)
    out["step_rewards"] = rewards
    out["reward"], out["status"] = sum(rewards) / len(rewards), "ok"
    return out


def check_task(task: Task, backend: Backend) -> dict[str, Any]:
    """The suite-check row of one task."""
    has_oracle = task.solution_script or any(s.solution_script for s in task.steps)
    oracle_script = task.solution_script or (task.path if has_oracle else None)
    oracle = run_once(task, backend, oracle_script, True, oracle=True) if has_oracle else None
    nop = run_once(task, backend, None, False)
    wrongs = [run_once(task, backend, w, True) for w in task.wrong_solutions]
    wrong_rewards = [w["reward"] for w in wrongs]
    row: dict[str, Any] = {
        "id": task.id,
        "oracle_reward": oracle["reward"] if oracle else None,
        "nop_reward": nop["reward"],
        "wrong_reward": max(wrong_rewards) if wrongs and None not in wrong_rewards else None,
        "wrong_rewards": wrong_rewards,
    }
    # A task without wrong solutions (e.g. Terminal-Bench 1) is judged on oracle and no-op alone;
    # the bundled suite's own test requires every task to ship one.
    row["ok"] = (
        row["oracle_reward"] == 1.0
        and row["nop_reward"] == 0.0
        and all(r == 0.0 for r in wrong_rewards)
    )
    if task.check and oracle:
        passes = oracle["check_exit"] == 0
        row["check_ok"] = passes and all(w["check_exit"] not in (0, None) for w in wrongs)
    else:
        row["check_ok"] = None
    runs = [("oracle", oracle, 1.0), ("nop", nop, 0.0)]
    runs += [(f"wrong{i}", w, 0.0) for i, w in enumerate(wrongs)]
    errors = {}
    for name, r, want in runs:
        if r and r.get("error"):
            errors[name] = r["error"]
        elif r and r["reward"] != want:  # graded, but not as it must be: say what the verifier said
            errors[name] = (
                f"reward {r['reward']} (expected {want}); verifier: {r.get('output', '')}"
            )
    if oracle and oracle.get("script_killed") and "oracle" in errors:  # the solution never ended
        row["oracle_killed"] = f"{oracle['script_killed']} after {oracle['script_s']} s"
        errors["oracle"] += f"; its solution was killed by the {row['oracle_killed']}"
    if errors:
        row["errors"] = errors
        if oracle and "oracle" in errors and oracle.get("script_output"):
            row["oracle_output"] = oracle["script_output"]
    if getattr(backend, "name", None) == "docker":  # what its image cannot serve offline
        from agentpost.tasks.images import unservable

        row["unservable"] = unservable(task, backend)
    if task.metadata.get("deviations"):  # a SWE-bench instance's departures from the harness
        row["deviations"] = list(task.metadata["deviations"])
    return row


def check_suite(
    tasks: list[Task], backend: Backend, workers: int = 2, executor: str = "local"
) -> dict[str, Any]:
    """Rows for every task (in the given order), checked ``workers`` at a time on ``executor``
    (``local`` threads, or ``ray``: each task on a Ray worker, which needs the backend there)."""
    job = functools.partial(check_task, backend=backend)
    if executor == "local":
        with LocalExecutor(max_workers=max(1, workers)) as pool:
            outcomes = pool.map(job, tasks)
    else:
        with get_executor(executor, max_workers=max(1, workers)) as pool:
            outcomes = pool.map(job, tasks)
    rows = [
        {"id": t.id, "ok": False, "check_ok": False, "errors": {"job": o.message}}
        if isinstance(o, JobFailure)
        else o
        for t, o in zip(tasks, outcomes, strict=True)
    ]
    return {
        "format": FORMAT,
        "producer": producer(
            check_suite, workers=workers, backend=getattr(backend, "name", None), executor=executor
        ),
        "tasks": rows,
        "ok": all(r["ok"] for r in rows),
        "check_ok": all(r["check_ok"] is not False for r in rows),
    }
