"""The demo's terminal-suite stages: the reference policies' rollouts (``agentpost run
--policy all``), their import (``agentpost import``) and the efficiency analyses.

Each calls what the command calls: ``agent.policies.policy_agents`` and ``agent.run.run_groups``
/ ``write_summary``; ``trajectory.import_summary.import_to_file`` and ``write_import_summary``;
``hero.analyze.analyze``.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentpost.demo.files import digest, write_json
from agentpost.demo.model import Demo, PartialStage
from agentpost.errors import InputError

CONCURRENCY = 2


def _reporter(d: Demo, total: int):
    """A ``run_groups`` callback printing one line per finished rollout."""
    done = [0]

    def on_done(r: Any, traj: Any) -> None:
        done[0] += 1
        if traj is None:
            status = "failed (infra)"
        else:
            status = "resolved" if traj.outcome.resolved else "not resolved"
        d.progress(f"run {done[0]}/{total}: {r.id} {status}")

    return on_done


def stage_run(d: Demo) -> Path:
    """Reference policies over the bundled terminal suite; returns the trajectories file."""
    from agentpost.agent.loop import LoopConfig
    from agentpost.agent.policies import policy_agents
    from agentpost.agent.run import TRAJECTORIES, Rollout, finished_ids, run_groups, write_summary
    from agentpost.tasks.loader import bundled_suite_path, load_suite

    tasks = load_suite(bundled_suite_path("terminal"))[: d.limit]
    agents = policy_agents(None)
    run_dir = d.out / "run"
    finished = finished_ids(run_dir / TRAJECTORIES)
    todo = [Rollout(t, a, i).id for t in tasks for a in agents for i in range(d.attempts)]
    before = sum(r in finished for r in todo)
    d.progress(
        f"run: {len(agents)} policies x {len(tasks)} tasks x {d.attempts} attempt(s) in "
        f"{d.backend} sandboxes ({before} already finished)"
    )
    res = run_groups(
        tasks, agents, attempts=d.attempts, out_dir=run_dir, backend=d.box, loop=LoopConfig(),
        concurrency=CONCURRENCY, run_id="demo", on_done=_reporter(d, len(todo) - before),
    )  # fmt: skip
    args = {"policies": [a.label.removeprefix("scripted/") for a in agents], "tasks": "terminal",
            "attempts": d.attempts, "limit": d.limit, "concurrency": CONCURRENCY,
            "backend": d.backend}  # fmt: skip
    write_summary(run_dir, args, res, {})
    if res.errors:  # recorded in run.json; a rerun retries them
        raise PartialStage(
            f"{len(res.errors)} rollouts failed: {res.errors[0]['error']}", run_dir / TRAJECTORIES
        )
    return run_dir / TRAJECTORIES


def stage_import(d: Demo, run_trajs: Path) -> Path:
    """Import the rollouts like any scaffold's logs; returns the canonical file later stages
    read. ``import.json`` is the document ``agentpost import --summary`` writes."""
    from agentpost.trajectory.import_summary import import_to_file, write_import_summary

    dest = d.out / "trajectories.jsonl"
    summary = import_to_file([run_trajs], dest)
    if summary.errors:
        raise InputError(run_trajs, None, f"import failed: {summary.errors[0]}")
    args = {"paths": [str(run_trajs.relative_to(d.out))], "format": "auto"}
    doc = write_import_summary(d.out / "import.json", summary, args)
    d.progress(
        f"import: {doc['trajectories']} trajectories, detected as {doc['detected_format']!r}"
    )
    return dest


def stage_efficiency(d: Demo, trajs_path: Path) -> dict:
    """HERO's efficiency analyses of the imported trajectories (recomputed when they change)."""
    from agentpost.hero.analyze import analyze
    from agentpost.trajectory.io import read_jsonl

    dest = d.out / "efficiency.json"
    key = digest(trajs_path)
    if dest.exists() and d.state.get("efficiency") == key:
        d.progress("efficiency: up to date")
        return orjson.loads(dest.read_bytes())
    doc = analyze(read_jsonl(trajs_path), inputs=[str(trajs_path.relative_to(d.out))])
    write_json(dest, doc)
    d.state["efficiency"] = key
    d.progress(f"efficiency: {len(doc['trajectories'])} trajectories, {len(doc['models'])} models")
    return doc
