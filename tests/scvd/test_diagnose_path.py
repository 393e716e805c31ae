"""The path of ``agentpost diagnose`` from the CLI to the records, measured at run time (issue 32).

Two scripted policies over two bundled terminal tasks give four trajectories (one of which the
panel sends to replay per task at least); ``diagnose`` runs in this process under a profiler
that sees every function call in every thread. Each function belongs to a room: the top-level
package of ``agentpost`` it is defined in (top-level modules such as ``errors.py`` or
``store.py`` are the ground floor, not rooms; module and class bodies run at import time and are
not the path). Counted, each as distinct caller-function → callee-function edges:

- **rooms entered**: packages whose functions ran;
- **climbs**: calls from a room into a room above it in ``ROOMS`` (tests/test_layers.py), the
  import direction turned back: callbacks and plug-ins (today: the judges' call path asking
  SCVD's heuristic seat);
- **re-entries**: calls into a room the run had already entered (reported, not bounded: every
  return to a lower room counts, however sound).

Measured on main before issue 32 (7038a17, same trajectories): 9 rooms, 3 climbs, 34
re-entries, ``spec_for`` 8 times for 2 tasks. After: see the assertions; ``spec_for`` runs once
per task replayed (``replay.state.Specs``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from test_layers import ROOMS

import agentpost
from agentpost.tasks import evaluate as task_evaluate

PKG = Path(agentpost.__file__).resolve().parent
TASKS = ("greet-cli", "csv-to-json")
CO_NEWLOCALS = 0x0002  # functions (and comprehensions), not module or class bodies


def room(code) -> str | None:
    path = Path(code.co_filename)
    if not path.is_relative_to(PKG) or not code.co_flags & CO_NEWLOCALS:
        return None
    parts = path.relative_to(PKG).parts
    if len(parts) == 1 or "suites" in parts:
        return None  # a top-level module (ground floor) or a task file run in a sandbox
    return parts[0]


class PathTrace:
    """Every cross-room call edge (caller function → callee function) of the traced code."""

    def __init__(self) -> None:
        self.edges: dict[tuple[str, str, str, str], bool] = {}  # → entered that room before?
        self.rooms: set[str] = set()
        self.spec_for = 0
        self._lock = threading.Lock()

    def __call__(self, frame, event, arg) -> None:
        if event != "call":
            return
        callee = room(frame.f_code)
        if callee is None:
            return
        caller = frame.f_back
        while caller is not None and room(caller.f_code) is None:
            caller = caller.f_back
        with self._lock:
            if frame.f_code is task_evaluate.spec_for.__code__:
                self.spec_for += 1
            if caller is not None and room(caller.f_code) != callee:
                key = (room(caller.f_code), _name(caller.f_code), callee, _name(frame.f_code))
                self.edges.setdefault(key, callee in self.rooms)
            self.rooms.add(callee)

    def climbs(self) -> list[str]:
        rank = {r: i for i, r in enumerate(ROOMS)}
        return sorted(f"{a} -> {b}" for ra, a, rb, b in self.edges if rank[rb] > rank[ra])

    def reentries(self) -> int:
        return sum(self.edges.values())


def _name(code) -> str:
    return f"{Path(code.co_filename).relative_to(PKG)}:{code.co_name}"


def traced(work) -> PathTrace:
    trace = PathTrace()
    threading.setprofile(trace)
    sys.setprofile(trace)
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return trace


def test_diagnose_path_enters_few_rooms_and_climbs_little(backend, tmp_path) -> None:
    tasks = [x for t in TASKS for x in ("--task", t)]
    run = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()", "run",
                          "-o", str(tmp_path / "run"), "--policy", "careful",
                          "--policy", "wrong-then-repaired", *tasks],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr
    from agentpost.cli import main

    out = tmp_path / "diag"
    args = ["diagnose", str(tmp_path / "run" / "trajectories.jsonl"), "--suite", "terminal",
            "-o", str(out), "--n-boot", "0", "--replay-concurrency", "2", "--no-progress"]  # fmt: skip

    def diagnose() -> None:
        try:
            main(args)
        except SystemExit as e:
            assert e.code in (0, None), e.code

    trace = traced(diagnose)
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    replayed = {r["record"]["task"] for r in records if r.get("replay")}
    assert len(records) == 4 and replayed, records  # the path did reach replay
    print(f"rooms {len(trace.rooms)} {sorted(trace.rooms)}; climbs {len(trace.climbs())} "
          f"{trace.climbs()}; re-entries {trace.reentries()}; spec_for {trace.spec_for}")  # fmt: skip
    assert {"commands", "scvd", "judges", "replay", "tasks", "sandbox"} <= trace.rooms
    assert len(trace.rooms) <= 14, sorted(trace.rooms)
    assert len(trace.climbs()) <= 8, trace.climbs()
    assert trace.spec_for == len(replayed)  # each task's sandbox spec once per run


def test_the_trace_counts_climbs_and_reentries() -> None:
    """The measure can fail: a lower room calling back up is a climb, a return a re-entry."""
    from agentpost.replay import state
    from agentpost.tasks.loader import bundled_suite_path, load_task

    task = load_task(bundled_suite_path() / TASKS[0])
    specs = state.Specs(None)

    def up_and_back() -> None:
        specs(task)  # replay -> tasks
        specs(task)  # cached: no second call into tasks

    trace = traced(up_and_back)
    assert trace.rooms == {"replay", "tasks"} and trace.spec_for == 1
    assert trace.climbs() == [] and trace.reentries() == 0
    trace.edges[("tasks", "tasks/x.py:f", "replay", "replay/y.py:g")] = True
    assert trace.climbs() == ["tasks/x.py:f -> replay/y.py:g"] and trace.reentries() == 1
