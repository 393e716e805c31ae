"""Candidate-state replay on bundled tasks in real bubblewrap sandboxes (SCVD b.5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentpost.errors import InputError
from agentpost.replay.run import parse_upto, plan, replay, replay_into
from agentpost.tasks.evaluate import prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.io import write_jsonl
from agentpost.trajectory.model import Observation, Producer, ToolCall, Trajectory, Turn


def sh(command: str) -> ToolCall:
    return ToolCall(name="bash", arguments={"command": command}, command=command, kind="shell")


def repair_trajectory(task_id: str) -> Trajectory:
    """Explore, write the task's WRONG solution (the first complete candidate, step 2 call 0),
    run the self-check (it fails), repair with the oracle, declare completion."""
    task = load_task(bundled_suite_path() / task_id)
    # solutions `cd`; a subshell keeps a persistent shell's cwd where the agent left it
    wrong = "(\n" + task.wrong_solutions[0].read_text() + ")"
    oracle = "(\n" + task.solution_script.read_text() + ")"
    turns = [
        Turn(
            index=0,
            step=1,
            tool_calls=[sh(c) for c in task.explore],
            observations=[Observation(text="", exit_code=0) for _ in task.explore],
        ),
        Turn(index=1, step=2, tool_calls=[sh(wrong)], observations=[Observation(exit_code=0)]),
        Turn(index=2, step=3, tool_calls=[sh(task.check)], observations=[Observation(exit_code=1)]),
        Turn(
            index=3,
            step=4,
            tool_calls=[sh(oracle), ToolCall(name="mark_task_complete", kind="control")],
            observations=[Observation(exit_code=0), Observation(text="done")],
        ),
    ]
    return Trajectory(
        id=f"repair-{task_id}",
        task_id=task_id,
        agent="terminus-2",
        turns=turns,
        producer=Producer(name="test", version="0"),
    )


@pytest.mark.parametrize("task_id", ["top-client-ips", "git-feature-branch"])
def test_candidate_replay_is_wrong_and_full_replay_is_repaired(backend, task_id: str) -> None:
    traj = repair_trajectory(task_id)
    task = load_task(bundled_suite_path() / task_id)
    at_candidate = replay(traj, task, upto=(2, 0), backend=backend)
    full = replay(traj, task, backend=backend)
    assert (at_candidate.status, at_candidate.reward, at_candidate.resolved) == ("ok", 0.0, False)
    assert at_candidate.calls_replayed == len(task.explore) + 1
    assert (full.status, full.reward, full.resolved) == ("ok", 1.0, True)
    assert (
        full.calls_replayed == len(task.explore) + 3 and full.calls_skipped == 1
    )  # the control call
    # the self-check failed when recorded and fails on replay too: exit codes all match
    assert full.fidelity["exit_code_match"] == 1.0


def test_every_bundled_task_is_repaired_by_its_oracle_after_the_wrong_candidate(backend) -> None:
    """The scripted-policy pattern (explore, wrong candidate, failing check, oracle repair) ends
    resolved on every task (the candidate alone scoring 0 is what `tasks check` asserts)."""
    from agentpost.sandbox.executors import LocalExecutor
    from agentpost.tasks.loader import load_suite

    tasks = load_suite(bundled_suite_path())
    with LocalExecutor(max_workers=2) as pool:
        rows = pool.map(
            lambda t: (t.id, replay(repair_trajectory(t.id), t, backend=backend)), tasks
        )
    bad = [
        (tid, r.status, r.reward, r.evaluator_output[-200:]) for tid, r in rows if r.reward != 1.0
    ]
    assert not bad


def test_cli_replay_upto_and_full(backend, tmp_path: Path) -> None:
    traj = repair_trajectory("top-client-ips")
    other = traj.model_copy(update={"id": "other"})
    path = tmp_path / "t.jsonl"
    write_jsonl(path, [other, traj])
    task_dir = str(bundled_suite_path() / "top-client-ips")

    def cli(*args: str) -> subprocess.CompletedProcess:
        code = "from agentpost.cli import main; main()"
        return subprocess.run(
            [sys.executable, "-c", code, "replay", str(path), "--task", task_dir, *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    cand = cli("--id", traj.id, "--upto", "2:0", "--json")
    full = cli("--id", traj.id, "--json")
    assert cand.returncode == 0 and full.returncode == 0, cand.stderr + full.stderr
    c, f = json.loads(cand.stdout), json.loads(full.stdout)
    assert {"status", "reward", "resolved", "calls_replayed", "fidelity"} <= set(c)
    assert (c["reward"], f["reward"]) == (0.0, 1.0)
    assert c["producer"]["args"]["upto"] == "2:0"
    no_id = cli("--json")
    assert no_id.returncode == 2 and "--id" in no_id.stderr and no_id.stderr.count("\n") == 1
    bad = cli("--id", traj.id, "--upto", "9:0")
    assert bad.returncode == 2 and "no turn with step 9" in bad.stderr


def test_upto_uses_step_else_index_and_rejects_missing_calls() -> None:
    traj = repair_trajectory("csv-to-json")
    assert [(p.step, p.call_index) for p in plan(traj, (2, 0))][-1] == (2, 0)
    no_steps = traj.model_copy(
        update={"turns": [t.model_copy(update={"step": None}) for t in traj.turns]}
    )
    assert plan(no_steps, (1, 0))[-1].call.command == traj.turns[1].tool_calls[0].command
    with pytest.raises(InputError, match="step 2 has 1 tool calls; no call 5"):
        plan(traj, (2, 5))
    with pytest.raises(InputError, match="STEP:CALL"):
        parse_upto("3")
    assert parse_upto(" 4:1 ") == (4, 1)


def _run(backend, traj: Trajectory, task_id: str = "csv-to-json", **kw):
    task = load_task(bundled_suite_path() / task_id)
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        log = replay_into(traj, task, sb, **kw)
        return log, sb.get("/app/where.txt").decode().strip()


def test_shell_state_persists_like_the_scaffold(backend) -> None:
    turns = [
        Turn(
            index=0,
            tool_calls=[
                sh("mkdir -p sub && cd sub && export GREETING=hi"),
                sh('echo "$(pwd) $GREETING" > /app/where.txt'),
            ],
        )
    ]
    persistent = Trajectory(
        id="p", agent="openhands", turns=turns, producer=Producer(name="t", version="0")
    )
    _, where = _run(backend, persistent)
    assert where == "/app/sub hi"
    mini = persistent.model_copy(update={"agent": "mini-swe-agent"})
    _, where = _run(backend, mini)
    assert where == "/app"
    declared = persistent.model_copy(update={"metadata": {"shell_state": "fresh"}})
    assert _run(backend, declared)[1] == "/app"


def test_failed_shell_calls_and_timeouts_do_not_stop_replay(backend) -> None:
    turns = [
        Turn(
            index=0,
            tool_calls=[sh("exit 3"), sh("sleep 20"), sh("echo after > /app/where.txt")],
            observations=[
                Observation(exit_code=3),
                Observation(timed_out=True),
                Observation(exit_code=0),
            ],
        )
    ]
    traj = Trajectory(id="f", turns=turns, producer=Producer(name="t", version="0"))
    log, where = _run(backend, traj, call_timeout_s=1.0)
    assert where == "after" and log.failed is None
    assert [c.exit_code for c in log.calls] == [3, None, 0] and log.calls[1].timed_out


def test_replay_reports_evaluator_invalid_timeout_and_infra_error(backend, tmp_path) -> None:
    """The statuses besides ok and replay_failed: a verifier that writes no reward, one past its
    timeout, and a sandbox that cannot start (a rootfs with nothing in it)."""
    import shutil

    from agentpost.sandbox.base import SandboxSpec
    from agentpost.sandbox.bwrap import BwrapBackend

    traj = repair_trajectory("csv-to-json")
    root = tmp_path / "csv-to-json"
    shutil.copytree(bundled_suite_path() / "csv-to-json", root)
    (root / "tests" / "test.sh").write_text("echo graded but wrote nothing\n")
    res = replay(traj, load_task(root), backend=backend)
    assert (res.status, res.reward, res.resolved) == ("evaluator_invalid", None, None)
    assert res.calls_replayed == len(traj.turns[0].tool_calls) + 3
    (root / "tests" / "test.sh").write_text("sleep 30\n")
    toml = (root / "task.toml").read_text().replace("timeout_sec = 60.0", "timeout_sec = 1.0", 1)
    (root / "task.toml").write_text(toml)
    task = load_task(root)
    assert task.verifier_timeout_s == 1.0
    # the tests ran out of time, and so did the oracle's (the control): the task cannot grade
    assert replay(traj, task, upto=(2, 0), backend=backend).status == "evaluator_invalid"

    class EmptyRoot(BwrapBackend):  # the real backend, pointed at a root with no /usr
        def create(self, spec=None):
            return super().create(SandboxSpec(**{**vars(spec), "rootfs": str(tmp_path)}))

    broken = replay(traj, load_task(bundled_suite_path() / "csv-to-json"), backend=EmptyRoot())
    assert (broken.status, broken.reward, broken.calls_replayed) == ("infra_error", None, 0)
    assert "bwrap could not set up" in broken.message
