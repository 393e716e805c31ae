"""Replay every trajectory of a run into its own task for the fidelity report, resumably.

Each trajectory is replayed in full into a fresh sandbox of its task (``replay.run.replay``) and
graded by the task's evaluator; its ``ReplayResult`` is kept in the result store under a key of
the trajectory's content, the task (id, folder, image) and the call timeout, so a rerun after a
crash replays only what is missing. A replay that ended in an infrastructure fault is not kept
(it is retried next time). A trajectory whose task is not in the suite gets a ``no_task`` row.

Layer: io.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from agentpost.errors import InfraError
from agentpost.replay.fidelity_report import row
from agentpost.replay.run import replay
from agentpost.replay.state import Specs
from agentpost.sandbox.base import Backend
from agentpost.store import Store, key
from agentpost.tasks.model import Task
from agentpost.trajectory.model import Trajectory

KIND = "replay-fidelity"
VERSION = 1


def replay_key(traj: Trajectory, task: Task, image: str | None, call_timeout_s: float) -> dict:
    """What decides a trajectory's replay result."""
    digest = hashlib.sha256(traj.model_dump_json().encode()).hexdigest()
    return {"v": VERSION, "trajectory": digest, "task": task.id, "task_path": str(task.path),
            "image": image, "call_timeout_s": call_timeout_s}  # fmt: skip


def run(
    trajs: Iterable[Trajectory],
    tasks: dict[str, Task],
    backend: Backend,
    store: Store,
    *,
    official: dict[str, bool] | None = None,
    call_timeout_s: float = 120.0,
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    """The report's rows, one per trajectory, in order (``official``: task id -> resolved)."""
    official = official or {}
    log = log or (lambda _m: None)
    specs = Specs(backend)
    trajs = list(trajs)
    rows = []
    for n, traj in enumerate(trajs, 1):
        task = tasks.get(traj.task_id or "")
        if task is None:
            result = {"status": "no_task", "message": f"no task {traj.task_id!r} in the suite"}
            rows.append(row(traj, traj.task_id or "", result, None))
        else:
            result = _replayed(traj, task, backend, store, specs, call_timeout_s)
            rows.append(row(traj, task.id, result, official.get(task.id)))
        r = rows[-1]
        log(f"[{n}/{len(trajs)}] {traj.id}: {r['status']} exit codes "
            f"{r['exit_codes_matched']}/{r['exit_codes_compared']}, diff equal {r['diff_equal']}, "
            f"resolved {r['resolved']}")  # fmt: skip
    return rows


def _replayed(traj, task, backend, store, specs, call_timeout_s) -> dict:
    try:
        spec = specs(task)
    except InfraError as e:  # the task's image cannot be built or failed its gold gate
        return {"status": "infra_error", "message": str(e)}
    k = key(KIND, replay_key(traj, task, getattr(spec, "image", None), call_timeout_s))
    found = store.get(k)
    if found is not None:
        return found
    result = replay(traj, task, backend=backend, spec=spec, call_timeout_s=call_timeout_s).to_json()
    if result["status"] != "infra_error":
        store.put(k, result)
    return result
