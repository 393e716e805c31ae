"""The FTD baseline (spec b.8): the teacher solves each task from scratch with the plain scaffold
prompt (no g_ver); keep R* = 1; the loss is on every teacher assistant message.

Each rollout is ``agent.run.rollout_one`` (a fresh sandbox, the agent loop, the task's
evaluator), so FTD and SCVD share the loop, the sandbox and the grader. Results go through the
result store keyed by (task hash, teacher fingerprint, attempt, loop limits): a rerun reads
finished rollouts back. Statuses: ``kept``, ``teacher_failed`` (R* = 0), ``teacher_unfinished``
(no submit), ``teacher_error``, ``evaluator_invalid``, ``budget_exceeded`` and ``infra_error``
(these two are not stored, so a rerun tries again).

Layer: io.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentpost.agent.loop import LoopConfig
from agentpost.agent.run import Agent, Rollout, rollout_one
from agentpost.scvd.distill.collect import (
    CACHED,
    CollectOptions,
    _usage,
    conversation,
    with_retries,
)
from agentpost.scvd.distill.teacher import Teacher
from agentpost.scvd.pipeline import _Progress, task_hash
from agentpost.sft.rows import make_row, to_record
from agentpost.store import Store, key
from agentpost.tasks.model import Task

_EXIT = {"budget_exceeded": "budget_exceeded", "model_error": "teacher_error"}


def ftd_one(task: Task, teacher: Teacher, attempt: int, backend, opts: CollectOptions) -> dict:
    loop = LoopConfig(step_limit=opts.teacher_steps, command_timeout_s=opts.command_timeout_s,
                      observation_chars=opts.observation_chars)  # fmt: skip
    traj = rollout_one(
        Rollout(task, Agent(teacher.label, teacher.make), attempt), backend, loop, "ftd"
    )
    exit_status = traj.metadata.get("exit_status")
    out = {
        "teacher_exit": exit_status,
        "teacher_turns": len(traj.turns),
        "usage": _usage(traj.turns),
    }
    status = traj.outcome.details.get("status")
    if exit_status in _EXIT:
        return {**out, "status": _EXIT[exit_status], "message": traj.metadata.get("error", "")}
    if exit_status != "submitted":
        return {**out, "status": "teacher_unfinished"}
    if status == "infra_error":
        return {**out, "status": "infra_error"}
    if status != "ok":
        return {**out, "status": "evaluator_invalid"}
    if not traj.outcome.resolved:
        return {**out, "status": "teacher_failed"}
    msgs = conversation(traj)
    for m, turn in zip([m for m in msgs if m["role"] == "assistant"], traj.turns, strict=False):
        if turn.reasoning:
            m["reasoning_content"] = turn.reasoning
    start = next(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    meta = {"task_id": task.id, "source": "ftd", "recipe": "ftd", "teacher": teacher.label,
            "trajectory": traj.id, "attempt": attempt}  # fmt: skip
    return {**out, "status": "kept", "row": to_record(make_row(msgs, start, meta))}


def ftd(
    tasks: list[Task],
    teacher: Teacher,
    store: Store,
    opts: CollectOptions | None = None,
    attempts: int = 1,
) -> list[dict[str, Any]]:
    """Every (task, attempt) result in order; ``row`` when kept."""
    from agentpost.sandbox.registry import get_backend

    opts = opts or CollectOptions()
    backend = get_backend(opts.backend)
    jobs = [(t, a) for t in tasks for a in range(attempts)]
    with _Progress(opts.progress) as prog:
        tid = prog.task("ftd", len(jobs))

        def one(job) -> dict:
            task, attempt = job
            k = key("scvd-ftd", {"task": task_hash(task), "teacher": teacher.fingerprint,
                                 "attempt": attempt, "teacher_steps": opts.teacher_steps,
                                 "command_timeout_s": opts.command_timeout_s,
                                 "observation_chars": opts.observation_chars})  # fmt: skip
            res = store.get(k)
            if res is None:
                res = with_retries(lambda: ftd_one(task, teacher, attempt, backend, opts),
                                   opts.max_retries)  # fmt: skip
                if res["status"] in CACHED:
                    store.put(k, res)
            prog.advance(tid)
            return {"task": task.id, "attempt": attempt, **res}

        with ThreadPoolExecutor(max_workers=max(1, opts.concurrency)) as pool:
            return list(pool.map(one, jobs))
