"""`agentpost replay TRAJ.jsonl --suite SUITE [--task ID]`: rebuild a trajectory's state in a fresh
sandbox (through call STEP:CALL with ``--upto``) and grade it with the task's evaluator.

`agentpost replay TRAJS.jsonl --suite SUITE --fidelity [--official REPORTS] [-o DIR]`: replay every
trajectory of the file into its own task and report, per trajectory, matching exit codes, output
similarity, final diff vs the recorded submission and grade vs the official one
(``replay.fidelity_report``); ``DIR/fidelity.json`` plus a table, resumable (``DIR/store.sqlite``).

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
    trajs = _all(path, traj_id, fmt)
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
    fidelity: bool = typer.Option(
        False, "--fidelity", help="Replay every trajectory of the file; write a fidelity report."
    ),
    official: Path | None = typer.Option(
        None, "--official", help="With --fidelity: SWE-bench report.json (a file or a folder)."
    ),
    out: Path = typer.Option(
        Path("replay-fidelity"), "--out", "-o", help="With --fidelity: the output folder."
    ),
) -> None:
    """Replay a trajectory's actions in a fresh sandbox and run the task's evaluator.

    Prints {status, reward, resolved, calls_replayed, fidelity}; exits 1 unless status is ok.

    --fidelity: every trajectory; exit codes, similarity, final diff and grade vs the record.
    """
    from agentpost.replay.run import parse_upto, replay

    _check_timeout(call_timeout)
    if fidelity:
        if task_ref is not None or upto is not None:
            raise InputError(None, "--fidelity", "replays each trajectory whole into its own task: "
                             "drop --task and --upto")  # fmt: skip
        if suite is None:
            raise InputError(
                None, "--suite", "--fidelity needs the suite of the trajectories' tasks"
            )
        _fidelity(trajectories, suite, traj_id, fmt, official, out, backend, call_timeout, as_json)
        return
    if official is not None:
        raise InputError(None, "--official", "only with --fidelity")
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
    out_doc = result.to_json()
    out_doc["producer"] = producer(replay, trajectory=traj.id, task=task.id, upto=upto,
                                   backend=backend)  # fmt: skip
    if as_json:
        typer.echo(json.dumps(out_doc))
    else:
        fid = out_doc["fidelity"] or {}
        typer.echo(
            f"{out_doc['status']}: reward={out_doc['reward']} resolved={out_doc['resolved']} "
            f"calls_replayed={out_doc['calls_replayed']} exit_match={fid.get('exit_code_match')} "
            f"similarity={fid.get('text_similarity')}"
        )
        if result.status != "ok":
            typer.echo(_why(out_doc))
    if result.status != "ok":
        raise typer.Exit(1)


def _check_timeout(call_timeout: float) -> None:
    if call_timeout <= 0:  # every call would time out at once and the replay still say "ok"
        raise InputError(None, "--call-timeout", f"must be positive, got {call_timeout}")
    if not call_timeout <= 7 * 24 * 3600:  # nan, inf, 1e308
        raise InputError(
            None, "--call-timeout", f"{call_timeout!r} is not a number of seconds up to a week"
        )


def _fidelity(path, suite, traj_id, fmt, official, out, backend, call_timeout, as_json) -> None:
    """``replay --fidelity``: every trajectory of ``path`` into its task, the report written."""
    from agentpost.commands._options import suite_dir
    from agentpost.documents.write import write_json
    from agentpost.replay import fidelity_report
    from agentpost.replay.fidelity_run import run
    from agentpost.store import Store
    from agentpost.tasks.loader import load_suite

    trajs = _all(path, traj_id, fmt)
    grades = {}
    if official is not None:
        from agentpost.tasks.swebench.reports import official_grades

        grades = official_grades(official)
    tasks = {t.id: t for t in load_suite(suite_dir(suite))}
    chosen = sandbox_backend(backend)
    store = Store(out / "store.sqlite")
    try:
        rows = run(trajs, tasks, chosen, store, official=grades, call_timeout_s=call_timeout,
                   log=lambda m: typer.echo(m, err=True))  # fmt: skip
    finally:
        store.close()
    args = {
        "trajectories": str(path),
        "suite": suite,
        "backend": backend,
        "official": str(official) if official else None,
        "call_timeout_s": call_timeout,
    }
    doc = fidelity_report.document(rows, producer(run, **args))  # fmt: skip
    write_json(out / "fidelity.json", doc)
    if as_json:
        typer.echo(json.dumps(doc))
    else:
        typer.echo(fidelity_report.table(rows))
        typer.echo(f"wrote {out / 'fidelity.json'}")


def _all(path: Path, traj_id: str | None, fmt: str | None) -> list:
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
    if not trajs:
        raise InputError(path, None, "no trajectory in this file")
    return trajs


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
