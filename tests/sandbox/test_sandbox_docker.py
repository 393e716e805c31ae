"""The docker backend keeps the same contract; skipped when no Docker/Podman daemon answers."""

from __future__ import annotations

import os

import pytest

from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.docker import DockerBackend

IMAGE = os.environ.get("AGENTPOST_DOCKER_IMAGE", "python:3.11-slim")


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    docker = DockerBackend()
    if not docker.available():
        pytest.skip("no Docker/Podman daemon answers (scripts/docker-smoke.sh covers it by hand)")
    return docker


def test_available_is_false_for_a_missing_cli():
    assert DockerBackend(binary="/nonexistent/docker").available() is False


def test_exec_files_timeout_and_background(backend):
    with backend.create(SandboxSpec(image=IMAGE)) as box:
        r = box.exec("pwd; echo err >&2; exit 3")
        assert (r.exit_code, r.stdout, r.stderr) == (3, "/app\n", "err\n")
        box.put("/app/a/b.txt", b"hi")
        assert box.exec("cat a/b.txt").stdout == "hi"
        r = box.exec("sleep 30", timeout_s=1)
        assert r.timed_out and r.exit_code is None
        box.exec("sleep 300 & echo started")
        procs = box.exec("for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done")
        assert "sleep 300" not in procs.stdout and procs.exit_code == 0
        assert box.exec("touch /usr/x").exit_code != 0  # read-only root


def test_network_off_and_snapshot_restore(backend, tmp_path):
    with backend.create(SandboxSpec(image=IMAGE)) as box:
        r = box.exec(
            ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 80), 3)"]
        )
        assert r.exit_code != 0
        box.exec("echo v1 > /app/f")
        snap = box.snapshot(str(tmp_path / "s.tar"))
    with backend.restore(snap) as again:
        assert again.exec("cat /app/f").stdout == "v1\n"
