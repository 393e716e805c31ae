"""`agentpost replay TRAJ.jsonl --suite SUITE [--task ID]`: rebuild a trajectory's state in a fresh
sandbox (through call STEP:CALL with ``--upto``) and grade it with the task's evaluator.

Layer: edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend
from agentpost.documents.formats import producer
from agentpost.errors import InputError


def _pick(path: Path, traj_id: str | None, fmt: str | None):
    """The one trajectory to replay: canonical JSONL or any importable scaffold log."""
    from agentpost.trajectory.importing import NotATrajectory, import_file

    if not path.is_file():
        raise InputError(path, None, "no such file")
    try:
        trajs = import_file(path, fmt)
    except NotATrajectory as e:
        raise InputError(path, None, str(e)) from None
    if traj_id is not None:
        trajs = [t for t in trajs if t.id == traj_id]
        if not trajs:
            raise InputError(path, "--id", f"no trajectory with id {traj_id!r}")
    if len(trajs) != 1:
        raise InputError(path, "--id", f"{len(trajs)} trajectories; say which with --id")
    return trajs[0]


def replay_command(
    trajectories: Path = typer.Argument(
        ..., help="Trajectories: canonical JSONL or a scaffold log (ATIF, SWE-agent, ...)."
    ),
    task_ref: str | None = typer.Option(
        None, "--task", help="Task id in --suite (default: the trajectory's), or a task directory."
    ),
    suite: str | None = typer.Option(None, "--suite", help="Suite directory or bundled name."),
    traj_id: str | None = typer.Option(None, "--id", help="Which trajectory of the file."),
    fmt: str | None = typer.Option(None, "--format", help="Input format (default: detected)."),
    upto: str | None = typer.Option(
        None, "--upto", help="Replay through call STEP:CALL (inclusive)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
    call_timeout: float = typer.Option(120.0, "--call-timeout", help="Seconds per replayed call."),
) -> None:
    """Replay a trajectory's actions in a fresh sandbox and run the task's evaluator.

    Prints {status, reward, resolved, calls_replayed, fidelity}; exits 1 unless status is ok.
    """
    from agentpost.replay.run import parse_upto, replay

    if call_timeout <= 0:  # every call would time out at once and the replay still say "ok"
        raise InputError(None, "--call-timeout", f"must be positive, got {call_timeout}")
    if not call_timeout <= 7 * 24 * 3600:  # nan, inf, 1e308
        raise InputError(
            None, "--call-timeout", f"{call_timeout!r} is not a number of seconds up to a week"
        )
    traj = _pick(trajectories, traj_id, fmt)
    task = _task(task_ref, suite, traj.task_id)
    if traj.task_id and traj.task_id != task.id:  # its actions, graded on another task: no result
        raise InputError(
            str(task.path),
            "--task",
            f"trajectory {traj.id!r} is of task {traj.task_id!r}, not {task.id!r}",
        )
    point = parse_upto(upto) if upto is not None else None
    chosen = sandbox_backend(backend)
    result = replay(traj, task, upto=point, backend=chosen, call_timeout_s=call_timeout)
    out = result.to_json()
    out["producer"] = producer(replay, trajectory=traj.id, task=task.id, upto=upto,
                               backend=backend)  # fmt: skip
    if as_json:
        typer.echo(json.dumps(out))
    else:
        fid = out["fidelity"] or {}
        typer.echo(
            f"{out['status']}: reward={out['reward']} resolved={out['resolved']} "
            f"calls_replayed={out['calls_replayed']} exit_match={fid.get('exit_code_match')} "
            f"similarity={fid.get('text_similarity')}"
        )
        if result.status != "ok":
            typer.echo(_why(out))
    if result.status != "ok":
        raise typer.Exit(1)


def _task(ref: str | None, suite: str | None, traj_task: str | None):
    """The task to replay against: an id in ``suite`` (the trajectory's own by default), or,
    without ``--suite``, a task directory (the older spelling ``--task DIR``)."""
    from agentpost.commands._options import suite_dir
    from agentpost.tasks.loader import load_suite, load_task

    if suite is None:
        if ref is None:
            raise InputError(None, "--suite", "name the suite (or give --task TASK_DIR)")
        return load_task(Path(ref))
    tasks = {t.id: t for t in load_suite(suite_dir(suite))}
    want = ref or traj_task
    if want not in tasks:
        known = ", ".join(sorted(tasks)[:6])
        raise InputError(None, "--task", f"no task {want!r} in the suite (tasks: {known}, ...)")
    return tasks[want]


def _why(out: dict) -> str:
    """The reason line under a replay that is not ok: its message and, if a call failed,
    which one (the JSON output holds both; the one-line summary alone says nothing)."""
    call = out.get("failed_call") or {}
    where = (
        f" (step {call.get('step')} call {call.get('call')}, {call.get('kind')})" if call else ""
    )
    return f"  why: {out.get('message') or 'no message'}{where}"


def register(app: typer.Typer) -> None:
    app.command("replay", no_args_is_help=True)(replay_command)
