"""`agentpost demo`: every stage, offline, on the bundled suites, ending in one HTML report.

Stages (each writes machine-readable JSON into the output directory, then the report is built):

1. ``run/``: the scripted reference policies (careful, hasty, wasteful, wrong-then-repaired) over
   the bundled terminal suite in sandboxes of the chosen backend (bubblewrap by default), graded
   by each task's evaluator (``demo.terminal``; resumable: finished rollouts are skipped).
2. ``trajectories.jsonl`` + ``import.json``: the rollouts go through ``agentpost import``'s own
   function (format auto-detection and validation, as a user's own logs would; ``import.json`` is
   what ``agentpost import --summary`` writes), and every later stage reads the imported file.
   ``efficiency.json``: HERO analyses over those trajectories (``hero.analyze``).
3. ``hero_groups.json`` + ``hero_advantages.json``: a preview of HERO advantages, one group per
   task (``demo.hero``).
4. ``diagnose/``: SCVD diagnosis with the offline judge panel and candidate-state replay
   (``demo.scvd``).
5. ``loopback/``: the real agent loop against a loopback fake model that serves scripted replies
   with synthetic top-10 logprobs, so the report shows what the entropy analyses look like
   (``demo.loopback``; labelled a fake model wherever it appears).
6. ``security/``: the scripted security agents over the bundled security suite, graded, with
   behaviour attribution (``demo.security``).
7. ``report.html``.

Library calls, not subprocesses, to stay fast. A stage whose library is missing or fails is
recorded in ``demo.json`` with the reason and the report says 'not run'; the demo still finishes.
Cheap stages are recomputed only when their input file changed (content hash in ``demo.json``).

Layer: io.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agentpost.demo.files import write_json
from agentpost.demo.model import Demo, PartialStage, Progress
from agentpost.documents.formats import fmt, producer
from agentpost.errors import InputError


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


def _stages(d: Demo, log: dict) -> None:
    from agentpost.demo import hero, loopback, scvd, security, terminal

    def guard(name: str, fn: Callable[[], Any]) -> Any:
        return _guard(name, fn, log, d.progress)

    run_trajs = guard("run", lambda: terminal.stage_run(d))
    trajs = None
    if run_trajs is not None:
        trajs = guard("import", lambda: terminal.stage_import(d, run_trajs))
    if trajs is not None:
        eff = guard("efficiency", lambda: terminal.stage_efficiency(d, trajs))
        if eff is not None:
            guard("hero", lambda: hero.stage_hero(d, trajs, eff))
        guard("diagnose", lambda: scvd.stage_diagnose(d, trajs))
    guard("loopback", lambda: loopback.stage_loopback(d))
    guard("security", lambda: security.stage_security(d))


def run_demo(
    out: str | Path,
    *,
    attempts: int = 1,
    limit: int | None = None,
    backend: str = "bwrap",
    progress: Progress = print,
) -> Path:
    """Run every stage into ``out``; returns the path of ``report.html``. ``limit`` keeps only
    the first N tasks of each bundled suite (a quick look; tests use it); ``backend`` is the
    sandbox backend by name (``bwrap``, ``docker`` or ``module:Class``)."""
    from agentpost.report.build import render_run_dir
    from agentpost.sandbox.registry import get_backend

    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise InputError(out, None, "the demo's output must be a directory; this is a file")
    try:
        box = get_backend(backend)
    except ValueError as e:
        raise InputError(None, "--backend", str(e)) from None
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "demo.json"
    meta = orjson.loads(meta_path.read_bytes()) if meta_path.exists() else {}
    d = Demo(out, attempts, limit, backend, box, progress, meta.get("state", {}))
    log: dict[str, Any] = {}
    t0 = time.monotonic()
    _stages(d, log)
    meta = {
        "format": fmt("agentpost.demo"),
        "producer": producer(
            run_demo, out=str(out), attempts=attempts, limit=limit, backend=backend
        ),  # fmt: skip
        "stages": log,
        "state": d.state,
        "seconds": round(time.monotonic() - t0, 2),
    }
    write_json(meta_path, meta)
    progress("report: rendering")
    return render_run_dir(out)


def failed_stages(out: Path) -> list[str]:
    """Stages of the last demo run in ``out`` that did not end ``ok``."""
    meta = orjson.loads((Path(out) / "demo.json").read_bytes())
    return [k for k, v in meta.get("stages", {}).items() if v.get("status") != "ok"]
