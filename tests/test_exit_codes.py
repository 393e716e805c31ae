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
