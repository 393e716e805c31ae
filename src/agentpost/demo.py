"""`agentpost demo`: every stage, offline, on the bundled suites, ending in one HTML report.

Stages (each writes machine-readable JSON into the output directory, then the report is built):

1. ``run/``: the scripted reference policies (careful, hasty, wasteful, wrong-then-repaired) over
   the bundled terminal suite in bubblewrap sandboxes, graded by each task's evaluator
   (``agent.run.run_groups``; resumable: finished rollouts are skipped).
2. ``trajectories.jsonl`` + ``import.json``: the rollouts go through ``agentpost import`` (format
   auto-detection and validation, as a user's own logs would), and every later stage reads the
   imported file.
   ``efficiency.json``: HERO analyses over those trajectories (``efficiency.analyze``).
3. ``hero_groups.json`` + ``hero_advantages.json``: a preview of HERO advantages, one group per task.
4. ``diagnose/``: SCVD diagnosis with the offline judge panel and candidate-state replay.
5. ``loopback/``: the real agent loop against a loopback fake model that serves scripted replies
   with synthetic top-10 logprobs, so the report shows what the entropy analyses look like
   (``demo_loopback``; labelled a fake model wherever it appears).
6. ``security/``: the scripted security agents over the bundled security suite, graded, with
   behaviour attribution.
7. ``report.html``.

Library calls, not subprocesses, to stay fast. A stage whose library is missing or fails is
recorded in ``demo.json`` with the reason and the report says 'not run'; the demo still finishes.
Cheap stages are recomputed only when their input file changed (content hash in ``demo.json``).

Layer: io.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from agentpost import __version__, demo_stages
from agentpost.demo_loopback import loopback
from agentpost.demo_stages import write_json
from agentpost.errors import InputError

Progress = Callable[[str], None]
POLICY_ORDER = ("careful", "hasty", "wasteful", "wrong-then-repaired")


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:16]


def _policy(name: str, task: Any) -> Any:
    from agentpost.agent.policies import policy_model

    return policy_model(name, task)


def _reporter(progress: Progress, total: int) -> Callable[[Any, Any], None]:
    """A ``run_groups`` callback printing one line per finished rollout."""
    done = [0]

    def on_done(r: Any, traj: Any) -> None:
        done[0] += 1
        if traj is None:
            status = "failed (infra)"
        else:
            status = "resolved" if traj.outcome.resolved else "not resolved"
        progress(f"run {done[0]}/{total}: {r.id} {status}")

    return on_done


def stage_run(out: Path, attempts: int, limit: int | None, progress: Progress) -> Path:
    """Reference policies over the bundled terminal suite; returns the trajectories file."""
    from agentpost.agent.loop import LoopConfig
    from agentpost.agent.policies import POLICIES
    from agentpost.agent.run import (
        TRAJECTORIES,
        Agent,
        Rollout,
        finished_ids,
        run_groups,
        write_summary,
    )
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.loader import bundled_suite_path, load_suite

    tasks = load_suite(bundled_suite_path("terminal"))[:limit]
    names = [n for n in POLICY_ORDER if n in POLICIES] + sorted(set(POLICIES) - set(POLICY_ORDER))
    agents = [Agent(f"scripted/{n}", partial(_policy, n)) for n in names]
    finished = finished_ids(out / "run" / TRAJECTORIES)
    todo = [Rollout(t, a, i).id for t in tasks for a in agents for i in range(attempts)]
    before = sum(r in finished for r in todo)
    total = len(todo) - before
    progress(
        f"run: {len(agents)} policies x {len(tasks)} tasks x {attempts} attempt(s) in "
        f"bubblewrap sandboxes ({before} already finished)"
    )

    on_done = _reporter(progress, total)
    res = run_groups(
        tasks,
        agents,
        attempts=attempts,
        out_dir=out / "run",
        backend=get_backend("bwrap"),
        loop=LoopConfig(),
        concurrency=2,
        run_id="demo",
        on_done=on_done,
    )
    args = {
        "policies": names,
        "tasks": "terminal",
        "attempts": attempts,
        "limit": limit,
        "concurrency": 2,
    }
    write_summary(out / "run", args, res, {})
    if res.errors:  # recorded in run.json; a rerun retries them
        raise PartialStage(
            f"{len(res.errors)} rollouts failed: {res.errors[0]['error']}",
            out / "run" / TRAJECTORIES,
        )
    return out / "run" / TRAJECTORIES


def stage_import(out: Path, run_trajs: Path, progress: Progress) -> Path:
    """Import the rollouts like any scaffold's logs; returns the canonical file later stages read."""
    from agentpost.trajectory.importers import detect
    from agentpost.trajectory.importing import import_paths
    from agentpost.trajectory.io import write_jsonl

    report = import_paths([run_trajs])
    if report.errors:
        raise InputError(run_trajs, None, f"import failed: {report.errors[0]}")
    dest = out / "trajectories.jsonl"
    write_jsonl(dest, report.trajectories)
    with open(run_trajs, "rb") as f:
        detected = detect(run_trajs, f.read(4096))
    producer = {
        "name": "agentpost.trajectory.importing.import_paths",
        "version": __version__,
        "args": {"paths": [str(run_trajs.relative_to(out))], "format": "auto"},
    }
    doc = {"format": "agentpost.import/1", "producer": producer, "files": report.files}
    write_json(
        out / "import.json",
        {**doc, "detected_format": detected, "trajectories": len(report.trajectories)},
    )
    progress(f"import: {len(report.trajectories)} trajectories, detected as {detected!r}")
    return dest


def stage_efficiency(out: Path, trajs_path: Path, state: dict, progress: Progress) -> dict:
    from agentpost.efficiency.analyze import analyze
    from agentpost.trajectory.io import read_jsonl

    dest = out / "efficiency.json"
    digest = _digest(trajs_path)
    if dest.exists() and state.get("efficiency") == digest:
        progress("efficiency: up to date")
        return orjson.loads(dest.read_bytes())
    doc = analyze(read_jsonl(trajs_path), inputs=[str(trajs_path.relative_to(out))])
    write_json(dest, doc)
    state["efficiency"] = digest
    progress(f"efficiency: {len(doc['trajectories'])} trajectories, {len(doc['models'])} models")
    return doc


def stage_hero(out: Path, trajs_path: Path, eff: dict, progress: Progress) -> None:
    from agentpost.demo_hero import groups_from, preview
    from agentpost.trajectory.io import read_jsonl

    groups, has_entropy = groups_from(read_jsonl(trajs_path), eff["trajectories"])
    producer = {
        "name": "agentpost.demo_hero.groups_from",
        "version": __version__,
        "args": {"trajectories": str(trajs_path.relative_to(out)), "groups": "one per task"},
    }
    write_json(
        out / "hero_groups.json",
        {"format": "agentpost.hero-groups/1", "producer": producer, **groups},
    )
    doc = preview(groups, has_entropy)
    write_json(out / "hero_advantages.json", doc)
    n_groups = len({r["group"] for r in doc["rollouts"]})
    progress(
        f"hero: advantages for {len(doc['rollouts'])} rollouts in {n_groups} groups"
        + ("" if has_entropy else " (no logprobs: fine term off)")
    )


class PartialStage(Exception):
    """A stage finished with some items failed; ``value`` is still usable downstream."""

    def __init__(self, message: str, value: Any):
        super().__init__(message)
        self.value = value


def _guard(name: str, fn: Callable[[], Any], log: dict, progress: Progress) -> Any:
    """Run one stage; a failure is recorded (never hidden) and the demo goes on."""
    t0 = time.monotonic()
    try:
        value = fn()
    except PartialStage as e:
        log[name] = {
            "status": "partial",
            "error": str(e),
            "seconds": round(time.monotonic() - t0, 2),
        }
        progress(f"{name}: PARTIAL: {e}")
        return e.value
    except ImportError as e:
        log[name] = {"status": "not available", "error": str(e)}
        progress(f"{name}: not available in this build ({e})")
        return None
    except Exception as e:  # recorded in demo.json and shown in the report
        log[name] = {
            "status": "failed",
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc(limit=6),
        }
        progress(f"{name}: FAILED: {type(e).__name__}: {e}")
        return None
    log[name] = {"status": "ok", "seconds": round(time.monotonic() - t0, 2)}
    return value


def run_demo(
    out: str | Path, *, attempts: int = 1, limit: int | None = None, progress: Progress = print
) -> Path:
    """Run every stage into ``out``; returns the path of ``report.html``. ``limit`` keeps only
    the first N tasks of each bundled suite (a quick look; tests use it)."""
    from agentpost.report.build import render_run_dir

    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise InputError(out, None, "the demo's output must be a directory; this is a file")
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "demo.json"
    meta = orjson.loads(meta_path.read_bytes()) if meta_path.exists() else {}
    state, log = meta.get("state", {}), {}
    t0 = time.monotonic()
    run_trajs = _guard("run", lambda: stage_run(out, attempts, limit, progress), log, progress)
    trajs = None
    if run_trajs is not None:
        trajs = _guard("import", lambda: stage_import(out, run_trajs, progress), log, progress)
    if trajs is not None:
        eff = _guard(
            "efficiency", lambda: stage_efficiency(out, trajs, state, progress), log, progress
        )
        if eff is not None:
            _guard("hero", lambda: stage_hero(out, trajs, eff, progress), log, progress)
        _guard("diagnose", lambda: demo_stages.diagnose(out, trajs, limit, progress), log, progress)
    _guard("loopback", lambda: loopback(out, limit, progress), log, progress)
    _guard("security", lambda: demo_stages.security(out, limit, progress), log, progress)
    meta = {
        "format": "agentpost.demo/1",
        "producer": {
            "name": "agentpost demo",
            "version": __version__,
            "args": {"out": str(out), "attempts": attempts, "limit": limit},
        },
        "stages": log,
        "state": state,
        "seconds": round(time.monotonic() - t0, 2),
    }
    write_json(meta_path, meta)
    progress("report: rendering")
    return render_run_dir(out)


def failed_stages(out: Path) -> list[str]:
    """Stages of the last demo run in ``out`` that did not end ``ok``."""
    meta = orjson.loads((Path(out) / "demo.json").read_bytes())
    return [k for k, v in meta.get("stages", {}).items() if v.get("status") != "ok"]
