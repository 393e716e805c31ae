"""One run directory as the verdict, the comparison and the trajectory viewer read it.

``load(run_dir)`` finds the files with ``scan.scan`` (by format and shape, never by name) and
joins them per trajectory id: the canonical trajectory, its HERO efficiency row (taken from an
efficiency document, or computed here with ``hero.analyze`` for trajectories no document
covers, so flags exist for any imported file), its SCVD record, its HERO turn advantages, and,
for the security suite, the grades per (agent, task).

An agent is told apart by model *and* run id: ``agent_key`` names the run whenever one model
appears in more than one run, so two runs of one model are never pooled. A trajectory id met in
two files is read once (``trajectory.select.dedupe`` warns, saying whether the copies are
identical); ``load(..., agents=, tasks=)`` keeps only those agents' and tasks' trajectories.
A row's ``file`` is its trajectory file relative to the run directory.

Layer: io.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentpost.trajectory.model import Trajectory


@dataclass
class RunData:
    """What one run directory holds, joined by trajectory id."""

    name: str
    trajectories: list[Trajectory] = field(default_factory=list)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # efficiency rows + agent
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


def _rows(
    trajs: list[Trajectory], docs: list[tuple[str, Any]], every: list[Trajectory] | None = None
) -> dict[str, dict[str, Any]]:
    """Efficiency rows of ``trajs`` joined with their agent label and task; the labels are
    those of ``every`` trajectory of the directory (a filter keeps ``[run ID]`` in them)."""
    from agentpost.hero.analyze import analyze

    rows: dict[str, dict[str, Any]] = {}
    for _, doc in docs:
        for r in doc.get("trajectories") or []:
            if isinstance(r, dict) and r.get("id") is not None:
                rows.setdefault(str(r["id"]), dict(r))
    missing = [t for t in trajs if t.id not in rows]
    if missing:
        for r in analyze(missing, n_boot=0)["trajectories"]:
            rows[str(r["id"])] = r
    ids = {t.id for t in trajs}
    orphans = [r for i, r in rows.items() if i not in ids]  # efficiency rows without a file
    runs_of: dict[str | None, set] = {}
    for model, run in [(t.model or t.agent, t.run_id) for t in every or trajs] + [
        (r.get("model"), r.get("run_id")) for r in orphans
    ]:
        runs_of.setdefault(model, set()).add(run)
    for t in trajs:
        r = rows[t.id]
        r["turn_tokens"] = _turn_tokens(t)
        r["agent"] = agent_key(t.model, t.run_id, len(runs_of[t.model or t.agent]) > 1, t.agent)
        r["task_id"] = t.task_id or t.id
    for r in orphans:
        r["agent"] = agent_key(r.get("model"), r.get("run_id"), len(runs_of[r.get("model")]) > 1)
        r["task_id"] = r.get("task_id") or r["id"]
    return {**{t.id: rows[t.id] for t in trajs}, **{str(r["id"]): r for r in orphans}}


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        if line.strip():
            d = orjson.loads(line)
            if isinstance(d, dict):
                out.append(d)
    return out


def load(
    run_dir: str | Path, agents: list[str] | None = None, tasks: list[str] | None = None
) -> RunData:
    """Read ``run_dir`` (only ``agents``' and ``tasks``' trajectories when given). Raises
    ``InputError`` when it is not a directory."""
    from agentpost.report.scan import scan

    run_dir = Path(run_dir).resolve()
    return from_found(run_dir, scan(run_dir), agents, tasks)


def _selected(found: Any, agents: list[str] | None, tasks: list[str] | None) -> set[str] | None:
    """The ids of the trajectories ``agents`` and ``tasks`` pick (None: no filter)."""
    if not agents and not tasks:
        return None
    from agentpost.trajectory.select import select

    every = [t for _, ts in found.files["trajectories"] for t in ts]
    return {t.id for t in select(every, agents, tasks)}


def from_found(
    run_dir: Path, found: Any, agents: list[str] | None = None, tasks: list[str] | None = None
) -> RunData:
    """The run data of a directory already scanned (``scan.Found``)."""
    from agentpost.trajectory.select import dedupe

    data = RunData(name=run_dir.name)
    seen: set[str] = set()
    found.files["trajectories"] = dedupe(found.files["trajectories"])
    keep = _selected(found, agents, tasks)
    data.files = [rel for rel, _ in found.files["trajectories"]]
    for _, summary in found.files["run_summary"][:1]:
        args = (summary.get("producer") or {}).get("args") or {}
        suite = args.get("suite") or args.get("tasks")
        data.suite = str(suite) if isinstance(suite, str) else None
    file_of: dict[str, str] = {}
    for rel, trajs in found.files["trajectories"]:
        for t in trajs:
            if t.id not in seen and (keep is None or t.id in keep):
                seen.add(t.id)
                data.trajectories.append(t)
                file_of[t.id] = rel
    every = [t for _, ts in found.files["trajectories"] for t in ts]
    data.rows = _rows(data.trajectories, found.files["efficiency"], every)
    if keep is not None:  # efficiency rows of trajectories left out stay out
        data.rows = {i: r for i, r in data.rows.items() if i in keep}
    for i, r in data.rows.items():
        r["file"] = file_of.get(i)
    for _, recs in found.files["scvd_records"][:1]:
        for r in recs:
            if isinstance(r, dict) and r.get("case_id") is not None:
                data.records[str(r["case_id"])] = r
    for _, doc in found.files["advantages"][:1]:
        for r in doc.get("rollouts") or []:
            if r.get("id") is not None:
                data.advantages[str(r["id"])] = list(r.get("turn_advantages") or [])
    for rel, _ in found.files["security_lines"]:
        lines = _lines(run_dir / rel)
        if lines and {"func", "sec", "status"} <= set(lines[0]) and "planning" not in lines[0]:
            data.grades += [g for g in lines if g.get("agent") is not None]
            break
    by_task_agent = {(t.task_id, t.agent): t.id for t in data.trajectories}
    for g in data.grades:
        g.setdefault("trajectory", by_task_agent.get((g.get("task_id"), g.get("agent"))))
    if keep is not None:
        data.grades = [g for g in data.grades if g.get("trajectory") in keep]
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
