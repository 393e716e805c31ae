"""The candidate state from what was recorded: grade a recorded snapshot instead of replaying.

For rollouts agentpost records itself with ``run --snapshots``, the exact state of the writable
directories after every call is on disk (``sandbox/snapshot_store.py``). At the SCVD boundary
call ``(STEP, CALL)`` this module restores that archive into a fresh sandbox and runs the task's
evaluator there, so y_c carries no replay drift (clocks, randomness, background processes).
A reference is a claim made by a trajectory file, so it is believed only through
``snapshot_store.trusted``: the run's own manifest (written by ``run``) must list that archive
for this trajectory, step and call, and the archive must be a plain file in the run's
``snapshots/`` with the recorded hash. Where no snapshot exists or it is not believed, the state
is rebuilt by replay (``replay/run.py``) and the record says why
(``snapshot_untrusted``); an archive whose members ``ingress`` refuses to unpack (a symlink and
a hard link through it, ``..``, past the size bound) is not believed either. Every result says
which source gave it (``source``: ``snapshot`` | ``replay``).

Fidelity check: when a snapshot is used, the same boundary is also replayed and the two states
are compared (the evaluator's verdict and the files' contents, ignoring timestamps and owners).
Where the two verdicts disagree the case is ``state_conflict``: the record keeps both and y_c
uses neither (a lie in the run folder and a drifting replay look the same from here). The
figure goes into the diagnose summary; it measures how far replay can be trusted on runs that
have no snapshots.

What is restored: the snapshot's writable directories except the verifier's (``/tests``,
``/solution``, ``/logs/verifier``), which the evaluator fills itself; anything the agent left
there is not carried into grading.

Layer: io.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from agentpost.ingress.keys import Refused
from agentpost.replay.model import ReplayResult
from agentpost.sandbox import snapshot_store
from agentpost.sandbox.base import Backend, Sandbox, SandboxSpec
from agentpost.sandbox.hostfs import bounds_for, unarchive
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.model import Task
from agentpost.trajectory.model import Trajectory

VERIFIER_DIRS = ("/tests", "/solution")
VERIFIER_SUBDIRS = ("logs/verifier",)


def ref_at(traj: Trajectory, upto: tuple[int, int]) -> Any | None:
    """The snapshot reference recorded after call ``upto`` = (STEP, CALL), if any."""
    step, call = upto
    for turn in traj.turns:
        if (turn.step if turn.step is not None else turn.index) != step:
            continue
        for ref in turn.extra.get("snapshots") or []:
            if snapshot_store.ref_call(ref) == call:
                return ref
    return None


def restore_state(sandbox: Sandbox, archive: str | Path, *, clear: bool = False) -> None:
    """Fill ``sandbox``'s writable dirs from ``archive`` (verifier dirs left out). The archive
    is unpacked on the host first (``ingress.tarball.extract``, as ``Backend.restore``: a member
    it refuses raises ``Refused`` before the sandbox is touched), then, after emptying the dirs
    when ``clear``, copied in through ``put_dir``, so it works on every backend."""
    allowed = [d for d in sandbox.spec.writable_dirs if d not in VERIFIER_DIRS]
    with tempfile.TemporaryDirectory(prefix="agentpost-snapstate-") as tmp:
        unarchive(str(archive), tmp, allowed, bounds_for(sandbox.spec.limits.disk_bytes),
                  skip=VERIFIER_SUBDIRS)  # fmt: skip
        if clear:
            clear_writable(sandbox)
        for d in allowed:
            host = os.path.join(tmp, d.strip("/"))
            if os.path.isdir(host):
                sandbox.put_dir(host, d)


def grade_snapshot(
    task: Task, archive: str | Path, backend: Backend, spec: SandboxSpec | None = None
) -> ReplayResult:
    """Restore ``archive`` into a fresh sandbox (of ``spec``, the task's by default) and run the
    task's evaluator on it. An archive ``ingress`` refuses to unpack raises ``Refused`` (the run
    folder's doing, not a fault)."""
    t0 = time.monotonic()
    try:
        with backend.create(spec or spec_for(task, backend=backend)) as sb:
            restore_state(sb, archive)
            ev = evaluate(task, sb)
    except Refused:
        raise
    except Exception as e:  # infrastructure: retryable, never a verdict
        return ReplayResult("infra_error", None, None, 0, None, message=f"{type(e).__name__}: {e}",
                            duration_s=time.monotonic() - t0, details={"source": "snapshot"})  # fmt: skip
    return ReplayResult(ev.status, ev.reward, ev.resolved, 0, None,
                        evaluator_output=ev.output[-2000:], duration_s=time.monotonic() - t0,
                        details={"source": "snapshot"})  # fmt: skip


def replayed_state(
    traj: Trajectory, task: Task, upto: tuple[int, int], backend: Backend,
    spec: SandboxSpec | None = None,
) -> tuple[dict[str, Any], dict[str, str] | None]:  # fmt: skip
    """Replay through ``upto``, then (status, resolved) of the evaluator and the manifest of the
    replayed writable dirs (None when the replay failed)."""
    from agentpost.replay.run import replay_into

    with backend.create(spec or spec_for(task, backend=backend)) as sb:
        prepare(task, sb)
        log = replay_into(traj, task, sb, upto)
        if log.failed is not None:
            return {"status": "replay_failed", "resolved": None}, None
        with tempfile.TemporaryDirectory(prefix="agentpost-fid-") as tmp:
            path = sb.snapshot(os.path.join(tmp, "replayed.tar")).path
            man = _comparable(snapshot_store.contents(path))
        ev = evaluate(task, sb)
    return {"status": ev.status, "resolved": ev.resolved}, man


def _comparable(man: dict[str, str]) -> dict[str, str]:
    skip = tuple(d.strip("/") for d in VERIFIER_DIRS) + VERIFIER_SUBDIRS
    return {k: v for k, v in man.items() if not any(k == s or k.startswith(s + "/") for s in skip)}


def fidelity_check(
    traj: Trajectory, task: Task, upto: tuple[int, int], backend: Backend, archive: Path,
    snap: ReplayResult, spec: SandboxSpec | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Replay the same boundary and compare it with the snapshot: verdicts and file contents."""
    try:
        rep, man = replayed_state(traj, task, upto, backend, spec)
    except Refused as e:  # the replayed state is over the bound: no comparison, no fault
        return {"replay_status": "refused", "message": str(e)}
    except Exception as e:
        return {"replay_status": "infra_error", "message": f"{type(e).__name__}: {e}"}
    snap_man = _comparable(snapshot_store.contents(archive))
    out: dict[str, Any] = {"replay_status": rep["status"], "replay_resolved": rep["resolved"]}
    if rep["status"] == "ok" and snap.status == "ok":
        out["y_c_agree"] = bool(rep["resolved"]) == bool(snap.resolved)
    if man is not None:
        differ = sorted(k for k in set(man) | set(snap_man) if man.get(k) != snap_man.get(k))
        out["files_agree"] = not differ
        out["files_differing"] = differ[:20]
    return out


def clear_writable(sandbox: Sandbox) -> None:
    """Empty the sandbox's non-verifier writable dirs (a prepared task environment), so that a
    restored snapshot holds exactly the recorded files, deletions included."""
    dirs = [d for d in sandbox.spec.writable_dirs if d not in VERIFIER_DIRS]
    res = sandbox.exec(["find", *dirs, "-mindepth", "1", "-delete"], timeout_s=60)
    if res.exit_code != 0:
        raise OSError(f"cannot empty {dirs} before restoring a snapshot: {res.stderr[-300:]}")


def fidelity_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """How often replay and snapshot agreed, over the results that have both."""
    checks = [r["fidelity_check"] for r in results if isinstance(r.get("fidelity_check"), dict)]
    yc = [c["y_c_agree"] for c in checks if "y_c_agree" in c]
    files = [c["files_agree"] for c in checks if "files_agree" in c]
    return {
        "compared": len(checks),
        "y_c_agree": sum(yc),
        "y_c_compared": len(yc),
        "y_c_agreement": round(sum(yc) / len(yc), 4) if yc else None,
        "files_agree": sum(files),
        "files_compared": len(files),
        "files_agreement": round(sum(files) / len(files), 4) if files else None,
    }
