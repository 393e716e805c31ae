"""The replay entry point (``replay.state.rebuild``): one function gives the graded state in a
fresh sandbox, or the state inside a sandbox the caller goes on using, and each task's sandbox
spec is computed once per run (``Specs``)."""

from __future__ import annotations

import sys
import threading

import pytest
from test_replay import repair_trajectory

from agentpost.replay.state import Specs, rebuild
from agentpost.tasks import evaluate as task_evaluate
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task

TASK = "top-client-ips"


def test_graded_state_at_the_candidate_and_at_the_end(backend) -> None:
    traj, task = repair_trajectory(TASK), load_task(bundled_suite_path() / TASK)
    at_candidate = rebuild(traj, task, (2, 0), backend=backend)
    assert (at_candidate.status, at_candidate.source) == ("ok", "replay")
    assert (at_candidate.result.reward, at_candidate.result.resolved) == (0.0, False)
    doc = rebuild(traj, task, backend=backend).to_json()
    assert (doc["status"], doc["resolved"], doc["source"]) == ("ok", True, "replay")


def test_state_into_a_sandbox_the_caller_keeps(backend) -> None:
    """Rebuilt into the caller's sandbox, not graded: the caller grades (or continues) there."""
    traj, task = repair_trajectory(TASK), load_task(bundled_suite_path() / TASK)
    with backend.create(spec_for(task, backend=backend)) as sb:
        prepare(task, sb)
        state = rebuild(traj, task, (2, 0), sandbox=sb)
        assert (state.status, state.result) == ("ok", None)
        assert state.log is not None and state.log.replayed == len(task.explore) + 1
        with pytest.raises(ValueError, match="only a graded state"):
            state.to_json()
        assert evaluate(task, sb).resolved is False  # the wrong candidate, as replayed


def calls_of(fn, work) -> int:
    """How often ``fn``'s code runs during ``work()`` (in any thread): a count, not a stand-in."""
    code, n = fn.__code__, [0]

    def prof(frame, event, arg):
        if event == "call" and frame.f_code is code:
            n[0] += 1

    threading.setprofile(prof)
    sys.setprofile(prof)
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return n[0]


def test_a_task_spec_is_computed_once_per_run(backend) -> None:
    traj, task = repair_trajectory(TASK), load_task(bundled_suite_path() / TASK)
    specs = Specs(backend)

    def three_replays():
        for upto in ((1, 0), (2, 0), None):
            rebuild(traj, task, upto, backend=backend, spec=specs(task))

    assert calls_of(task_evaluate.spec_for, three_replays) == 1
    # without a spec from the caller, each rebuild computes it (and evaluate never does)
    assert calls_of(task_evaluate.spec_for, lambda: rebuild(traj, task, backend=backend)) == 1
