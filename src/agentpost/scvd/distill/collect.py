"""`agentpost scvd collect` (spec b.7): student trajectories → t_c from the panel → the candidate
state rebuilt in a fresh sandbox → the teacher continues in the agent loop from that state and
that history, with g_ver in its context → the task's evaluator → keep R* = 1 → remove g_ver →
SFT rows (``agentpost.sft/1``) with the loss on the teacher's assistant messages only.

Flow per trajectory (each step's failure is a counted ``status``, never a silent drop):
``no_candidate`` (I_c = 0 or unannotated), ``task_missing``, ``replay_failed`` /
``unfaithful`` / ``infra_error`` (the state could not be rebuilt faithfully), ``teacher_error`` (the teacher's answers were
unusable), ``teacher_unfinished`` (step limit or timeout before submit), ``evaluator_invalid``,
``teacher_failed`` (R* = 0), ``budget_exceeded``, ``kept``.

- **The candidate state** comes from one function, ``replay_state`` (b.5 replay through and
  including the boundary call). ``collect(..., source=...)`` takes any function with its
  signature, so snapshot mode (issue 20) plugs in here; every row says which source gave it.
- **Hand-off** (``handoff="tool_call"``, default): the history ends right after the boundary
  call, later calls of that step are dropped, and the boundary call's observation is the one the
  replay just produced (never the recorded output of a dropped call: ``protocol.call_outputs``).
  ``"step"`` keeps the whole boundary step and replays through its last call.
- **g_ver** goes as one delimited block on the observation after the boundary
  (``samples.insert_g_ver``); the teacher's context is that message list, continued by the
  agent loop. The training row is the same list with exactly that block deleted; the prefix
  part is asserted byte-identical to the context without g_ver before a row is written.
- **Resumable**: every judge answer and every finished case (any status but
  ``infra_error``/``budget_exceeded``) goes through the result store keyed by everything that
  determines it (trajectory, task, boundary, hand-off, teacher fingerprint, g_ver version, loop
  limits). Kill the run and rerun it: finished cases are read back, never recomputed.
- **Retries**: infrastructure failures (sandbox, endpoint) are retried ``max_retries`` times,
  then counted as ``infra_error`` and left out of the store so the next run tries again.

Departures from the paper: the teacher always continues in agentpost's own agent loop (a bash
tool and a submit tool); a student imported from another scaffold keeps its history (converted
by ``distill.to_messages``) but not its scaffold, since that loop is the only one agentpost runs.
t_c is found after the fact (run the student to the end, annotate,
replay), as spec b.7's default says; the paper does not say how it found t_c during collection.

Layer: io.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from agentpost.agent.formats import ToolCallsFormat
from agentpost.agent.loop import AgentLoop, LoopConfig, truncate
from agentpost.config_checks import at_least, check, one_of, positive
from agentpost.errors import InfraError
from agentpost.replay.state import Specs, State, rebuild
from agentpost.sandbox.base import Sandbox
from agentpost.scvd.distill.samples import (
    GVER_VERSION,
    insert_g_ver,
    remove_g_ver,
    student_prefix,
    to_messages,
)
from agentpost.scvd.distill.teacher import Teacher
from agentpost.scvd.panel import vote
from agentpost.scvd.pipeline import (
    DiagnoseOptions,
    _Progress,
    annotate_all,
    task_hash,
    traj_hash,
)
from agentpost.scvd.records import PanelDecision
from agentpost.sft.rows import SFTRow, make_row, to_record
from agentpost.store import Store, key
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.model import Task
from agentpost.trajectory.calls import step_ids
from agentpost.trajectory.model import Trajectory

CACHED = {"kept", "no_candidate", "task_missing", "replay_failed", "unfaithful", "teacher_error",
          "teacher_unfinished", "evaluator_invalid", "teacher_failed"}  # fmt: skip


HANDOFFS = ("tool_call", "step")


@dataclass
class CollectOptions:
    handoff: Literal["tool_call", "step"] = "tool_call"
    concurrency: int = 2
    max_retries: int = 3
    backend: str = "bwrap"
    teacher_steps: int = 30
    command_timeout_s: float = 60.0
    observation_chars: int = 10_000
    progress: bool = True
    annotate: DiagnoseOptions = field(default_factory=lambda: DiagnoseOptions(progress=False))
    # trajectory id -> its run dir, where recorded snapshot references resolve (issue 20)
    snapshot_roots: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check(self, {
            "handoff": (self.handoff in HANDOFFS, one_of(HANDOFFS)),
            "concurrency": (at_least(self.concurrency, 1), "at least 1"),
            "max_retries": (at_least(self.max_retries, 0), "at least 0"),
            "teacher_steps": (at_least(self.teacher_steps, 1), "at least 1"),
            "command_timeout_s": (positive(self.command_timeout_s), "a positive number of seconds"),
            "observation_chars": (at_least(self.observation_chars, 1), "at least 1"),
        })  # fmt: skip


@dataclass
class HandoffState:
    """The candidate state in ``sandbox``: ``status`` ok | replay_failed | infra_error, and the
    boundary call's observation as the student's scaffold would have shown it."""

    status: str
    observation: str | None = None
    source: str = "replay"
    message: str = ""


StateSource = Callable[[Trajectory, Task, tuple[int, int], Sandbox, CollectOptions], HandoffState]


def replay_state(
    traj: Trajectory, task: Task, upto: tuple[int, int], sandbox: Sandbox, opts: CollectOptions
) -> HandoffState:
    """b.5 replay through and including ``upto`` into a prepared ``sandbox`` (the replay entry
    point, ``replay.state.rebuild``, told not to use a recorded snapshot)."""
    state = rebuild(traj, task, upto, sandbox=sandbox, use_snapshot=False,
                    call_timeout_s=opts.command_timeout_s)  # fmt: skip
    return handoff_state(traj, state, opts)


def handoff_state(traj: Trajectory, state: State, opts: CollectOptions) -> HandoffState:
    """The hand-off as the student's scaffold would show it: a failed or unfaithful state is
    no hand-off; a snapshot's observation is the recorded one; a replay's, the replayed one (in
    agentpost's own loop: its ``exit_code: N`` format)."""
    if state.status != "ok":  # a skipped call may have changed the state: no faithful hand-off
        return HandoffState(state.status, message=state.message, source=state.source)
    if state.source == "snapshot" or state.log is None:
        return HandoffState("ok", state.observation, source=state.source)
    last = next((c for c in reversed(state.log.calls) if c.action == "replayed"), None)
    if last is None:
        return HandoffState("ok", None)
    if _agentpost_loop(traj) and last.screen is None:  # the loop's own observation format
        text = truncate(last.text or "", opts.observation_chars)
        return HandoffState("ok", f"exit_code: {last.exit_code}\n{text}")
    return HandoffState("ok", state.observation)


def _agentpost_loop(traj: Trajectory) -> bool:
    return traj.agent == "agentpost" and traj.metadata.get("mode") == "tools"


def conversation(traj: Trajectory) -> list[dict[str, Any]]:
    """The chat messages of ``traj``; for agentpost's own loop, the user message exactly as the
    loop sent it (instruction, work directory, tool guide)."""
    user = None
    if _agentpost_loop(traj):
        workdir = traj.metadata.get("workdir", "/app")
        user = f"{(traj.instruction or '').strip()}\n\nWork directory: {workdir}\n{ToolCallsFormat.guide}"
    return to_messages(traj, user=user)


def boundary_of(traj: Trajectory, d: PanelDecision, handoff: str) -> tuple[int, int]:
    """The call the replay runs through: the annotated one, or the step's last (``step``)."""
    step, index = d.candidate_step, d.candidate_tool_call_index
    if handoff == "step":
        index = len(step_ids(traj)[step].tool_calls) - 1
    return step, index


def handoff_messages(
    traj: Trajectory, upto: tuple[int, int], state: HandoffState
) -> tuple[Trajectory, list[dict[str, Any]]]:
    """(student prefix through ``upto``, its messages with the replayed observation last)."""
    prefix = student_prefix(traj, upto[0], upto[1], "tool_call")
    msgs = conversation(prefix)
    if state.observation is not None and msgs and msgs[-1]["role"] == "tool":
        msgs[-1] = {**msgs[-1], "content": state.observation}
    elif not msgs or msgs[-1]["role"] != "tool":
        cid = prefix.turns[-1].tool_calls[-1].id
        msgs.append({"role": "tool", "tool_call_id": cid, "content": state.observation or ""})
    return prefix, msgs


def _row(prefix_msgs, context, new_turns, meta) -> SFTRow:
    train = remove_g_ver(context)
    if train[: len(prefix_msgs)] != prefix_msgs:  # g_ver removal must restore the prefix exactly
        raise AssertionError("g_ver removal did not restore the student prefix byte for byte")
    answers = [i for i in range(len(prefix_msgs), len(train)) if train[i]["role"] == "assistant"]
    for i, turn in zip(answers, new_turns, strict=False):
        if turn.reasoning:
            train[i] = {**train[i], "reasoning_content": turn.reasoning}
    return make_row(train, len(prefix_msgs), meta)


def continue_with_teacher(
    traj, task, d, teacher: Teacher, backend, opts, source, spec=None
) -> dict:
    """One case, in one fresh sandbox (of ``spec``, the task's, computed once per run by the
    caller): state → teacher → evaluator → row (or a status)."""
    upto = boundary_of(traj, d, opts.handoff)
    with backend.create(spec or spec_for(task, backend=backend)) as sb:
        prepare(task, sb)
        state = source(traj, task, upto, sb, opts)
        if state.status != "ok":
            return {"status": state.status, "message": state.message, "state_source": state.source}
        prefix, msgs = handoff_messages(traj, upto, state)
        context = insert_g_ver(msgs)
        turns = [t.model_copy(deep=True) for t in prefix.turns]
        cfg = LoopConfig(step_limit=len(turns) + opts.teacher_steps, timeout_s=task.agent_timeout_s,
                         command_timeout_s=opts.command_timeout_s,
                         observation_chars=opts.observation_chars)  # fmt: skip
        loop = AgentLoop(teacher.make(task), sb, cfg)
        # the loop's own step function, started from the student's history
        exit_status, error = loop.drive(
            context,
            loop.format.tools(),
            turns,
            task.workdir,
            f"{traj.id}::teacher",
            time.monotonic(),
        )
        new = turns[len(prefix.turns) :]
        out = {"teacher_exit": exit_status, "teacher_turns": len(new), "state_source": state.source,
               "usage": _usage(new)}  # fmt: skip
        if exit_status in ("budget_exceeded", "model_error"):
            status = "budget_exceeded" if exit_status == "budget_exceeded" else "teacher_error"
            return {**out, "status": status, "message": error or ""}
        if exit_status != "submitted":
            return {**out, "status": "teacher_unfinished"}
        ev = evaluate(task, sb)
    if ev.status == "infra_error":
        raise InfraError(f"evaluator: {ev.output[-300:]}")
    if ev.status != "ok":
        return {**out, "status": "evaluator_invalid", "message": ev.output[-300:]}
    if not ev.resolved:
        return {**out, "status": "teacher_failed"}
    meta = {"task_id": task.id, "source": "scvd", "recipe": "scvd", "trajectory": traj.id,
            "student": traj.model or traj.agent, "teacher": teacher.label, "boundary": list(upto),
            "handoff": opts.handoff, "g_ver": GVER_VERSION, "state_source": state.source}  # fmt: skip
    return {**out, "status": "kept", "row": to_record(_row(msgs, context, new, meta))}


def _usage(turns) -> dict[str, int]:
    used = [t.usage for t in turns if t.usage]
    return {"input_tokens": sum(u.input_tokens or 0 for u in used),
            "output_tokens": sum(u.output_tokens or 0 for u in used)}  # fmt: skip


def with_retries(fn: Callable[[], dict], retries: int) -> dict:
    """``fn()``, retried on infrastructure failures; after the last, an ``infra_error`` status."""
    for attempt in range(retries + 1):
        try:
            res = fn()
        except InfraError as e:
            res = {"status": "infra_error", "message": f"{type(e).__name__}: {e}"}
        if res["status"] != "infra_error":
            return {**res, "attempts": attempt + 1}
    return {**res, "attempts": retries + 1}


def collect(
    trajs: list[Trajectory],
    tasks: list[Task],
    panel: Any,
    teacher: Teacher,
    store: Store,
    opts: CollectOptions | None = None,
    source: StateSource = replay_state,
) -> list[dict]:
    """Every case's result (``status``, ``row`` when kept), in the order of ``trajs``."""
    from agentpost.sandbox.registry import get_backend

    opts = opts or CollectOptions()
    by_id = {t.id: t for t in tasks}
    thash = {t.id: task_hash(t) for t in tasks}
    backend = get_backend(opts.backend)
    specs = Specs(backend)  # each task's sandbox spec once per run
    with _Progress(opts.progress) as prog:
        judged = annotate_all(trajs, panel, store, opts.annotate, prog)
        decisions = [vote([judged[(i, j)].annotation for j in range(len(panel.judges))],
                          panel.arbiter, panel.ids) for i in range(len(trajs))]  # fmt: skip
        tid = prog.task("collect", len(trajs))

        def one(i: int) -> dict:
            traj, d = trajs[i], decisions[i]
            base = {"trajectory": traj.id, "task": traj.task_id,
                    "boundary": [d.candidate_step, d.candidate_tool_call_index]}  # fmt: skip
            task = by_id.get(traj.task_id or "")
            if not d.candidate_formed:
                res = {"status": "no_candidate"}
            elif task is None:
                res = {"status": "task_missing"}
            else:
                k = key("scvd-collect", {
                    "trajectory": traj_hash(traj), "task": thash[task.id], "decision": d.to_json(),
                    "teacher": teacher.fingerprint, "g_ver": GVER_VERSION,
                    "options": {"handoff": opts.handoff, "teacher_steps": opts.teacher_steps,
                                "command_timeout_s": opts.command_timeout_s,
                                "observation_chars": opts.observation_chars},
                    "source": getattr(source, "__name__", str(source)),
                })  # fmt: skip
                res = store.get(k)
                if res is None:
                    res = with_retries(lambda: continue_with_teacher(
                        traj, task, d, teacher, backend, opts, source, specs(task)),
                        opts.max_retries)  # fmt: skip
                    if res["status"] in CACHED:
                        store.put(k, res)
            prog.advance(tid)
            return {**base, **res}

        with ThreadPoolExecutor(max_workers=max(1, opts.concurrency)) as pool:
            return list(pool.map(one, range(len(trajs))))
