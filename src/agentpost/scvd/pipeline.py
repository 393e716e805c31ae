"""`agentpost diagnose`: annotate (three judges), vote, replay the candidate, compute the metrics.

Every judge answer and every replay goes through the result store (``RUN_DIR/store.sqlite``)
keyed by its inputs: a judge result by (judge id, judge fingerprint, prompt version, truncation
policy, re-ask limit, trajectory hash); a replay by (trajectory hash, task hash, boundary). Kill
the run at any point and rerun it: finished judge calls and replays are read back, only the
in-flight ones are redone, and the outputs are the same. Endpoint failures and spent budgets are
not cached (the rerun asks again); abstentions after the re-asks are (they are the judge's
answer).

``metrics.json`` gives judge usage summed over every answer behind the decisions, including
answers an earlier, interrupted invocation paid for (``judges.usage``), and this invocation's
own ledger (``judges.usage_this_invocation``).

Replays run for I_c = I_v = 1 (spec b.5) through and including the boundary call, each in a
fresh sandbox, with ``replay.run``. A replay whose status is not ``ok`` gives y_c =
null (excluded from replay-based metrics, counted in the coverage table). y_f is the
trajectory's recorded outcome (``outcome.resolved``). Trajectories are grouped by
``model`` (else ``agent``) and ``run_id`` for the per-run → per-model → macro aggregation.

Layer: io.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentpost.config_checks import at_least, check, one_of
from agentpost.documents.formats import producer
from agentpost.intervals import RESAMPLES
from agentpost.judges.ask import MAX_REASKS
from agentpost.judges.config import HEURISTIC_CAVEAT, Panel
from agentpost.replay import snapshots
from agentpost.replay.state import Specs, rebuild
from agentpost.scvd import metrics as M
from agentpost.scvd import seats, statediff
from agentpost.scvd.judging import HeuristicJudge, annotate_one, scvd_judges, seat_kind
from agentpost.scvd.panel import agreement_stats, vote
from agentpost.scvd.protocol import PROMPT_VERSION, Truncation
from agentpost.scvd.records import (
    METRICS_FORMAT,
    RECORD_FORMAT,
    JudgeResult,
    MetricRecord,
    PanelDecision,
)
from agentpost.store import Store, key
from agentpost.tasks.model import Task
from agentpost.trajectory.io import dumps
from agentpost.trajectory.model import Trajectory

CACHED_JUDGE = ("valid", "abstained")
CACHED_REPLAY = (
    "ok",
    "unfaithful",
    "replay_failed",
    "evaluator_invalid",
    "timeout",
    "state_conflict",
)


@dataclass
class DiagnoseOptions:
    ica_population: str = "valid_yc"
    n_boot: int = RESAMPLES
    seed: int = 0
    replay_concurrency: int = 2
    backend: str = "bwrap"
    truncation: Truncation = field(default_factory=Truncation)
    max_reasks: int = MAX_REASKS
    progress: bool = True
    # trajectory id -> the run dir its snapshot references resolve against (the folder of its
    # trajectories file); a trajectory not listed finds only absolute (old) references
    snapshot_roots: dict[str, str] = field(default_factory=dict)
    snapshot_fidelity: bool = True  # also replay snapshot cases and report the agreement

    def __post_init__(self) -> None:
        """A bad ``ica_population`` fails here, before any judge call or replay has run."""
        check(self, {
            "ica_population": (self.ica_population in M.POPULATIONS, one_of(M.POPULATIONS)),
            "n_boot": (at_least(self.n_boot, 0), "at least 0"),
            "replay_concurrency": (at_least(self.replay_concurrency, 1), "at least 1"),
            "max_reasks": (at_least(self.max_reasks, 0), "at least 0"),
        })  # fmt: skip


def traj_hash(traj: Trajectory) -> str:
    return hashlib.sha256(dumps(traj)).hexdigest()


def task_hash(task: Task) -> str:
    """sha256 over the task directory's files (relative path and content, sorted; a link by
    its target, never followed), read by descent and bounded (``tasks.fields.tree_digest``)."""
    from agentpost.tasks.fields import tree_digest

    return tree_digest(Path(task.path), Path(task.path))


class _Progress:
    """rich progress on stderr (or nothing)."""

    def __init__(self, enabled: bool):
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=False)

    def __enter__(self):
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.__exit__(*exc)

    def task(self, name: str, total: int):
        return self.bar.add_task(name, total=total) if self.bar else None

    def advance(self, tid) -> None:
        if self.bar is not None:
            self.bar.advance(tid)
            if not self.bar.console.is_terminal:  # a log gets lines, about one per 10%
                t = next(x for x in self.bar.tasks if x.id == tid)
                step = max(1, int((t.total or 1) // 10))
                if int(t.completed) % step == 0 or t.completed == t.total:
                    self.bar.console.print(
                        f"{t.description}: {int(t.completed)}/{int(t.total or 0)}"
                    )


def annotate_all(trajs, panel: Panel, store: Store, opts: DiagnoseOptions, prog,
                 diffs: dict | None = None) -> dict:  # fmt: skip
    """(case index, judge index) → JudgeResult, through the store. ``diffs``: trajectory id →
    its snapshot diffs, given to the rule seats (evidence ``state-diff``)."""
    hashes = [traj_hash(t) for t in trajs]
    jobs = [(i, j) for i in range(len(trajs)) for j in range(len(panel.judges))]
    tid = prog.task("annotate", len(jobs))
    judges = scvd_judges(
        panel.judges
    )  # heuristic seats: SCVD's rule seats (keys see their version)
    for judge in judges:
        if isinstance(judge, HeuristicJudge):
            judge.diffs = diffs or {}

    def one(job):
        i, j = job
        judge = judges[j]
        k = key("scvd-judge", {"judge": judge.id, "fingerprint": judge.fingerprint,
                               "prompt": PROMPT_VERSION, "truncation": asdict(opts.truncation),
                               "max_reasks": opts.max_reasks, "trajectory": hashes[i]})  # fmt: skip
        found = store.get(k)
        if found is not None:
            res = JudgeResult.from_json(found)
        else:
            res = annotate_one(judge, trajs[i], trajs[i].id, opts.truncation, opts.max_reasks)
            if res.status in CACHED_JUDGE:
                store.put(k, res.to_json())
        prog.advance(tid)
        return job, res

    with ThreadPoolExecutor(max_workers=max(1, panel.concurrency)) as pool:
        return dict(pool.map(one, jobs))


def replay_all(
    trajs, decisions, tasks: dict[str, Task], store: Store, opts, prog, hashes=None
) -> dict:
    """case index → replay result dict (or a status-only dict when no replay could run).

    Worker threads share the GIL, so Python work per replay is kept small (a replay's own
    CPU is a few percent of its wall time; the rest is waiting on the sandbox): the trajectory
    hash comes in ``hashes`` when the caller has it, the task folder is hashed once per task."""
    todo = [i for i, d in enumerate(decisions) if d.candidate_formed and d.verification_triggered]
    tid = prog.task("replay", len(todo))
    thashes: dict[str, str] = {}
    from agentpost.sandbox.registry import get_backend

    # one backend for all replays: it prunes dead runs' sandboxes once, not once per thread;
    # each task's sandbox spec once per run (on docker: its image built or found once)
    backend = get_backend(opts.backend) if todo else None
    specs = Specs(backend)

    def one(i):
        traj, d = trajs[i], decisions[i]
        task = tasks.get(traj.task_id or "")
        if task is None:
            prog.advance(tid)
            return i, {
                "status": "task_missing",
                "message": f"no task {traj.task_id!r} in the suite",
            }
        th = thashes.get(task.id)
        if th is None:  # not setdefault(id, task_hash(...)): that hashes the folder every call
            th = thashes[task.id] = task_hash(task)
        upto = (d.candidate_step, d.candidate_tool_call_index)
        ref = snapshots.ref_at(traj, upto)
        h = hashes[i] if hashes else traj_hash(traj)
        inputs = {"trajectory": h, "task": th, "boundary": list(upto),
                  "backend": opts.backend}  # fmt: skip
        if ref is not None:  # a case with a recorded snapshot: its result depends on the archive
            root = opts.snapshot_roots.get(traj.id)
            inputs.update(snapshot=ref, snapshot_root=root,
                          fidelity=opts.snapshot_fidelity)  # fmt: skip
        k = key("scvd-replay", inputs)
        found = store.get(k)
        if found is None:
            found = rebuild(traj, task, upto, backend=backend, spec=specs(task),
                            snapshot_root=opts.snapshot_roots.get(traj.id),
                            check_fidelity=opts.snapshot_fidelity).to_json()  # fmt: skip
            if found["status"] in CACHED_REPLAY:
                store.put(k, found)
        prog.advance(tid)
        return i, found

    with ThreadPoolExecutor(max_workers=max(1, opts.replay_concurrency)) as pool:
        return dict(pool.map(one, todo))


def _y_c_source(rep: dict | None) -> str | None:
    """Which state gave y_c: the recorded ``snapshot`` or a ``replay`` (None: no y_c)."""
    if rep is None or rep.get("status") != "ok":
        return None
    return rep.get("source", "replay")


def usage_all(per_case: list[list[JudgeResult]], ids: list[str]) -> dict[str, Any]:
    """Judge usage summed over every answer behind this run's decisions, whichever invocation
    produced it (answers read back from the store carry the usage of the call that made them),
    per judge and in total. ``cost_usd`` is None when any answer's cost is unknown."""
    keys = ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")
    per: dict[str, dict[str, Any]] = {j: {k: 0 for k in keys} | {"cost_usd": 0.0, "answers": 0}
                                      for j in [*ids, "total"]}  # fmt: skip
    for results in per_case:
        for jid, r in zip(ids, results, strict=True):
            if not r.usage:
                continue
            for target in (per[jid], per["total"]):
                target["answers"] += 1
                for k in keys:
                    target[k] += r.usage.get(k) or 0
                cost = r.usage.get("cost_usd")
                target["cost_usd"] = (
                    None
                    if cost is None or target["cost_usd"] is None
                    else target["cost_usd"] + cost
                )
    return per


def _y(value) -> int | None:
    return None if value is None else int(bool(value))


def metric_record(traj: Trajectory, d: PanelDecision, rep: dict | None) -> MetricRecord:
    y_c = None
    if rep is not None and rep.get("status") == "ok":
        y_c = _y(rep.get("resolved"))
    return MetricRecord(
        model=traj.model or traj.agent or "unknown", run=traj.run_id or "run",
        task=traj.task_id or "", I_c=d.candidate_formed,
        I_v=d.verification_triggered if d.candidate_formed is not None else None,
        z=d.z, y_c=y_c, y_f=_y(traj.outcome.resolved),
    )  # fmt: skip


def diagnose(
    trajs: list[Trajectory],
    tasks: list[Task],
    panel: Panel,
    run_dir: str | Path,
    opts: DiagnoseOptions | None = None,
    producer_args: dict[str, Any] | None = None,
) -> dict:
    """Run the whole diagnosis; writes ``metrics.json``, ``records.jsonl``, ``summary.md`` and
    ``judge_answers.jsonl`` under ``run_dir``; returns the metrics document."""
    from agentpost.scvd import diagnose_out

    opts = opts or DiagnoseOptions()
    run_dir = Path(run_dir)
    store = Store(run_dir / "store.sqlite")
    by_id = {t.id: t for t in tasks}
    hashes = [traj_hash(t) for t in trajs]  # once for the replays' keys and the records
    try:
        with _Progress(opts.progress) as prog:
            diffs = {t.id: statediff.state_diffs(t, opts.snapshot_roots.get(t.id)) for t in trajs
                     if any(tu.extra.get("snapshots") for tu in t.turns)}  # fmt: skip
            results = annotate_all(trajs, panel, store, opts, prog, diffs)
            per_case = [
                [results[(i, j)] for j in range(len(panel.judges))] for i in range(len(trajs))
            ]
            decisions = [
                vote([r.annotation for r in rs], panel.arbiter, panel.ids) for rs in per_case
            ]
            replays = replay_all(trajs, decisions, by_id, store, opts, prog, hashes)
    finally:
        store.close()
    records = [
        metric_record(t, d, replays.get(i))
        for i, (t, d) in enumerate(zip(trajs, decisions, strict=True))
    ]
    doc = {
        "format": METRICS_FORMAT,
        "producer": {
            **producer(diagnose, **(producer_args or {})),
            **({"caveat": HEURISTIC_CAVEAT} if panel.heuristic_only else {}),
        },
        "judges": {
            "ids": panel.ids,
            "kinds": {j.id: seat_kind(j) for j in panel.judges},
            "arbiter": panel.ids[panel.arbiter],
            "prompt_version": PROMPT_VERSION,
            "truncation": asdict(opts.truncation),
            "status": {
                jid: dict(Counter(r[j].status for r in per_case)) for j, jid in enumerate(panel.ids)
            },
            "usage": usage_all(per_case, panel.ids),
            "usage_this_invocation": panel.ledger.summary(),
        },  # fmt: skip
        "panel": agreement_stats(decisions, len(panel.judges)),
        "replay": {
            "status": dict(Counter(r.get("status") for r in replays.values())),
            "source": dict(
                Counter(
                    r.get("source", "replay")
                    for r in replays.values()
                    if r.get("status") != "task_missing"
                )
            ),
            "snapshot_fidelity": snapshots.fidelity_summary(list(replays.values())),
            "snapshot_untrusted": sum(bool(r.get("snapshot_untrusted")) for r in replays.values()),
            "missing_tasks": sorted(
                {
                    trajs[i].task_id or "(no task id)"
                    for i, r in replays.items()
                    if r["status"] == "task_missing"
                }
            ),
        },
        "metrics": M.compute(
            records, ica_population=opts.ica_population, n_boot=opts.n_boot, seed=opts.seed
        ),
    }
    kinds = {j.id: seat_kind(j) for j in panel.judges}
    lines = [
        {"format": RECORD_FORMAT, "case_id": t.id, "trajectory_hash": hashes[i],
         "judges": [r.to_json() for r in per_case[i]], "decision": decisions[i].to_json(),
         "replay": replays.get(i), "y_c_source": _y_c_source(replays.get(i)),
         "boundary_evidence": seats.boundary_evidence(
             t, decisions[i].candidate_step, decisions[i].candidate_tool_call_index, diffs.get(t.id)),
         "judge_kinds": kinds, "record": records[i].to_json()}
        for i, t in enumerate(trajs)
    ]  # fmt: skip
    diagnose_out.write_outputs(run_dir, doc, lines)
    return doc
