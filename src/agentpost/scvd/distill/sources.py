"""Where ``scvd collect`` takes the candidate state from, besides replay (``collect.replay_state``):
the snapshot recorded at the boundary call, when the run has one (``run --snapshots``).

Layer: io.
"""

from __future__ import annotations

from typing import Any

from agentpost.replay.state import rebuild
from agentpost.sandbox.base import Sandbox
from agentpost.scvd.distill.collect import handoff_state
from agentpost.tasks.model import Task
from agentpost.trajectory.model import Trajectory


def snapshot_or_replay_state(traj: Trajectory, task: Task, upto: tuple[int, int], sandbox: Sandbox,
                             opts: Any):  # fmt: skip
    """``scvd collect``'s candidate-state source: the recorded snapshot at ``upto`` restored into
    the prepared ``sandbox`` when the run's manifest vouches for it (``snapshot_store.trusted``;
    the hand-off observation is the one recorded for that call), else replay
    (``collect.replay_state``), both through the replay entry point (``replay.state.rebuild``).
    An archive ``ingress`` refuses is unpacked apart first, so the sandbox is untouched and the
    state is replayed."""
    state = rebuild(traj, task, upto, sandbox=sandbox, snapshot_root=opts.snapshot_roots.get(traj.id),
                    call_timeout_s=opts.command_timeout_s)  # fmt: skip
    return handoff_state(traj, state, opts)
