"""Where ``scvd collect`` takes the candidate state from, besides replay (``collect.replay_state``):
the snapshot recorded at the boundary call, when the run has one (``run --snapshots``).

Layer: io.
"""

from __future__ import annotations

from typing import Any

from agentpost.ingress.keys import Refused
from agentpost.replay import snapshots
from agentpost.sandbox import snapshot_store
from agentpost.sandbox.base import Sandbox
from agentpost.scvd.distill.collect import HandoffState, replay_state
from agentpost.tasks.model import Task
from agentpost.trajectory.calls import call_outputs, step_ids
from agentpost.trajectory.model import Trajectory


def snapshot_or_replay_state(traj: Trajectory, task: Task, upto: tuple[int, int], sandbox: Sandbox,
                             opts: Any):  # fmt: skip
    """``scvd collect``'s candidate-state source: the recorded snapshot at ``upto`` restored into
    the prepared ``sandbox`` when the run's manifest vouches for it (``snapshot_store.trusted``;
    the hand-off observation is the one recorded for that call), else replay
    (``collect.replay_state``). An archive ``ingress`` refuses is unpacked apart first, so the
    sandbox is untouched and the state is replayed."""
    ref = snapshots.ref_at(traj, upto)
    if ref is None:
        return replay_state(traj, task, upto, sandbox, opts)
    with snapshot_store.trusted(ref, opts.snapshot_roots.get(traj.id), traj.id, upto) as found:
        if found.path is None:
            return replay_state(traj, task, upto, sandbox, opts)
        try:
            snapshots.restore_state(sandbox, found.path, clear=True)
        except Refused:
            return replay_state(traj, task, upto, sandbox, opts)
    obs = call_outputs(step_ids(traj)[upto[0]])[upto[1]]
    return HandoffState("ok", obs.text if obs is not None else None, source="snapshot")
