"""Stopping a run and sharing its directory: Ctrl-C, SIGTERM and SIGHUP stop promptly even while
a model request hangs, and leave no sandbox behind; a second writer is refused; a killed run
leaves no stuck lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentpost.agent.loopback import LoopbackServer
from agentpost.sandbox.registry import get_backend

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
ENV = {**os.environ, "AGENTPOST_TEST_KEY": "k"}


def _model_run(srv: LoopbackServer, out: Path) -> list[str]:
    return [*CLI, "run", "--model", "loopback", "--base-url", srv.url, "--api-key-env",
            "AGENTPOST_TEST_KEY", "--task", "csv-to-json", "-G", "3", "--workers", "1",
            "--request-timeout", "120", "-o", str(out)]  # fmt: skip


def _wait_for(predicate, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def _sandboxes_of(pid: int) -> list[str]:
    base = Path(BACKEND.base_dir)
    return [p.name for p in base.glob(f"sbx-{pid}-*")] if base.exists() else []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_a_hanging_request_promptly_and_cleans_up(tmp_path: Path, sig) -> None:
    with LoopbackServer(lambda body: {"content": "unused"}) as srv:
        srv.fail(*["hang"] * 10)
        proc = subprocess.Popen(
            _model_run(srv, tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=ENV,
        )  # fmt: skip
        _wait_for(lambda: len(srv.requests) >= 1)  # the first model call is hanging now
        assert _sandboxes_of(proc.pid), "the rollout's sandbox should exist while it runs"
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    assert proc.returncode == 128 + sig and took < 5, (proc.returncode, took, stderr)
    assert "Traceback" not in stderr and "run the same command again to resume" in stderr
    assert _sandboxes_of(proc.pid) == []
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["this_invocation"]["interrupted"] is True
    assert summary["this_invocation"]["ran"] == 0 and not summary["this_invocation"]["errors"]
    assert not (tmp_path / "trajectories.jsonl").exists()  # the hung rollout is not an outcome


def test_a_second_writer_is_refused_and_a_killed_run_leaves_no_stuck_lock(tmp_path: Path) -> None:
    with LoopbackServer(lambda body: {"content": "unused"}) as srv:
        srv.fail(*["hang"] * 10)
        first = subprocess.Popen(
            _model_run(srv, tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=ENV,
        )  # fmt: skip
        _wait_for(lambda: len(srv.requests) >= 1)
        second = subprocess.run(
            _model_run(srv, tmp_path), capture_output=True, text=True, timeout=60, env=ENV
        )
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert second.returncode == 2, second.stderr
    assert f"another agentpost process (pid {first.pid}) is writing" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    third = subprocess.run(
        [*CLI, "run", "--policy", "careful", "--task", "csv-to-json", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert third.returncode == 0, third.stderr
    assert len((tmp_path / "trajectories.jsonl").read_text().splitlines()) == 1


def _running(cmdline: bytes) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == cmdline:
                    return True
        except OSError:
            continue
    return False


def test_a_stop_does_not_wait_for_a_long_command_in_flight(tmp_path: Path) -> None:
    """The agent runs `sleep 41.7` (60 s command timeout); SIGTERM kills it and the run ends in
    seconds, its sandbox gone, nothing written."""
    marker = f"41.{os.getpid() % 1000}"
    sleep = {"tool_calls": [{"name": "bash", "arguments": {"command": f"exec sleep {marker}"}}]}
    with LoopbackServer(lambda body: sleep) as srv:
        cmd = [*_model_run(srv, tmp_path), "--command-timeout", "60"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=ENV)  # fmt: skip
        _wait_for(lambda: _running(f"sleep\0{marker}\0".encode()))
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    assert proc.returncode == 143 and took < 5, (took, stderr)
    assert not _running(f"sleep\0{marker}\0".encode()) and _sandboxes_of(proc.pid) == []
    assert not (tmp_path / "trajectories.jsonl").exists()


def test_ctrl_c_of_a_scripted_run_says_interrupted_not_check_base_url(tmp_path: Path) -> None:
    """Without a model there is no --base-url to check: Ctrl-C says the run was interrupted and
    leaves no lock file behind."""
    cmd = [*CLI, "run", "--policy", "wasteful", "--task", "csv-to-json", "--task", "greet-cli",
           "-G", "3", "--workers", "1", "-o", str(tmp_path)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: bool(_sandboxes_of(proc.pid)))  # the backend check, then rollouts
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "check --base-url" not in stderr and "model unavailable" not in stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not (tmp_path / ".agentpost.lock").exists()
