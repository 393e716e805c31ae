"""Candidate-state replay (SCVD b.5): rebuild a trajectory's environment in a fresh sandbox by
replaying its recorded actions, in order, through and including call ``(STEP, CALL)``, then run
the task's official evaluator on that state.

``STEP`` matches ``Turn.step`` when the turn has one, else ``Turn.index``; ``CALL`` is the
zero-based index into that turn's ``tool_calls``. Control pseudo-calls (task-complete, submit)
and ``other`` calls are skipped; ``shell`` calls run one exec each; ``edit`` calls apply
str_replace_editor-style edits inside the sandbox; runs of ``keystrokes`` calls go to a tmux
session (``replay/tmux.py``).

Departures, and why:
- Persistent-shell scaffolds (SWE-agent, OpenHands, Terminus) keep a shell's cwd and exported
  variables between calls; one exec per call cannot, so by default each shell call restores the
  previous call's cwd and exports from files in the sandbox's private ``/tmp``. mini-swe-agent
  runs every command in a fresh subshell, so its trajectories replay without that
  (``Trajectory.metadata["shell_state"]`` = "fresh" | "persistent", or the ``persist_shell``
  argument, overrides the choice).
- The replay sandbox has the network only when the task's evaluator needs it.
- An edit applies only when the recorded observation does not report an error (a failed edit
  changed nothing when it was recorded). An edit that fails now but succeeded then means the
  state diverged: the replay is ``replay_failed`` and is not evaluated (SCVD excludes it).
- Fidelity compares replayed and recorded observations; it is a diagnostic only.
- IPython cells (OpenHands ``execute_ipython_cell``) run as python3 programs, ``!`` lines in a
  shell, without state shared between cells. A call replay cannot run that may have changed the
  state (a cell with ``%`` magics, an unknown tool) is skipped and makes the replay
  ``unfaithful``: it is graded for the record but gives no y_c (issue 13 item 7).

Layer: io.
"""

from __future__ import annotations

import re
import time
from typing import Any

from agentpost.errors import InputError
from agentpost.replay import fidelity
from agentpost.replay.calls import Replayer
from agentpost.replay.model import (
    CallRecord,
    PlannedCall,
    ReplayLog,
    ReplayResult,
)
from agentpost.sandbox.base import Backend, Sandbox, SandboxSpec
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.model import Task
from agentpost.trajectory.calls import call_outputs
from agentpost.trajectory.model import Observation, Trajectory, Turn


def parse_upto(text: str) -> tuple[int, int]:
    """``"STEP:CALL"`` → ``(STEP, CALL)``."""
    m = re.fullmatch(r"\s*(-?\d+)\s*:\s*(\d+)\s*", text or "")
    if not m:
        raise InputError(None, "--upto", f"expected STEP:CALL (two integers), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _step_of(turn: Turn) -> int:
    return turn.step if turn.step is not None else turn.index


def _observation(turn: Turn, i: int) -> Observation | None:
    return call_outputs(turn)[i]  # the protocol's one rule (a single screen follows the last call)


def plan(traj: Trajectory, upto: tuple[int, int] | None = None) -> list[PlannedCall]:
    """Every call of ``traj`` in order, through and including ``upto`` (all when None)."""
    out: list[PlannedCall] = []
    for turn in traj.turns:
        step = _step_of(turn)
        for i, call in enumerate(turn.tool_calls):
            out.append(PlannedCall(step, i, call, _observation(turn, i)))
            if upto is not None and (step, i) == upto:
                return out
    if upto is not None:
        _raise_missing(traj, upto)
    return out


def _raise_missing(traj: Trajectory, upto: tuple[int, int]) -> None:
    turn = next((t for t in traj.turns if _step_of(t) == upto[0]), None)
    if turn is None:
        raise InputError(traj.id, "--upto", f"no turn with step {upto[0]}")
    raise InputError(
        traj.id,
        "--upto",
        f"step {upto[0]} has {len(turn.tool_calls)} tool calls; no call {upto[1]}",
    )


def _persistent_shell(traj: Trajectory) -> bool:
    """``metadata["shell_state"]`` ("fresh" | "persistent") when the producer set it; else
    fresh for mini-swe-agent, persistent for every other scaffold."""
    state = traj.metadata.get("shell_state")
    if state in ("fresh", "persistent"):
        return state == "persistent"
    names = " ".join(filter(None, [traj.agent, traj.source.format if traj.source else None]))
    return "mini-swe-agent" not in names.lower() and "mini_swe_agent" not in names.lower()


def _is_swe_agent(traj: Trajectory) -> bool:
    names = " ".join(
        filter(None, [traj.agent, traj.source.format if traj.source else None])
    ).lower()
    return "swe-agent" in names and "mini" not in names


def _fidelity(rec: CallRecord, p: PlannedCall) -> None:
    if rec.action == "replayed" and p.observation is not None:
        obs = p.observation
        rec.recorded_exit = obs.exit_code
        rec.fidelity = fidelity.compare(obs.text, obs.exit_code, rec.text, rec.exit_code)


def replay_into(
    traj: Trajectory,
    task: Task,
    sandbox: Sandbox,
    upto: tuple[int, int] | None = None,
    *,
    persist_shell: bool | None = None,
    call_timeout_s: float = 120.0,
    max_duration_s: float = 60.0,
) -> ReplayLog:
    """Replay ``traj``'s calls through ``upto`` into a prepared ``sandbox``; stops at the first
    call that fails to replay (``log.failed``). Evaluates nothing: SCVD's teacher hand-off
    continues from the sandbox as it is."""
    planned = plan(traj, upto)
    persist = _persistent_shell(traj) if persist_shell is None else persist_shell
    r = Replayer(task, sandbox, persist, call_timeout_s, max_duration_s, _is_swe_agent(traj))
    log = ReplayLog()
    i = 0
    while i < len(planned):
        p = planned[i]
        kind = p.call.kind
        if kind == "keystrokes":
            j = i
            while j < len(planned) and planned[j].call.kind == "keystrokes":
                j += 1
            group, recs = planned[i:j], r.keystrokes(planned[i:j])
            i = j
        else:
            group = [p]
            if kind == "shell":
                recs = [r.shell(p)]
            elif kind == "edit":
                recs = [r.edit(p)]
            else:  # IPython cells; control, read-only and unknown tools (skipped)
                recs = [r.other(p)]
            i += 1
        for p_, rec in zip(group, recs, strict=True):
            _fidelity(rec, p_)
            log.calls.append(rec)
            if rec.action == "failed":
                log.failed = rec
                return log
    return log


def replay(
    traj: Trajectory,
    task: Task,
    upto: tuple[int, int] | None = None,
    backend: Backend | None = None,
    spec: SandboxSpec | None = None,
    **kwargs: Any,
) -> ReplayResult:
    """Fresh sandbox → task environment → replay through ``upto`` → the task's evaluator.
    ``spec``: the task's sandbox spec when the caller has it (``state.Specs``)."""
    if backend is None:
        from agentpost.sandbox.registry import get_backend

        backend = get_backend("bwrap")
    plan(traj, upto)  # a bad --upto is the caller's input error, raised before any sandbox
    t0 = time.monotonic()
    try:
        with backend.create(spec or spec_for(task, backend=backend)) as sb:
            prepare(task, sb)
            log = replay_into(traj, task, sb, upto, **kwargs)
            if log.failed is not None:
                return _result("replay_failed", log, t0, message=log.failed.error or "")
            ev = evaluate(task, sb)
            if log.unfaithful:  # graded for the record, never a y_c
                bad = log.unfaithful[0]
                return _result("unfaithful", log, t0, reward=ev.reward, resolved=ev.resolved,
                               output=ev.output, message=f"step {bad.step} call {bad.call_index}: {bad.error}")  # fmt: skip
    except InputError:
        raise
    except Exception as e:  # sandbox/infrastructure failure: retryable, never a verdict
        return ReplayResult(
            "infra_error",
            None,
            None,
            0,
            None,
            message=f"{type(e).__name__}: {e}",
            duration_s=time.monotonic() - t0,
        )
    return _result(ev.status, log, t0, reward=ev.reward, resolved=ev.resolved, output=ev.output,
                   evaluator=ev.details)  # fmt: skip


def _result(
    status: str,
    log: ReplayLog,
    t0: float,
    *,
    reward=None,
    resolved=None,
    output="",
    message="",
    evaluator: dict | None = None,
) -> ReplayResult:
    failed = None
    if log.failed is not None:
        failed = {
            "step": log.failed.step,
            "call": log.failed.call_index,
            "kind": log.failed.kind,
            "error": log.failed.error,
        }
    fids = [c.fidelity for c in log.calls if c.fidelity is not None]
    return ReplayResult(
        status=status,
        reward=reward,
        resolved=resolved,
        calls_replayed=log.replayed,
        fidelity=fidelity.summarize(fids),
        calls_skipped=sum(1 for c in log.calls if c.action == "skipped"),
        message=message,
        failed_call=failed,
        evaluator_output=output[-2000:],
        duration_s=time.monotonic() - t0,
        details={
            "timed_out_calls": [[c.step, c.call_index] for c in log.calls if c.timed_out],
            "unfaithful_calls": [[c.step, c.call_index] for c in log.unfaithful],
            # [step, call, recorded exit code, replayed exit code] where the two differ
            "exit_mismatches": [
                [c.step, c.call_index, c.recorded_exit, c.exit_code]
                for c in log.calls
                if c.fidelity is not None and c.fidelity.exit_match is False
            ],
            # what the evaluator said beyond the reward (SWE-bench: the candidate patch, report)
            **({"evaluator": evaluator} if evaluator else {}),
        },  # fmt: skip
    )
