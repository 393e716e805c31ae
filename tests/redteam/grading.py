"""The red team's grading step: prepare a task, run the agent's turn in its sandbox, grade it."""

from __future__ import annotations

import dataclasses

from agentpost.tasks.evaluate import evaluate, prepare, spec_for


def attack(backend, task, turn, **overrides):
    """Prepare ``task``, run the agent's ``turn`` (a shell command or an argv) in it, grade it."""
    task = dataclasses.replace(task, **overrides) if overrides else task
    with backend.create(spec_for(task, backend=backend)) as box:
        prepare(task, box)
        r = box.exec(turn, cwd=task.workdir, timeout_s=300)
        assert r.exit_code == 0, r.stdout + r.stderr
        return evaluate(task, box)


def assert_zero(res):
    """Graded, as the agent's 0: not an infrastructure fault, a timeout or an invalid evaluator."""
    assert (res.status, res.reward, res.resolved) == ("ok", 0.0, False), res.output[-2000:]
