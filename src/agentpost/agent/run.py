"""The group runner: G rollouts per task and agent, graded, written as they finish, resumable.

Each rollout gets a fresh sandbox for its task (``tasks.evaluate.spec_for`` + ``prepare``), runs
the agent loop, and is graded in the same sandbox by the task's evaluator; the trajectory with
its ``outcome`` is appended to ``trajectories.jsonl`` and fsynced before the next is reported.
A rollout's id is ``<task>::<agent>::<attempt>``, so a rerun with the same output directory
skips every id already in the file: a kill loses at most the rollouts in flight, and Ctrl-C
stops those (unwritten) and starts no more. Two kinds of rollout are not written, so that a rerun
retries them: one that fails on infrastructure (listed in ``run.json`` as an error), and one a
spent token or cost budget cut short (listed as ``budget_stopped``; once a budget is spent the
remaining rollouts are not started either): neither is the agent's result. Likewise, once an
agent's model is unavailable (``ModelUnavailable``: the transport's retries ran out, e.g. a wrong
``--base-url``), that agent's remaining rollouts are not started (``not_started``), so a run
against an unreachable server ends after one round of retries instead of one per rollout.
A refused request (``ModelRequestError``: a 4xx meaning the request is wrong, e.g. a wrong key,
model name or parameter) is an error too, at any turn, and it halts the run (``halted``): every
rollout would be refused the same way. So does the same error ``SAME_ERROR_LIMIT`` times in a row
(e.g. a sandbox that cannot start). Any infrastructure fault at any turn (``InfraError``) leaves
the rollout unwritten and counted as an error, so only what the model said becomes an outcome.

Stopping: a ``KeyboardInterrupt`` in the calling thread (Ctrl-C, or SIGTERM/SIGHUP turned into
one by the CLI) sets a stop flag that rollouts in flight see at their next model call, command or
backoff (a model request is abandoned within 0.1 s), kills the commands running in their
sandboxes (``cancel``, where the backend has it: bwrap), cancels the rollouts not started, waits
for those in flight to clean up their sandboxes, and raises ``RunInterrupted`` (a
``KeyboardInterrupt`` carrying the ``RunResult``, ``interrupted`` set); finished rollouts are
already on disk. One writer per output directory: ``DirLock`` refuses a second.

``run.json`` (format ``agentpost.run/1``) summarises everything in the file: per task and
agent the attempts finished and resolved (a HERO group), per agent the resolution rate.

Layer: io.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from agentpost.agent.llm import Interrupted, Model, ModelRequestError, ModelUnavailable
from agentpost.agent.loop import AgentLoop, LoopConfig
from agentpost.dirlock import DirLock
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import atomic_write, open_output
from agentpost.errors import InputError
from agentpost.sandbox.base import Backend
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.model import Task
from agentpost.trajectory.io import append_jsonl
from agentpost.trajectory.model import Outcome, Trajectory

RUN_FORMAT = fmt("agentpost.run")
TRAJECTORIES = "trajectories.jsonl"
SAME_ERROR_LIMIT = 3  # the same error this many times in a row halts the run


@dataclass(frozen=True)
class Agent:
    """A label (``scripted/careful``, a model name) and a factory giving a model per rollout."""

    label: str
    make: Callable[[Task], Model]


@dataclass
class Rollout:
    task: Task
    agent: Agent
    attempt: int

    @property
    def id(self) -> str:
        return f"{self.task.id}::{self.agent.label}::{self.attempt}"


@dataclass
class RunResult:
    ran: int = 0
    skipped: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    budget_stopped: list[str] = field(default_factory=list)  # rollout ids, not written
    not_started: list[str] = field(default_factory=list)  # model unavailable, or halted
    interrupted: bool = False  # a stop (Ctrl-C, SIGTERM, SIGHUP) ended the run early
    halted: str | None = None  # why no more rollouts were started (refused request, same error)


class RunInterrupted(KeyboardInterrupt):
    """A stop ended ``run_groups`` after cleaning up; ``result`` is what was done."""

    def __init__(self, result: RunResult):
        super().__init__("interrupted")
        self.result = result


def finished_ids(path: Path) -> set[str]:
    """Ids of the complete lines of ``path``; a torn last line (a kill mid-write) is cut off."""
    if not os.path.lexists(path):
        return set()
    # in place, as every output (a link, hard link, FIFO or device there is an InputError)
    with os.fdopen(open_output(path, os.O_RDWR), "r+b") as f:
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            f.truncate(end)
            os.fsync(f.fileno())
    ids = set()
    for lineno, line in enumerate(data[:end].splitlines(), start=1):
        if line.strip():
            try:
                ids.add(orjson.loads(line)["id"])
            except (orjson.JSONDecodeError, KeyError, TypeError):
                raise InputError(path, f"line {lineno}", "not a trajectory line") from None
    return ids


def rollout_one(
    r: Rollout, backend: Backend, loop: LoopConfig, run_id: str, stop=None, live=None
) -> Trajectory:
    """One rollout in a fresh sandbox, graded by the task's evaluator in that sandbox. ``live``
    (a set) holds the sandbox while it is open, so a stop can cancel its running command."""
    task = r.task
    if loop.timeout_s is None:  # the task's own agent timeout bounds the rollout
        loop = replace(loop, timeout_s=task.agent_timeout_s)
    with backend.create(spec_for(task, backend=backend)) as box:
        if live is not None:
            live.add(box)
        try:
            return _graded(r, box, loop, run_id, stop)
        finally:
            if live is not None:
                live.discard(box)


def _graded(r: Rollout, box, loop: LoopConfig, run_id: str, stop) -> Trajectory:
    task = r.task
    prepare(task, box)
    traj = AgentLoop(r.agent.make(task), box, loop, stop=stop).run(
        task.instruction, workdir=box.spec.workdir, task_id=task.id, traj_id=r.id, run_id=run_id
    )
    if stop is not None and stop.is_set():
        raise Interrupted("stopped before grading")
    res = evaluate(task, box)
    traj.outcome = Outcome(
        resolved=res.resolved,
        reward=res.reward,
        evaluator=f"agentpost.tasks.evaluate/{task.format}",
        details={"status": res.status, "output": res.output[-2000:], **res.details},
    )
    traj.metadata.update({"group": task.id, "agent_label": r.agent.label, "attempt": r.attempt})
    return traj


def run_groups(
    tasks: list[Task],
    agents: list[Agent],
    *,
    attempts: int,
    out_dir: str | Path,
    backend: Backend,
    loop: LoopConfig,
    concurrency: int = 2,
    run_id: str = "run",
    on_done: Callable[[Rollout, Trajectory | None], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Run every (task, agent, attempt) not already in ``out_dir``; returns what was done."""
    with DirLock(out_dir):
        return _run_locked(tasks, agents, attempts, Path(out_dir), backend, loop, concurrency,
                           run_id, on_done, on_plan)  # fmt: skip


def _error_key(message: str) -> str:
    """An error message with its numbers and ids blanked, to tell "the same error again"."""
    return re.sub(r"[0-9a-f]{6,}|\d+", "#", message)


def _run_locked(tasks, agents, attempts, out, backend, loop, concurrency, run_id, on_done,
                on_plan) -> RunResult:  # fmt: skip
    path = out / TRAJECTORIES
    done = finished_ids(path)
    todo = [Rollout(t, a, i) for t in tasks for a in agents for i in range(attempts)]
    result = RunResult(skipped=sum(r.id in done for r in todo))
    lock = threading.Lock()
    stop = threading.Event()
    live: set = set()  # sandboxes of the rollouts in flight
    down: set[str] = set()  # labels of agents whose model is unavailable
    streak: list[str] = []  # error keys of the latest errors, in a row
    if on_plan:
        on_plan(len(todo) - result.skipped, result.skipped)

    def record_error(r: Rollout, error: str, e: Exception | None) -> None:
        result.errors.append({"rollout": r.id, "error": error})
        streak.append(_error_key(error))
        if isinstance(e, ModelRequestError):
            result.halted = result.halted or f"the server refused the request: {error}"
        elif len(streak) >= SAME_ERROR_LIMIT and len(set(streak[-SAME_ERROR_LIMIT:])) == 1:
            result.halted = result.halted or (
                f"the same error {SAME_ERROR_LIMIT} times in a row: {error}"
            )

    def work(r: Rollout) -> None:
        traj, error, exc = None, None, None
        if r.agent.label in down or result.halted or stop.is_set():
            with lock:
                result.not_started.append(r.id)
            if on_done:
                on_done(r, None)
            return
        if not result.budget_stopped:  # once a budget is spent, start no more rollouts
            try:
                traj = rollout_one(r, backend, loop, run_id, stop, live)
            except Interrupted:
                traj = None
            except Exception as e:  # recorded and counted; a rerun retries it
                error, exc = f"{type(e).__name__}: {e}", e
                if isinstance(e, ModelUnavailable):
                    down.add(r.agent.label)
        with lock:
            if stop.is_set() and error is None and traj is None:
                result.not_started.append(r.id)  # interrupted: unfinished, a rerun redoes it
            elif error is not None:
                record_error(r, error, exc)
            elif traj is None or traj.metadata["exit_status"] == "budget_exceeded":
                result.budget_stopped.append(r.id)
                traj = None
            else:
                append_jsonl(path, traj)
                result.ran += 1
                streak.clear()
        if on_done:
            on_done(r, traj)

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    futures = [pool.submit(work, r) for r in todo if r.id not in done]
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
    except KeyboardInterrupt:
        stop.set()
        result.interrupted = True
        for f in futures:
            f.cancel()
        for box in live.copy():  # a long command in flight must not delay the stop
            cancel = getattr(box, "cancel", None)
            if cancel is not None:
                cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # in flight: stop promptly, clean up
    for f in futures:
        if f.done() and not f.cancelled() and f.exception() is not None:
            raise f.exception()
    if result.interrupted:
        raise RunInterrupted(result)
    return result


def summarize(trajectories: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (task, agent) group and per agent: finished, resolved, rate, tokens."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for t in trajectories:
        key = (t.get("task_id") or "", t["metadata"].get("agent_label") or t.get("model") or "")
        g = groups.setdefault(key, {"finished": 0, "resolved": 0, "rewards": [], "tokens": []})
        g["finished"] += 1
        g["resolved"] += bool(t["outcome"].get("resolved"))
        g["rewards"].append(t["outcome"].get("reward"))
        tot = t["totals"]
        g["tokens"].append((tot.get("input_tokens") or 0) + (tot.get("output_tokens") or 0))
    per_agent: dict[str, dict[str, Any]] = {}
    for (_task, agent), g in groups.items():
        a = per_agent.setdefault(agent, {"finished": 0, "resolved": 0})
        a["finished"] += g["finished"]
        a["resolved"] += g["resolved"]
    for a in per_agent.values():
        a["resolution_rate"] = a["resolved"] / a["finished"] if a["finished"] else None
    return {
        "groups": [{"task": k[0], "agent": k[1], **g} for k, g in sorted(groups.items())],
        "agents": per_agent,
    }


def write_summary(
    out_dir: str | Path, args: dict[str, Any], result: RunResult, extra: dict
) -> dict:
    """Write ``run.json`` (atomically) from everything in ``trajectories.jsonl``."""
    out = Path(out_dir)
    path = out / TRAJECTORIES
    rows = []
    if os.path.lexists(path):
        with os.fdopen(open_output(path, os.O_RDONLY), "rb") as f:  # never through a link
            rows = _unique([orjson.loads(x) for x in f if x.strip()])
    summary = {
        "format": RUN_FORMAT,
        "producer": producer(run_groups, **args),
        "trajectories": TRAJECTORIES,
        "this_invocation": {
            "ran": result.ran,
            "skipped": result.skipped,
            "errors": result.errors,
            "budget_stopped": result.budget_stopped,
            "not_started": result.not_started,
            "interrupted": result.interrupted,
            "halted": result.halted,
        },
        **summarize(rows),
        **extra,
    }
    atomic_write(out / "run.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    return summary


def _unique(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first line of each id (a file written before the directory lock may repeat ids)."""
    seen: set[str] = set()
    out = []
    for row in rows:
        if row.get("id") not in seen:
            seen.add(row.get("id"))
            out.append(row)
    return out
