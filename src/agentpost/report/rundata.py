"""One run directory as the verdict, the comparison and the trajectory viewer read it.

``load(run_dir)`` finds the files with ``scan.scan`` (by format and shape, never by name) and
joins them per trajectory id: the trajectory's HERO efficiency row (taken from an efficiency
document, or computed here with ``hero.analyze.Analysis.row`` for trajectories no document
covers, so flags exist for any imported file), its SCVD record, its HERO turn advantages, and,
for the security suite, the grades per (agent, task). The trajectories stream past once (a run
of 100,000 is never held): what stays is their rows, the per-trajectory summaries.

An agent is told apart by model *and* run id: ``agent_key`` names the run whenever one model
appears in more than one run, so two runs of one model are never pooled. A trajectory id met in
two files is read once (``trajectory.select.dedupe`` warns, saying whether the copies are
identical); ``load(..., agents=, tasks=)`` keeps only those agents' and tasks' trajectories.
A row's ``file`` is its trajectory file relative to the run directory. Every file is read as
the scan found it (``scan.Found``: by descent from the folder's fd, never reopened by path).

Layer: io.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentpost.trajectory.model import Trajectory


@dataclass
class RunData:
    """What one run directory holds, joined by trajectory id."""

    name: str
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # efficiency rows + agent
    labels: dict[str, str] = field(default_factory=dict)  # every trajectory's agent label
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # SCVD record lines
    advantages: dict[str, list[float]] = field(default_factory=dict)
    grades: list[dict[str, Any]] = field(default_factory=list)  # security grades
    files: list[str] = field(default_factory=list)  # trajectory files, relative to the run dir
    suite: str | None = None  # the task suite the run used, when its run.json says


def agent_key(
    model: str | None, run_id: str | None, multi_run: bool, scaffold: str | None = None
) -> str:
    """The label an agent goes by (``trajectory.select.agent_label``): its model (else its
    scaffold, else NA), plus its run id when the model ran more than once."""
    from agentpost.trajectory.select import agent_label

    return agent_label(model, scaffold, run_id, multi_run)


def _turn_tokens(t: Trajectory) -> list[int | None]:
    out = []
    for turn in t.turns:
        u = turn.usage
        known = u is not None and u.input_tokens is not None and u.output_tokens is not None
        out.append(u.input_tokens + u.output_tokens if known else None)  # type: ignore[union-attr]
    return out


def _lines(path: Any) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file the scan found (a ``HeldFile``: read by descent)."""
    from agentpost.trajectory.io import read_regular

    out = []
    for line in read_regular(path).splitlines():
        if line.strip():
            d = orjson.loads(line)
            if isinstance(d, dict):
                out.append(d)
    return out


def load(
    run_dir: str | Path, agents: list[str] | None = None, tasks: list[str] | None = None,
    *, progress: Any = None,
) -> RunData:  # fmt: skip
    """Read ``run_dir`` (only ``agents``' and ``tasks``' trajectories when given). Raises
    ``InputError`` when it is not a directory."""
    from agentpost.report.scan import scan

    run_dir = Path(run_dir).resolve()
    return from_found(run_dir, scan(run_dir), agents, tasks, progress=progress)


def _side_files(data: RunData, run_dir: Path, found: Any) -> None:
    """The suite, SCVD records, HERO advantages and security grades (read before the
    trajectories stream past, which are joined to them)."""
    for _, summary in found.files["run_summary"][:1]:
        args = (summary.get("producer") or {}).get("args") or {}
        suite = args.get("suite") or args.get("tasks")
        data.suite = str(suite) if isinstance(suite, str) else None
    for _, recs in found.files["scvd_records"][:1]:
        for r in recs:
            if isinstance(r, dict) and r.get("case_id") is not None:
                data.records[str(r["case_id"])] = r
    for _, doc in found.files["advantages"][:1]:
        for r in doc.get("rollouts") or []:
            if r.get("id") is not None:
                data.advantages[str(r["id"])] = list(r.get("turn_advantages") or [])
    for _, src in found.files["security_lines"]:
        lines = _lines(src)
        if lines and {"func", "sec", "status"} <= set(lines[0]) and "planning" not in lines[0]:
            data.grades += [g for g in lines if g.get("agent") is not None]
            break


def _doc_rows(docs: list[tuple[str, Any]]) -> dict[str, dict[str, Any]]:
    """Efficiency rows by trajectory id (the first document that has one wins)."""
    rows: dict[str, dict[str, Any]] = {}
    for _, doc in docs:
        for r in doc.get("trajectories") or []:
            if isinstance(r, dict) and r.get("id") is not None:
                rows.setdefault(str(r["id"]), r)
    return rows


def from_found(
    run_dir: Path, found: Any, agents: list[str] | None = None, tasks: list[str] | None = None,
    *, on_trajectory: Callable[[str, Trajectory, dict[str, Any], RunData], None] | None = None,
    progress: Any = None,
) -> RunData:  # fmt: skip
    """The run data of a directory already scanned (``scan.Found``), its trajectory files read
    once, one trajectory at a time (``trajectory.select.Stream``: each id once, only ``agents``'
    and ``tasks``' when given); only their rows stay. ``on_trajectory(file, trajectory, row,
    data)`` sees each trajectory as it passes (the report writes its viewer entry then; the row's
    ``agent`` label is set at the end). ``progress``: see ``commands._progress``."""
    from agentpost.hero.analyze import Analysis
    from agentpost.trajectory.inputs import Stream, stream_label

    data = RunData(name=run_dir.name)
    data.files = [rel for rel, _ in found.files["trajectories"]]
    _side_files(data, run_dir, found)
    from_docs = _doc_rows(found.files["efficiency"])
    analysis = Analysis(n_boot=0)
    stream = Stream(list(found.files["trajectories"]), agents, tasks, progress)
    who: dict[str, tuple[str | None, str | None, str | None]] = {}  # id → model, scaffold, run
    by_task_agent: dict[tuple[str | None, str | None], str] = {}
    for rel, t in stream:
        doc_row = from_docs.pop(t.id, None)
        row = dict(doc_row) if doc_row is not None else analysis.row(t)
        row["turn_tokens"] = _turn_tokens(t)
        row["task_id"] = t.task_id or t.id
        row["file"] = rel
        data.rows[t.id] = row
        who[t.id] = (t.model, t.agent, t.run_id)
        by_task_agent[(t.task_id, t.agent)] = t.id
        if on_trajectory is not None:
            on_trajectory(rel, t, row, data)
    stream.finish()
    if progress is not None and hasattr(progress, "stage"):
        progress.stage("joining")
    selected = bool(agents or tasks)
    # efficiency rows without a trajectory file (a saved efficiency document alone)
    orphans = [] if selected else [r for i, r in from_docs.items() if i not in data.rows]
    for r in orphans:
        stream.runs.setdefault(r.get("model"), set()).add(r.get("run_id"))
    for i, row in data.rows.items():
        data.labels[i] = row["agent"] = stream_label(stream, *who[i])
    for r in orphans:
        r = dict(r)
        r["agent"] = stream_label(stream, r.get("model"), None, r.get("run_id"))
        r["task_id"] = r.get("task_id") or r["id"]
        r["file"] = None
        data.rows[str(r["id"])] = r
    for g in data.grades:
        g.setdefault("trajectory", by_task_agent.get((g.get("task_id"), g.get("agent"))))
    if selected:
        data.grades = [g for g in data.grades if g.get("trajectory") in data.labels]
    # a graded security trajectory is judged by FuncPass/SecPass, not by a resolution it never
    # had: it stays in the viewer but leaves the terminal rows (else "resolves 0%")
    graded = {g["trajectory"] for g in data.grades if g.get("trajectory")}
    data.rows = {i: r for i, r in data.rows.items() if i not in graded}
    return data


def agents(data: RunData) -> list[str]:
    """Every agent of the run: terminal agents (by trajectory rows), then security agents."""
    names = list(dict.fromkeys(str(r["agent"]) for r in data.rows.values()))
    return names + [
        a for a in dict.fromkeys(str(g["agent"]) for g in data.grades) if a not in names
    ]


def side(data: RunData, agent: str) -> dict[str, Any]:
    """One agent's rows, SCVD records and security grades, labelled by agent and run."""
    rows = [r for r in data.rows.values() if r["agent"] == agent]
    ids = {str(r["id"]) for r in rows}
    records = [rec for i, rec in data.records.items() if i in ids]
    grades = [g for g in data.grades if g.get("agent") == agent]
    return {"label": f"{agent} ({data.name})", "rows": rows, "records": records, "grades": grades}


def pairs(
    a: RunData, b: RunData, agent_a: str | None = None, agent_b: str | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The sides to compare. Named agents win; else, when each run holds one agent, those two;
    else every agent name the two runs share (each run's own rows: never pooled across runs)."""
    from agentpost.errors import InputError

    names_a, names_b = agents(a), agents(b)
    for name, names, flag in ((agent_a, names_a, "--agent-a"), (agent_b, names_b, "--agent-b")):
        if name is not None and name not in names:
            raise InputError(
                None, flag, f"no agent {name!r} (agents: {', '.join(names) or 'none'})"
            )
    if agent_a or agent_b:
        pa = agent_a or (names_a[0] if len(names_a) == 1 else agent_b)
        pb = agent_b or (names_b[0] if len(names_b) == 1 else agent_a)
        if pa not in names_a or pb not in names_b:
            raise InputError(None, "--agent-a/--agent-b", "name the agent of each side")
        return [(side(a, pa), side(b, pb))]
    if len(names_a) == 1 and len(names_b) == 1:
        return [(side(a, names_a[0]), side(b, names_b[0]))]
    shared = [n for n in names_a if n in names_b]
    if not shared:
        raise InputError(
            None, "--agent-a/--agent-b",
            f"the runs share no agent name; pick one from each ({', '.join(names_a)} | "
            f"{', '.join(names_b)})",
        )  # fmt: skip
    return [(side(a, n), side(b, n)) for n in shared]


def _rank(items: list[dict[str, Any]], kind: str) -> tuple:
    """Sort key of an agent, best first: resolution rate then fewest mean tokens (terminal),
    SecPass then FuncPass (security)."""

    def mean(key: str) -> float:
        xs = [float(i[key]) for i in items if i.get(key) is not None]
        return sum(xs) / len(xs) if xs else 0.0

    if kind == "rows":
        known = any(i.get("tokens") is not None for i in items)
        return (-mean("resolved"), mean("tokens") if known else float("inf"))
    return (-mean("sec"), -mean("func"))


def within_run_pairs(data: RunData, limit: int = 6) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs for a report of one run directory holding several agents: the best agent (A, see
    ``_rank``) against each other agent of the same kind (terminal rows, security grades) that
    shares at least two tasks with it; agents left over (other tasks) get their own best."""
    out = []
    for kind, items in (("rows", list(data.rows.values())), ("grades", data.grades)):
        by: dict[str, list[dict[str, Any]]] = {}
        for it in items:
            by.setdefault(str(it["agent"]), []).append(it)
        if len(by) < 2:
            continue
        tasks = {a: {str(i.get("task_id")) for i in its} for a, its in by.items()}
        left = sorted(by, key=lambda a: (*_rank(by[a], kind), a))
        while left:
            ref, left = left[0], left[1:]
            mates = [o for o in left if len(tasks[ref] & tasks[o]) >= 2]
            left = [o for o in left if o not in mates]
            out += [(side(data, ref), side(data, o)) for o in sorted(mates)]
    return out[:limit]
