"""`agentpost run` end to end in a subprocess: groups by policy, and kill-then-resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentpost.agent.run import finished_ids
from agentpost.sandbox.registry import get_backend

pytestmark = pytest.mark.skipif(
    not get_backend("bwrap").available(), reason="bubblewrap unavailable"
)
TASKS = ["--task", "csv-to-json", "--task", "git-feature-branch"]
CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
KEY = ["--api-key-env", "AGENTPOST_TEST_KEY"]
ENV = {**os.environ, "AGENTPOST_TEST_KEY": "k"}


def _run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [*CLI, "run", "--policy", "all", *TASKS, "-o", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def _ids(out: Path) -> list[str]:
    lines = (out / "trajectories.jsonl").read_bytes().splitlines()
    return [json.loads(x)["id"] for x in lines if x.strip()]


def test_policies_make_groups_whose_outcomes_differ_by_policy(tmp_path: Path) -> None:
    proc = _run(tmp_path, "-G", "2", "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "run.json").read_text())
    assert (
        summary["format"] == "agentpost.run/1"
        and summary["producer"]["name"] == "agentpost.agent.run.run_groups"
    )
    rates = {a: v["resolution_rate"] for a, v in summary["agents"].items()}
    assert rates == {"scripted/careful": 1.0, "scripted/hasty": 0.0,
                     "scripted/wasteful": 1.0, "scripted/wrong-then-repaired": 1.0}  # fmt: skip
    assert len(summary["groups"]) == 8 and all(g["finished"] == 2 for g in summary["groups"])
    by = {(g["task"], g["agent"]): g for g in summary["groups"]}
    for task in ("csv-to-json", "git-feature-branch"):
        # HERO's premise, visible in the groups: same outcome, very different token use.
        assert min(by[(task, "scripted/wasteful")]["tokens"]) > 3 * max(
            by[(task, "scripted/careful")]["tokens"]
        )
    lines = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert len(lines) == 16 and all(t["outcome"]["evaluator"] for t in lines)
    assert "already finished" in proc.stderr


def test_killed_run_resumes_without_repeating_finished_rollouts(tmp_path: Path) -> None:
    total = 2 * 2 * 3
    pols = ["--policy", "careful", "--policy", "hasty"]
    cmd = [*CLI, "run", *pols, *TASKS, "-o", str(tmp_path), "-G", "3", "--workers", "1"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    path = tmp_path / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = path.read_bytes()
    before = before[: before.rfind(b"\n") + 1]  # a kill mid-write may leave a torn line itself
    n_before = before.count(b"\n")
    assert 3 <= n_before < total, "the run must be killed part-way"
    with open(path, "ab") as f:  # a torn last line, as a kill in the middle of a write leaves
        f.write(b'{"id": "csv-to-json::scripted/careful::9", "tur')
    proc2 = subprocess.run(
        [*cmd[:-2], "--workers", "2"], capture_output=True, text=True, timeout=300
    )
    assert proc2.returncode == 0, proc2.stderr
    ids = _ids(tmp_path)
    assert len(ids) == len(set(ids)) == total  # nothing repeated, everything finished
    assert path.read_bytes().startswith(before)  # finished rollouts kept byte for byte
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["this_invocation"]["skipped"] == n_before
    assert summary["this_invocation"]["ran"] == total - n_before
    assert finished_ids(path) == set(ids)


def test_ctrl_c_keeps_finished_rollouts_and_starts_no_more(tmp_path: Path) -> None:
    cmd = [
        *CLI,
        "run",
        "--policy",
        "wasteful",
        *TASKS,
        "-o",
        str(tmp_path),
        "-G",
        "3",
        "--workers",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    path = tmp_path / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in stderr
    assert "run the same command again to resume" in stderr
    ids = _ids(tmp_path)
    assert 1 <= len(ids) <= 2 < 6  # the one written (the one in flight may finish first)
    assert path.read_bytes().endswith(b"\n")


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "run", "-o", str(tmp_path)], capture_output=True, text=True)
    assert (
        proc.returncode == 2
        and "give either --model" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    proc = _run(tmp_path, "--task", "no-such-task")
    assert proc.returncode == 2 and "no task named no-such-task" in proc.stderr
    for extra, message in [
        (["--backend", "nope"], "unknown sandbox backend 'nope'"),
        (
            ["--mode", "bash"],
            "--mode: LoopConfig.mode must be an action format: text, tools or a "
            "package.module:Class path, got 'bash'",
        ),
        (["--model", "m"], "give either --model"),
        (["--request-timeout", "inf"], "--request-timeout: inf is not a positive number"),
    ]:
        proc = _run(tmp_path, *extra)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    a_file = tmp_path / "file"
    a_file.write_text("x")
    proc = _run(a_file)
    assert proc.returncode == 2 and "not a directory" in proc.stderr


def _look_then_submit(body: dict) -> dict:
    """A loopback model: ``ls`` on the first turn of a rollout, then submit."""
    if len(body["messages"]) == 2:
        return {
            "content": "Look first.",
            "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}],
        }
    return {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]}


def test_a_spent_token_budget_stops_the_run_and_a_rerun_continues(tmp_path: Path) -> None:
    from agentpost.agent.loopback import LoopbackServer

    with LoopbackServer(_look_then_submit, api_key="k") as srv:
        cmd = [*CLI, "run", "--model", "loopback-coder", "--base-url", srv.url, "--task", "csv-to-json",
               "-G", "3", "--workers", "1", "-o", str(tmp_path), *KEY]  # fmt: skip
        first = subprocess.run(
            [*cmd, "--token-budget", "1"], capture_output=True, text=True, env=ENV
        )
        n_requests = len(srv.requests)
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
    assert first.returncode == 0, first.stderr
    assert "budget spent: 3 rollouts" in first.stderr and n_requests == 1
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["this_invocation"]["ran"] == 3 and summary["this_invocation"]["skipped"] == 0
    assert second.returncode == 0 and len(_ids(tmp_path)) == 3


def test_run_with_a_model_on_the_loopback_server(tmp_path: Path) -> None:
    from agentpost.agent.loopback import LoopbackServer

    reply = _look_then_submit

    with LoopbackServer(reply, api_key="k") as srv:
        srv.fail("500", "drop", "no_choices")  # the last crashed run.json once (Usage)
        cmd = [*CLI, "run", "--model", "loopback-coder", "--base-url", srv.url, "--task", "csv-to-json",
               "-G", "2", "-o", str(tmp_path), *KEY]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["agents"]["loopback-coder"] == {
        "finished": 2,
        "resolved": 0,
        "resolution_rate": 0.0,
    }
    ledger = summary["ledger"]
    assert ledger["calls"] == 4 and ledger["attempts"] == 7 and ledger["failed_attempts"] == 3
    assert ledger["errors"][-1]["usage"]["output_tokens"] == 3
    assert ledger["cost_usd"] is None  # no prices given: unknown, not 0
    for line in (tmp_path / "trajectories.jsonl").read_text().splitlines():
        traj = json.loads(line)
        assert all(len(row) == 10 for t in traj["turns"] for row in t["logprobs"]["top_logprobs"])
        assert traj["outcome"]["resolved"] is False and traj["outcome"]["reward"] == 0.0


def test_a_refused_request_stops_the_run_with_a_clear_message(tmp_path: Path) -> None:
    from agentpost.agent.loopback import LoopbackServer

    with LoopbackServer(_look_then_submit, api_key="k") as srv:
        srv.fail("ok", "400")  # the second call of the first rollout is refused
        cmd = [*CLI, "run", "--model", "loopback-coder", "--base-url", srv.url, "--task", "csv-to-json",
               "-G", "3", "--workers", "1", "-o", str(tmp_path), *KEY]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
        assert len(srv.requests) == 2  # nothing after the refusal
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "run stopped" in proc.stderr and "refused the request" in proc.stderr
    assert not (tmp_path / "trajectories.jsonl").exists()
    summary = json.loads((tmp_path / "run.json").read_text())["this_invocation"]
    assert len(summary["errors"]) == 1 and len(summary["not_started"]) == 2
