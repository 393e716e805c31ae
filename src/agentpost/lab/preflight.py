"""Pre-flight: is a lab policy in the methods' regime, before any RL? (issue #34, item 1)

HERO's efficiency credit acts only in groups that resolve more than τ = 0.6 of their rollouts
and only where successful paths differ in cost; SCVD needs wrong candidates that a check exposes
and a repair fixes. So, on held-out instances at temperature 1, with groups of ``group``
rollouts per task, this measures per task:

- ``p``: the group's success rate;
- ``cost_ratio``: C_max / C_min among the group's successful rollouts (C_i of HERO b.2; NaN with
  fewer than two successes);
- ``paths``: which scripted behaviour each rollout's commands are (``transcript.plans``), else
  ``other``;
- for each rollout whose first candidate (the first command after which the output file exists)
  is wrong: whether the task's check on that candidate state exits non-zero (``exposed``) and
  whether running the oracle there resolves the task (``repaired``).

``summarise`` gives the table's last line: ``share_in_regime`` (tasks with p in [0.4, 0.8]),
the median cost ratio, the path shares, and the exposed / repaired shares of wrong candidates;
``in_regime`` says whether all of: share > 0.5 ("most tasks": more than half), median ratio ≥ 1.5, exposed and
repaired ≥ 0.9 of wrong candidates (thresholds of the issue; the last two are ours).

Layer: edges (runs sandboxes and a torch policy).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.episodes import Episode
from agentpost.lab.plans import task_commands, task_plans
from agentpost.lab.verify_rules import replay_to_candidate
from agentpost.sandbox.base import Backend
from agentpost.tasks.model import Task

REGIME = (0.4, 0.8)
MIN_SHARE, MIN_RATIO, MIN_WRONG = 0.5, 1.5, 0.9


def path_of(task: Task, commands: list[str]) -> str:
    for name, plan in task_plans(task).items():
        if commands == plan:
            return name
    return "other"


def wrong_candidate(
    task: Task, ep: Episode, out: str, backend: Backend, memo: Memo | None
) -> dict[str, Any]:
    """{candidate, y_c, exposed, repaired} of one rollout (the last two only when y_c = 0)."""
    _, oracle, _, check = task_commands(task)
    t_c, env, _ = replay_to_candidate(task, ep.commands, out, backend, ep.exits, memo)
    if env is None:
        return {"candidate": False, "y_c": None, "exposed": None, "repaired": None}
    try:
        code, _ = env.look(check)
        y_c = env.resolved()
    finally:
        env.close()
    if y_c:
        return {"candidate": True, "y_c": 1, "exposed": None, "repaired": None}
    with LabEnv(task, backend, memo) as fix:
        for cmd in [*ep.commands[: t_c + 1], oracle]:
            fix.step(cmd)
        repaired = fix.resolved()
    return {"candidate": True, "y_c": 0, "exposed": code != 0, "repaired": bool(repaired)}


def task_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task: p, cost ratio, path counts (records: one per rollout)."""
    by: dict[str, list[dict]] = {}
    for r in records:
        by.setdefault(r["task"], []).append(r)
    rows = []
    for task, rs in sorted(by.items()):
        costs = [r["cost"] for r in rs if r["resolved"]]
        ratio = max(costs) / min(costs) if len(costs) >= 2 and min(costs) > 0 else math.nan
        rows.append({"task": task, "n": len(rs), "p": sum(r["resolved"] for r in rs) / len(rs),
                     "cost_ratio": ratio,
                     "paths": dict(Counter(r["path"] for r in rs))})  # fmt: skip
    return rows


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    rows = task_rows(records)
    lo, hi = REGIME
    ratios = [r["cost_ratio"] for r in rows if not math.isnan(r["cost_ratio"])]
    wrong = [r for r in records if r.get("y_c") == 0]
    n = len(records)
    out = {
        "tasks": len(rows),
        "rollouts": n,
        "resolved": sum(r["resolved"] for r in records) / n if n else math.nan,
        "share_in_regime": sum(lo <= r["p"] <= hi for r in rows) / len(rows) if rows else 0.0,
        "p_histogram": dict(sorted(Counter(round(r["p"], 3) for r in rows).items())),
        "median_cost_ratio": statistics.median(ratios) if ratios else math.nan,
        "tasks_with_ratio": len(ratios),
        "paths": {k: v / n for k, v in sorted(Counter(r["path"] for r in records).items())},
        "candidates": sum(bool(r.get("candidate")) for r in records) / n if n else math.nan,
        "wrong_candidates": len(wrong),
        "exposed": sum(r["exposed"] for r in wrong) / len(wrong) if wrong else math.nan,
        "repaired": sum(r["repaired"] for r in wrong) / len(wrong) if wrong else math.nan,
    }
    out["in_regime"] = bool(
        out["share_in_regime"] > MIN_SHARE
        and out["median_cost_ratio"] >= MIN_RATIO
        and out["exposed"] >= MIN_WRONG
        and out["repaired"] >= MIN_WRONG
    )
    return out


def run_preflight(
    model: Any, tok: Any, held: list[Task], outs: dict[str, str], backend: Backend, cfg: Any,
    *, group: int = 8, seed: int = 0, memo: Memo | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Groups of ``group`` at T = 1 on every held-out task: ``{"summary", "tasks", "records"}``."""
    from agentpost.lab.stages import evaluate_policy

    eps = evaluate_policy(model, tok, held, backend, cfg, agent="lab/preflight", seed=seed,
                          samples=group, memo=memo)  # fmt: skip
    by_id = {t.id: t for t in held}
    records = []
    for ep in eps:
        task = by_id[ep.task_id]
        rec = {"task": ep.task_id, "resolved": bool(ep.resolved), "cost": ep.cost_tokens,
               "turns": len(ep.commands), "path": path_of(task, ep.commands)}  # fmt: skip
        rec.update(wrong_candidate(task, ep, outs[ep.task_id], backend, memo))
        records.append(rec)
    return {"summary": summarise(records), "tasks": task_rows(records), "records": records}


def preflight_stage(out: Path, cfg: Any, backend: Backend, group: int, progress=print,
              have: tuple | None = None, draw: int | None = None) -> dict:  # fmt: skip
    """The pre-flight table of the SFT student (``lab.preflight``), written once to
    ``preflight.json``; ``have``: ``student``'s result when the caller already has it.
    ``draw``: another draw of the groups (sampling seed ``draw`` instead of ``cfg.seed``) of
    the same policy, written apart to ``preflight-s<draw>.json`` (a check of the table's
    sampling noise; the experiments read ``preflight.json`` only)."""
    from agentpost.lab.sampling import one_thread
    from agentpost.lab.stages import outputs, student

    seed = cfg.seed if draw is None else draw
    path = out / ("preflight.json" if draw is None else f"preflight-s{draw}.json")
    if not path.is_file():
        one_thread()  # as `lab hero`/`lab scvd`: 2 threads on 2 shared cores were ~25x slower
        _, held, memo, _, _, model, tok, _ = have or student(out, cfg, backend, progress)
        t0 = time.monotonic()
        pf = run_preflight(model, tok, held, outputs(out), backend, cfg, group=group,
                           seed=seed, memo=memo)  # fmt: skip
        pf = {"format": fmt("agentpost.lab-preflight"),
              "producer": producer(run_preflight, group=group, seed=seed),
              **pf, "wall_s": round(time.monotonic() - t0, 1)}  # fmt: skip
        write_json(path, pf, default=str)
    return json.loads(path.read_text())
