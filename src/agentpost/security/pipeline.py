"""Grade, annotate and attribute security trajectories (spec c: grade → annotate → attribute).

``label_record`` is the per-trajectory row that ``agentpost security attribute`` reads:
``{agent, task, func, sec, planning, coding, testing}`` plus the reward, the grade status and
the cited steps. Aborted grades, and records with a behaviour no judge decided, are kept out of
the label set (never mixed into means).

Layer: io.
"""

from __future__ import annotations

import difflib
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentpost.documents.formats import producer
from agentpost.errors import InputError
from agentpost.ingress.hostdir import read_tree
from agentpost.ingress.keys import Refused, UnsafeKey, normalise_key
from agentpost.sandbox.base import Backend
from agentpost.security.annotate import heuristic_annotate, missing_behaviours
from agentpost.security.attribution import attribute
from agentpost.security.cwe import load_names
from agentpost.security.grade import grade_candidate
from agentpost.security.metrics import per_cwe, summary
from agentpost.security.model import BEHAVIOURS, Grade, SecurityTask
from agentpost.security.patch import is_test_path
from agentpost.security.scripted import AGENTS, FINAL_BOUNDS, label, materialise, run_scripted
from agentpost.security.suite import MARKERS, load_data
from agentpost.trajectory.model import Outcome, Trajectory


def read_final_files(root: str | Path) -> dict[str, str]:
    """A final /app state saved as a host directory → {relative path: text}. Read by descent
    (``ingress.hostdir.read_tree``): a symlink, hard link, FIFO or device in it is refused,
    never followed, and the tree is bounded."""
    files = read_tree(root, bounds=FINAL_BOUNDS, hardlinks=False)
    return {k: v.decode("utf-8", errors="replace") for k, v in files.items()}


def check_final_files(traj: Trajectory, source: Path, record: int) -> None:
    """``metadata.final_files`` must map plain relative paths to text: an absolute key, a
    ``..``, a NUL or a collision (written by something other than our listing) is an
    ``InputError`` naming the file, the record and the key, before anything is written."""
    files = traj.metadata.get("final_files")
    if files is None:
        return
    where = f"record {record}: metadata.final_files"
    if not isinstance(files, dict):
        raise InputError(source, where, f"must map paths to text, got {type(files).__name__}")
    seen: set[str] = set()
    for key, text in files.items():
        try:
            norm = normalise_key(key, where=f"key {key!r}")
        except UnsafeKey as e:
            raise InputError(source, where, f"{e}: a key must be a plain relative path") from None
        if norm in seen:
            raise InputError(source, where, f"key {key!r} names a file another key names")
        seen.add(norm)
        if not isinstance(text, str):
            raise InputError(source, f"{where}[{key!r}]", "must be text")


def attach_final_files(
    trajs: list[Trajectory], tasks: dict[str, SecurityTask], source: Path, finals: Path | None
) -> list[str]:
    """Check each trajectory's task_id is in ``tasks`` and its ``metadata.final_files`` keys
    (InputError naming ``source`` and the record) and fill a missing ``metadata.final_files``
    from ``finals/<trajectory id>/`` (the id must be one plain path component; the folder is
    read by descent, see ``read_final_files``).

    Returns the ids of the trajectories still without final files."""
    for i, t in enumerate(trajs):
        if t.task_id not in tasks:
            raise InputError(
                source, f"record {i + 1}", f"task_id {t.task_id!r} is not in the suite"
            )
        check_final_files(t, source, i + 1)
        if not t.metadata.get("final_files") and finals is not None:
            _read_finals(t, finals, source, i + 1)
    return [t.id for t in trajs if not t.metadata.get("final_files")]


def _read_finals(t: Trajectory, finals: Path, source: Path, record: int) -> None:
    try:
        name = normalise_key(t.id, where=f"trajectory id {t.id!r}")
    except UnsafeKey as e:
        raise InputError(
            source, f"record {record}: id", f"{e}: it names no folder under --finals"
        ) from None
    if "/" in name or not (finals / name).is_dir():
        return
    try:
        t.metadata["final_files"] = read_final_files(finals / name)
    except Refused as e:
        raise InputError(finals / name, None, f"not a plain saved state: {e}") from None


def _starter(task: SecurityTask) -> dict[str, str]:
    return {str(p.relative_to(task.environment_dir)): p.read_text(errors="replace")
            for p in task.environment_dir.rglob("*") if p.is_file()}  # fmt: skip


def final_code(task: SecurityTask, files: dict[str, str]) -> str:
    """The lines the final diff adds to non-test files, path-headed: where the b.2 coding rule
    looks for the target control ("present in the final diff"). Control and anti-patterns are
    both read from these lines, so an anti-pattern the starter already held is not seen."""
    start, out = _starter(task), []
    for path in sorted(files):
        if is_test_path(path) or start.get(path) == files[path]:
            continue
        diff = difflib.unified_diff(start.get(path, "").splitlines(), files[path].splitlines(), n=0)
        added = [ln[1:] for ln in diff if ln.startswith("+") and not ln.startswith("+++")]
        out.append(f"# file: {path}\n" + "\n".join(added))
    return "\n".join(out)


def _func(grade: Grade) -> bool:
    """func for attribution: a task without a functional test passes it vacuously (b.1)."""
    return grade.func if grade.func is not None else grade.status == "ok"


def label_record(task: SecurityTask, traj: Trajectory, grade: Grade, ann: dict[str, Any]) -> dict:
    """One label record; a behaviour no judge decided stays None and is listed in ``missing``."""
    rec = {"agent": traj.agent or "unknown", "task": task.id, "trajectory": traj.id,
           "func": _func(grade), "sec": bool(grade.sec), "reward": grade.reward,
           "status": grade.status, "aborted": grade.aborted, "cwes": list(task.cwes)}  # fmt: skip
    for b in BEHAVIOURS:
        rec[b], rec[f"{b}_steps"] = ann.get(b), ann.get(f"{b}_steps", [])
    rec["missing"] = missing_behaviours(rec)
    return rec


def final_diff(task: SecurityTask, files: dict[str, str]) -> str:
    """A unified diff from the task's starter files to ``files`` (what a judge reads)."""
    start, chunks = _starter(task), []
    for path in sorted(set(start) | set(files)):
        a, b = start.get(path, ""), files.get(path, "")
        if a != b:
            chunks += difflib.unified_diff(
                a.splitlines(True), b.splitlines(True), f"a/{path}", f"b/{path}"
            )
    return "".join(chunks)


def grade_and_annotate(
    task: SecurityTask, traj: Trajectory, backend: Backend, markers: dict[str, Any], panel=None
) -> tuple[Grade, dict[str, Any], dict[str, Any]]:
    """Grade the trajectory's final files (``metadata.final_files``; none → no_patch, −1) and
    annotate its behaviours: the offline heuristic, or the judge panel when one is given."""
    files = traj.metadata.get("final_files") or {}
    d = materialise(files)
    try:
        grade = grade_candidate(task, candidate_dir=d, backend=backend)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if panel is None:
        ann = heuristic_annotate(traj, task.cwes, final_code(task, files), markers)
    else:
        from agentpost.security.judging import panel_annotate

        ann = panel_annotate(panel.judges, panel.arbiter, traj, task_text=task.instruction,
                             reference=task.reference(), final_diff=final_diff(task, files),
                             final_code=final_code(task, files), markers=markers)  # fmt: skip
    traj.outcome = Outcome(
        resolved=None if grade.aborted else bool(grade.func) and bool(grade.sec),
        reward=grade.reward,
        tests={"functional": _verdict(grade.func), "security": _verdict(grade.sec)},
        evaluator="agentpost.security.grade",
        details={"status": grade.status, "aborted": grade.aborted},
    )
    return grade, ann, label_record(task, traj, grade, ann)


def _verdict(value: bool | None) -> str:
    return "none" if value is None else ("pass" if value else "fail")


def annotate_trajectories(
    trajs: list[Trajectory], tasks: dict[str, SecurityTask], backend: Backend, panel=None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Label records and full annotations for ``trajs``. Records whose grade aborted or with a
    behaviour no judge decided (``missing``) are left out of the labels, so attribution never
    reads an abstention as ``none``; their annotations are still returned."""
    markers = load_data(MARKERS)
    labels, anns = [], []
    for t in trajs:
        _, ann, rec = grade_and_annotate(tasks[str(t.task_id)], t, backend, markers, panel)
        anns.append({**ann, "aborted": rec["aborted"]})
        if not rec["aborted"] and not rec["missing"]:
            labels.append(rec)
    return labels, anns


def scripted_demo(
    tasks: list[SecurityTask], backend: Backend, workers: int = 4, agents: tuple[str, ...] = AGENTS
) -> dict[str, Any]:
    """Scripted agents on every task → trajectories, grades, labels, metrics, attribution."""
    markers = load_data(MARKERS)
    names = load_names()
    jobs = [(t, a) for t in tasks for a in agents]

    def run(job):
        t, a = job
        traj = run_scripted(t, a, backend, names)
        return (traj, *grade_and_annotate(t, traj, backend, markers))

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(run, jobs))
    labels = [r[3] for r in results if not r[3]["aborted"]]
    samples = [{"task": r[3]["task"], "func": r[1].func, "sec": r[1].sec, "cwes": r[3]["cwes"],
                "aborted": r[1].aborted, "agent": r[3]["agent"],
                "sec_inconclusive": r[1].sec_inconclusive} for r in results]  # fmt: skip
    return {
        "producer": producer(scripted_demo, tasks=[t.id for t in tasks], agents=list(agents)),
        "trajectories": [r[0] for r in results],
        "grades": [{"agent": r[3]["agent"], **r[1].to_json()} for r in results],
        "annotations": [r[2] for r in results],
        "labels": labels,
        "metrics": {
            label(a): summary([s for s in samples if s["agent"] == label(a)]) for a in agents
        },  # fmt: skip
        "per_cwe": per_cwe(samples),
        "attribution": attribute(labels),
    }
