"""Exit codes tell the truth: a failed judge panel, a replay on the wrong task and an aborted
grade are not exit 0. (`sandbox exec` is in tests/sandbox, `run`'s in tests/agent.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentpost.agent.loopback import LoopbackServer
from agentpost.cli import main
from agentpost.sandbox.bwrap import BwrapBackend
from agentpost.tasks.loader import bundled_suite_path
from agentpost.trajectory.io import write_jsonl
from agentpost.trajectory.model import Producer, Trajectory

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def _cli(capsys, *argv) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main([str(a) for a in argv])
        raise SystemExit(0)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def _trajectories(path: Path, task_id: str = "csv-to-json") -> Path:
    producer = Producer(name="tests.exit_codes", version="0", args={})
    trajs = [Trajectory(id=f"t{i}", task_id=task_id, turns=[], producer=producer) for i in (0, 1)]
    write_jsonl(path, trajs)
    return path


def test_diagnose_fails_when_every_judge_call_is_refused(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("AGENTPOST_JUDGE_KEY", "wrong")
    with LoopbackServer(["unused"], api_key="right") as srv:
        judges = tmp_path / "judges.yaml"
        judges.write_text(
            "judges:\n"
            + "".join(
                f"  - {{id: j{i}, kind: openai, model: m, base_url: {srv.url}, "
                "api_key_env: AGENTPOST_JUDGE_KEY}\n"
                for i in range(3)
            )
            + "arbiter: j0\n"
        )
        code, _, err = _cli(capsys, "diagnose", _trajectories(tmp_path / "t.jsonl"),
                            "--judges", judges, "-o", tmp_path / "run", "--bootstrap", "0",
                            "--no-progress")  # fmt: skip
    assert code == 1 and "every judge call failed (6 of 6)" in err
    assert (tmp_path / "run" / "metrics.json").exists()  # what was done is still written


def test_diagnose_with_working_judges_exits_zero(tmp_path, capsys) -> None:
    code, _, _ = _cli(capsys, "diagnose", _trajectories(tmp_path / "t.jsonl"),
                      "-o", tmp_path / "run", "--bootstrap", "0", "--no-progress")  # fmt: skip
    assert code == 0


def test_replay_against_another_task_is_refused(tmp_path, capsys) -> None:
    other = bundled_suite_path("terminal") / "git-feature-branch"
    code, out, err = _cli(capsys, "replay", _trajectories(tmp_path / "t.jsonl"), "--id", "t0",
                          "--task", other)  # fmt: skip
    assert code == 2 and out == ""
    assert "trajectory 't0' is of task 'csv-to-json', not 'git-feature-branch'" in err


class BrokenBackend(BwrapBackend):
    """bwrap whose restored sandboxes cannot start: an infrastructure fault outside the
    candidate's reach, the one kind of failure that still grades as ``aborted``."""

    def restore(self, snapshot):
        box = super().restore(snapshot)
        box._args += ["--bind", "/nonexistent-agentpost-source", "/nowhere"]  # bwrap refuses
        return box


@needs_bwrap
def test_security_grade_exits_non_zero_when_the_grade_is_aborted(tmp_path, capsys) -> None:
    from agentpost.security.suite import find_task

    task = find_task("calculator")
    code, out, _ = _cli(capsys, "security", "grade", "calculator", task.references["secure"],
                        "--backend", f"{__name__}:BrokenBackend")  # fmt: skip
    assert code == 1 and "status=aborted" in out


# ---- issue 30: nothing to analyse is not exit 0; an interrupted demo says so ----


def test_nothing_to_analyse_exits_non_zero_with_one_line(tmp_path, capsys) -> None:
    """An empty trajectory file (efficiency), a folder of raw logs (summary, report)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = _cli(capsys, "efficiency", empty)
    assert code == 2 and err.strip().splitlines() == [
        f"error: {empty}: no trajectories: nothing to analyse"]  # fmt: skip
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "session.jsonl").write_text('{"type": "user", "message": "hi"}\n')
    for cmd in ("summary", "report"):
        code, out, err = _cli(capsys, cmd, logs)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "nothing to analyse" in lines[0], (cmd, err)
        assert f"agentpost import {logs}" in lines[0] and not out


@needs_bwrap
def test_diagnose_where_no_replay_could_run_is_not_exit_0(tmp_path, capsys) -> None:
    """Trajectories of tasks the suite does not hold: every candidate replay is task_missing,
    so nothing is measured; the metrics are still written, and the exit says so in one line."""
    from agentpost.trajectory.model import ToolCall, Turn

    producer = Producer(name="tests.exit_codes", version="0", args={})
    from agentpost.trajectory.model import Observation

    calls = [ToolCall(name="bash", command="echo x > out.txt", kind="shell"),
             ToolCall(name="bash", command="cat out.txt", kind="shell")]  # fmt: skip
    obs = [Observation(text="", exit_code=0), Observation(text="x", exit_code=0)]
    trajs = [Trajectory(id=f"t{i}", task_id="not-in-the-suite", producer=producer,
                        turns=[Turn(index=k, tool_calls=[c], observations=[o])
                               for k, (c, o) in enumerate(zip(calls, obs, strict=True))]) for i in (0, 1)]  # fmt: skip
    write_jsonl(tmp_path / "t.jsonl", trajs)
    code, _, err = _cli(capsys, "diagnose", tmp_path / "t.jsonl", "-o", tmp_path / "d",
                        "--no-progress", "--bootstrap", "0")  # fmt: skip
    errors = [x for x in err.splitlines() if x.startswith("error:")]
    assert code == 1 and len(errors) == 1, err
    assert "none of the 2 candidate states could be replayed (task_missing: 2)" in errors[0]
    assert "ICA, EDR, ESP, CPR, VPR, RSR) is measured" in errors[0]
    assert (tmp_path / "d" / "metrics.json").is_file()


@needs_bwrap
def test_an_interrupted_demo_says_so(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", "from agentpost.cli import main; main()",
                             "demo", "--limit", "1", "-o", str(tmp_path / "demo")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while not (tmp_path / "demo" / "run").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted: the stages that finished are kept in" in err and "Traceback" not in err
    assert not (tmp_path / "demo" / ".agentpost.lock").exists()
