"""Replaying real Harbor golden trajectories (ATIF: Terminus-2 keystrokes, OpenHands edits),
imported by the project's importers, against a hello-world task shaped like Harbor's."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import TRAJECTORIES, needed

from agentpost.replay.run import replay, replay_into
from agentpost.tasks.evaluate import prepare, spec_for
from agentpost.tasks.loader import load_task
from agentpost.trajectory.importing import import_file

HERE = Path(__file__).resolve().parent
GOLDEN = TRAJECTORIES / "atif" / "harbor-golden"
TASK = HERE / "fixtures" / "hello-world"

pytestmark = needed


def _one(rel: str):
    (traj,) = import_file(GOLDEN / rel)
    return traj


def test_terminus_keystrokes_replay_with_high_fidelity(tmux_backend) -> None:
    traj = _one("terminus_2/hello-world-context-summarization.trajectory.json")
    task = load_task(TASK)
    before = replay(
        traj, task, upto=(4, 0), backend=tmux_backend
    )  # test_dir made, no hello.txt yet
    full = replay(traj, task, backend=tmux_backend)
    assert (before.status, before.reward) == ("ok", 0.0)
    assert (full.status, full.reward, full.calls_replayed, full.calls_skipped) == ("ok", 1.0, 5, 2)
    # the replayed terminal shows what the recorded one showed (prompt host names aside)
    assert full.fidelity["text_similarity"] > 0.95, full.fidelity


def test_terminus_replayed_screen_is_the_handoff_observation(tmux_backend) -> None:
    traj = _one("terminus_2/hello-world-context-summarization.trajectory.json")
    task = load_task(TASK)
    with tmux_backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        log = replay_into(traj, task, sb, upto=(8, 0))
        assert sb.get("/app/test_dir/file2.txt") == b"test2\n"
    assert "cat hello.txt\nHello, world!" in log.last_observation


def test_openhands_edit_replay(tmux_backend) -> None:
    traj = _one("openhands/hello-world.trajectory.json")
    res = replay(traj, load_task(TASK), backend=tmux_backend)
    assert (res.status, res.reward, res.calls_replayed, res.calls_skipped) == ("ok", 1.0, 1, 1)


def test_terminus_timeout_run_replays_unresolved_with_capped_waits(tmux_backend) -> None:
    traj = _one("terminus_2/hello-world-timeout.trajectory.json")
    res = replay(traj, load_task(TASK), backend=tmux_backend, max_duration_s=0.3)
    assert (res.status, res.reward, res.calls_replayed) == ("ok", 0.0, 3)
    assert res.duration_s < 8  # two recorded 5 s waits were capped


SWE_AGENT = TRAJECTORIES / "swe-agent"
MISSING_COLON = HERE / "fixtures" / "missing-colon"


@pytest.mark.parametrize(
    "rel",
    [
        "tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95"
        "__c-3.00__install-1/swe-agent__test-repo-i1.traj",  # classic `edit 4:4 ... end_of_edit`
        "trajectories/demonstrations/function_calling_simple.traj",  # `edit SEARCH REPLACE`
    ],
)
def test_swe_agent_windowed_edits_replay(tmux_backend, rel: str) -> None:
    (traj,) = import_file(SWE_AGENT / rel)
    task = load_task(MISSING_COLON)
    before = replay(traj, task, upto=(1, 0), backend=tmux_backend)  # found and opened, not edited
    full = replay(traj, task, backend=tmux_backend)
    assert (before.status, before.reward) == ("ok", 0.0)
    assert (full.status, full.reward) == ("ok", 1.0)
    # find_file/open are SWE-agent tools (skipped; open sets the file), submit is control
    assert full.calls_replayed == 2 and full.calls_skipped == 3


def test_cli_replays_a_scaffold_log_directly(tmux_backend) -> None:
    import json
    import subprocess
    import sys

    log = GOLDEN / "terminus_2" / "hello-world-context-summarization.trajectory.json"
    code = "from agentpost.cli import main; main()"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "replay",
            str(log),
            "--task",
            str(TASK),
            "--upto",
            "7:0",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert (res["status"], res["reward"], res["calls_replayed"]) == ("ok", 1.0, 4)


def test_cli_says_why_a_replay_failed(tmux_backend) -> None:
    """Without --json a failed replay still says why: the OpenHands v0 sample edits
    /workspace, which the task's sandbox does not have writable."""
    import subprocess
    import sys

    log = TRAJECTORIES / "openhands" / "v0"
    log = log / "tests" / "runtime" / "trajs" / "basic.json"
    code = "from agentpost.cli import main; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, "replay", str(log), "--task", str(TASK)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    first, why = out.stdout.strip().splitlines()
    assert first.startswith("replay_failed: reward=None")
    assert why.startswith("  why: ") and "/workspace" in why and "(step 0 call 0, edit)" in why


def test_cli_rejects_a_call_timeout_that_is_not_positive() -> None:
    """--call-timeout 0 used to time out every call and still report status ok."""
    import subprocess
    import sys

    log = GOLDEN / "openhands" / "hello-world.trajectory.json"
    code = "from agentpost.cli import main; main()"
    for value in ("0", "-5"):
        out = subprocess.run(
            [sys.executable, "-c", code, "replay", str(log), "--task", str(TASK)]
            + ["--call-timeout", value],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (out.returncode, out.stdout) == (2, ""), value
        assert out.stderr == f"error: --call-timeout: must be positive, got {float(value)}\n"
