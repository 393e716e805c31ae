"""Replaying real Harbor golden trajectories (ATIF: Terminus-2 keystrokes, OpenHands edits),
imported by the project's importers, against a hello-world task shaped like Harbor's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentpost.tasks.evaluate import prepare, spec_for
from agentpost.tasks.loader import load_task
from agentpost.trajectory.importing import import_file
from agentpost.verification.replay import replay, replay_into

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parents[1] / ".." / "shared" / "data" / "trajectories" / "atif" / "harbor-golden"
TASK = HERE / "fixtures" / "hello-world"

pytestmark = pytest.mark.skipif(not GOLDEN.is_dir(), reason="shared data not present")


@pytest.fixture(scope="module")
def backend():
    import shutil

    from agentpost.sandbox.registry import get_backend

    b = get_backend("bwrap")
    if not b.available() or not shutil.which("tmux"):
        pytest.skip("bubblewrap or tmux not available")
    return b


def _one(rel: str):
    (traj,) = import_file(GOLDEN / rel)
    return traj


def test_terminus_keystrokes_replay_with_high_fidelity(backend) -> None:
    traj = _one("terminus_2/hello-world-context-summarization.trajectory.json")
    task = load_task(TASK)
    before = replay(traj, task, upto=(4, 0), backend=backend)  # test_dir made, no hello.txt yet
    full = replay(traj, task, backend=backend)
    assert (before.status, before.reward) == ("ok", 0.0)
    assert (full.status, full.reward, full.calls_replayed, full.calls_skipped) == ("ok", 1.0, 5, 2)
    # the replayed terminal shows what the recorded one showed (prompt host names aside)
    assert full.fidelity["text_similarity"] > 0.95, full.fidelity


def test_terminus_replayed_screen_is_the_handoff_observation(backend) -> None:
    traj = _one("terminus_2/hello-world-context-summarization.trajectory.json")
    task = load_task(TASK)
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        log = replay_into(traj, task, sb, upto=(8, 0))
        assert sb.get("/app/test_dir/file2.txt") == b"test2\n"
    assert "cat hello.txt\nHello, world!" in log.last_observation


def test_openhands_edit_replay(backend) -> None:
    traj = _one("openhands/hello-world.trajectory.json")
    res = replay(traj, load_task(TASK), backend=backend)
    assert (res.status, res.reward, res.calls_replayed, res.calls_skipped) == ("ok", 1.0, 1, 1)


def test_terminus_timeout_run_replays_unresolved_with_capped_waits(backend) -> None:
    traj = _one("terminus_2/hello-world-timeout.trajectory.json")
    res = replay(traj, load_task(TASK), backend=backend, max_duration_s=0.3)
    assert (res.status, res.reward, res.calls_replayed) == ("ok", 0.0, 3)
    assert res.duration_s < 8  # two recorded 5 s waits were capped
