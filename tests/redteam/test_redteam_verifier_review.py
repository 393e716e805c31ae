"""Red team, the verifier, second round (review of issue 26 part B): cases found after the first
fixes landed. Same rules as ``test_redteam_verifier.py``: the agent's turn never solves the
task, the task's real verifier grades it, and every case must end ``ok`` with reward 0 (no
unearned credit, no escape as ``infra_error``, ``evaluator_invalid`` or a timeout).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentpost.sandbox.registry import get_backend
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import load_task

pytestmark = pytest.mark.timeout(900)
FIX = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def anyb(request):
    b = get_backend(request.param)
    if not b.available():
        pytest.skip(f"{request.param} sandbox not available")
    return b


def attack(backend, task, turn, **overrides):
    """Prepare ``task``, run the agent's ``turn`` (a shell command or an argv) in it, grade it."""
    task = dataclasses.replace(task, **overrides) if overrides else task
    with backend.create(spec_for(task, backend=backend)) as box:
        prepare(task, box)
        r = box.exec(turn, cwd=task.workdir, timeout_s=300)
        assert r.exit_code == 0, r.stdout + r.stderr
        return evaluate(task, box)


def assert_zero(res):
    assert (res.status, res.reward, res.resolved) == ("ok", 0.0, False), res.output[-2000:]


# --- the link sweep, fooled by path length ----------------------------------------------------

# /app/out -> deep/<12 dirs>/m -> <13 more dirs>/x -> /tests/expected.txt: each link body is
# under PATH_MAX, the kernel follows the chain, but the resolved path (25 names of 200 bytes) is
# longer than PATH_MAX, so a sweep resolving paths as strings (os.path.realpath) gets
# ENAMETOOLONG, takes the name for a plain file and keeps the link; and the walk cannot list the
# dirs below PATH_MAX either, so it never meets the last link.
DEEP = r"""
import os
n = "d" * 200
os.chdir("/app"); os.mkdir("deep"); os.chdir("deep")
for i in range(25):
    os.mkdir(n); os.chdir(n)
    if i == 11:
        os.symlink("/".join([n] * 13) + "/x", "m")
os.symlink("/tests/expected.txt", "x")
os.symlink("deep/" + "/".join([n] * 12) + "/m", "/app/out")
"""


def test_link_sweep_fooled_by_a_path_longer_than_path_max(anyb):
    res = attack(anyb, load_task(FIX / "answer-file"), ["python3", "-c", DEEP])
    assert_zero(res)
