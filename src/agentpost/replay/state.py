"""The replay entry point: the state of a task's environment right after call ``upto`` of a
trajectory, rebuilt in a sandbox, graded by the task's evaluator when the sandbox is fresh.

``rebuild(traj, task, upto, ...)`` is what every consumer calls: ``agentpost diagnose`` (y_c:
a fresh sandbox per case, graded), ``scvd collect`` (into the sandbox the teacher then continues
in: not graded), ``agentpost replay`` (the whole trajectory, graded). Where the state comes from:

- **the recorded snapshot** of that call (``run --snapshots``), restored, when the run's
  manifest vouches for it (``snapshot_store.trusted``; ``snapshots.py``); in a fresh sandbox the
  same boundary is also replayed and compared when ``check_fidelity`` is set, and a verdict the
  replay contradicts is ``state_conflict`` (neither is used);
- else **replay** of the recorded calls, in order, through and including ``upto`` (``run.py``),
  saying why the snapshot was not used (``snapshot_untrusted``).

Every ``State`` says which (``source``). The task's sandbox spec is computed by the caller once
per task and run (``Specs``) and passed down, so a run over many trajectories of one task builds
or looks up its image once; without ``spec`` it is computed here.

Layer: io.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from agentpost.ingress.keys import Refused
from agentpost.replay import snapshots
from agentpost.replay.model import ReplayLog, ReplayResult
from agentpost.replay.run import plan, replay, replay_into
from agentpost.sandbox import snapshot_store
from agentpost.sandbox.base import Backend, Sandbox, SandboxSpec
from agentpost.tasks.evaluate import spec_for
from agentpost.tasks.model import Task
from agentpost.trajectory.calls import call_outputs, step_ids
from agentpost.trajectory.model import Trajectory


@dataclass
class State:
    """A rebuilt state. ``status``: ok | unfaithful | replay_failed | infra_error, and, when
    graded, the evaluator's (evaluator_invalid | timeout). ``observation``: what the boundary
    call showed (the recorded one for a snapshot, the replayed one for a replay)."""

    status: str
    source: str  # snapshot | replay
    result: ReplayResult | None = None  # graded (fresh sandbox) only
    log: ReplayLog | None = None  # replay only: every call's record
    observation: str | None = None
    message: str = ""
    snapshot_untrusted: str | None = None  # why a recorded snapshot was not used
    fidelity_check: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The graded state as ``records.jsonl`` and the result store keep it."""
        if self.result is None:
            raise ValueError("only a graded state (rebuilt in a fresh sandbox) has a result")
        out = self.result.to_json()
        out["source"] = self.source
        if self.snapshot_untrusted is not None:
            out["snapshot_untrusted"] = self.snapshot_untrusted
        if self.fidelity_check is not None:
            out["fidelity_check"] = self.fidelity_check
        if self.status == "state_conflict":
            out.update(status="state_conflict", resolved=None, reward=None, message=self.message)
        return out


class Specs:
    """Each task's sandbox spec, computed once per run (``tasks.evaluate.spec_for``: on docker
    it builds or finds the task's image), also when worker threads ask for it at once (one
    lock per task, so two tasks' images still build side by side)."""

    def __init__(self, backend: Backend | None):
        self.backend = backend
        self._specs: dict[str, SandboxSpec] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def __call__(self, task: Task) -> SandboxSpec:
        with self._lock:
            lock = self._locks.setdefault(task.id, threading.Lock())
        with lock:
            spec = self._specs.get(task.id)
            if spec is None:
                spec = self._specs[task.id] = spec_for(task, backend=self.backend)
        return spec


def rebuild(
    traj: Trajectory,
    task: Task,
    upto: tuple[int, int] | None = None,
    *,
    backend: Backend | None = None,
    sandbox: Sandbox | None = None,
    spec: SandboxSpec | None = None,
    snapshot_root: str | None = None,
    use_snapshot: bool = True,
    check_fidelity: bool = False,
    **replay_kw: Any,
) -> State:
    """The state after call ``upto`` = (STEP, CALL) (every call when None).

    ``sandbox`` given: the state is rebuilt into it (a prepared task environment the caller
    owns and goes on using) and not graded. Otherwise a fresh sandbox of ``backend`` (bubblewrap
    by default) from ``spec`` is prepared, the state rebuilt and graded (``State.result``).
    ``replay_kw`` goes to the replay (``persist_shell``, ``call_timeout_s``, ``max_duration_s``).
    A bad ``upto`` is the caller's ``InputError``, raised before any sandbox starts."""
    plan(traj, upto)
    ref = snapshots.ref_at(traj, upto) if use_snapshot and upto is not None else None
    if sandbox is None:
        if backend is None:
            from agentpost.sandbox.registry import get_backend

            backend = get_backend("bwrap")
        spec = spec or spec_for(task, backend=backend)
    args = (traj, task, upto, backend, sandbox, spec, replay_kw)
    if ref is None:
        return _replayed(*args, why=None)
    assert upto is not None  # a reference is looked up for a call only
    with snapshot_store.trusted(ref, snapshot_root, traj.id, upto) as found:
        if found.path is None:
            return _replayed(*args, why=found.why)
        try:
            if sandbox is not None:
                snapshots.restore_state(sandbox, found.path, clear=True)
                obs = call_outputs(step_ids(traj)[upto[0]])[upto[1]]
                return State("ok", "snapshot", observation=obs.text if obs is not None else None)
            snap = snapshots.grade_snapshot(task, found.path, backend, spec=spec)
        except Refused as e:  # unpacked apart first: the sandbox is untouched
            return _replayed(*args, why=f"archive refused: {e}")
        state = State(snap.status, "snapshot", result=snap, message=snap.message)
        if check_fidelity and snap.status != "infra_error":
            check = snapshots.fidelity_check(traj, task, upto, backend, found.path, snap, spec)
            state.fidelity_check = check
            if check.get("y_c_agree") is False:
                state.status = "state_conflict"
                state.message = ("the recorded snapshot and its replay give different verdicts; "
                                 "neither is used")  # fmt: skip
    return state


def _replayed(traj, task, upto, backend, sandbox, spec, replay_kw, why: str | None) -> State:
    if sandbox is None:
        res = replay(traj, task, upto=upto, backend=backend, spec=spec, **replay_kw)
        return State(res.status, "replay", result=res, message=res.message, snapshot_untrusted=why)
    log = replay_into(traj, task, sandbox, upto, **replay_kw)
    if log.failed is not None:
        return State("replay_failed", "replay", log=log, message=log.failed.error or "")
    if log.unfaithful:  # a skipped call may have changed the state: not a faithful state
        return State("unfaithful", "replay", log=log, message=log.unfaithful[0].error or "")
    return State("ok", "replay", log=log, observation=log.last_observation)


def candidate_result(
    traj: Trajectory,
    task: Task,
    upto: tuple[int, int],
    backend: Backend,
    run_dir: str | None,
    *,
    check_fidelity: bool = True,
) -> dict[str, Any]:
    """The graded state at ``upto`` as a JSON dict (its 0.1 spelling; new code calls
    ``rebuild``)."""
    return rebuild(traj, task, upto, backend=backend, snapshot_root=run_dir,
                   check_fidelity=check_fidelity).to_json()  # fmt: skip
