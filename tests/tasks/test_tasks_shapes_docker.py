"""Harbor's container semantics on docker, on small tasks of each shape the real sets have
(tests/tasks/fixtures/harbor-shapes, written for agentpost): a Terminal-Bench 2 verifier on
Python 3.13 (``uvx -p 3.13`` with no network), a compose service reached by its name, an
ENTRYPOINT that ignores its command, installs at solve time (apt, pip, npm) served offline, a
service the solution leaves running; and ``tasks check`` naming what cannot be served."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentpost.cli import _register, app
from agentpost.tasks.loader import load_suite, load_task

SHAPES = Path(__file__).resolve().parent / "fixtures" / "harbor-shapes"
KEEP = "service-left-running"  # the verifier keeps the servers the agent left (#26 B)


@pytest.mark.timeout(2400)
def test_every_shape_grades_oracle_1_and_nop_0_on_docker(docker):
    from agentpost.tasks.check import check_suite

    tasks = [t for t in load_suite(SHAPES) if t.id != KEEP]
    result = check_suite(tasks, docker, workers=2)
    rows = {
        r["id"]: (r["oracle_reward"], r["nop_reward"], r.get("errors")) for r in result["tasks"]
    }
    assert {t.id for t in tasks} == {
        "py313-verifier", "compose-service", "entrypoint-server", "solve-installs", "npm-install"
    }  # fmt: skip
    assert all(v[:2] == (1.0, 0.0) for v in rows.values()), rows
    assert all(r["unservable"] == [] for r in result["tasks"]), result["tasks"]


@pytest.mark.timeout(600)
def test_a_server_the_solution_leaves_running_is_there_for_the_tests(docker):
    from agentpost.tasks.check import check_task

    row = check_task(load_task(SHAPES / KEEP), docker)
    assert (row["oracle_reward"], row["nop_reward"]) == (1.0, 0.0), row


@pytest.mark.timeout(600)
def test_the_container_is_harbors(docker):
    """WORKDIR is the cwd, the root is writable and private, the image's ENTRYPOINT did not
    delay the start, [environment] memory = "2G" and cpus are the container's limits."""
    from agentpost.tasks.evaluate import spec_for

    task = load_task(SHAPES / "entrypoint-server")
    spec = spec_for(task, backend=docker)
    assert spec.writable_root and spec.workdir == "/app"
    t0 = time.monotonic()
    with docker.create(spec) as sb:
        started = time.monotonic() - t0
        assert sb.exec("pwd").stdout.strip() == "/app"
        assert sb.exec("echo x > /etc/agentpost-probe && cat /etc/agentpost-probe").stdout == "x\n"
        name = sb.name
    assert started < 20, started  # the executor replaced the ENTRYPOINT: no wait for it
    left = docker.cli("ps", "-a", "--filter", f"name={name}", "--format", "{{.Names}}",
                      timeout_s=30)  # fmt: skip
    assert left.strip() == ""  # the sandbox and its entrypoint service are gone
    big = load_task(SHAPES / "py313-verifier")  # memory = "2G", cpus = 1, storage = "10G"
    lim = spec_for(big, backend=docker).limits
    assert (lim.memory_bytes, lim.cpus, lim.disk_bytes) == (2 << 30, 1.0, 10 << 30)
    assert lim.file_bytes == 10 << 30  # no per-file limit below the disk (uvx copies torch's libs)
    with docker.create(spec_for(big, backend=docker)) as sb:
        inspect = json.loads(docker.cli("inspect", sb.name, timeout_s=30))[0]["HostConfig"]
        assert (inspect["Memory"], inspect["NanoCpus"]) == (2 << 30, 10**9)
        assert sb.exec("test -f /etc/agentpost-probe").exit_code != 0  # a root of its own


def _check_shape_with(suite: Path, shape: str, rel: str, text: str):
    """``agentpost tasks check`` on docker of a copy of ``shape`` whose file ``rel`` reads
    ``text`` (the only task of ``suite``)."""
    task = suite / shape
    shutil.copytree(SHAPES / shape, task)
    (task / rel).write_text(text)
    _register()
    return CliRunner().invoke(app, ["tasks", "check", "--suite", str(suite), "--backend", "docker"])


@pytest.mark.timeout(900)
def test_tasks_check_names_what_cannot_be_served(docker, tmp_path):
    out = _check_shape_with(
        tmp_path, "solve-installs", "solution/solve.sh",
        "#!/bin/bash\napt-get update\napt-get install -y no-such-package-agentpost\n"
        "pip install agentpost-no-such-wheel==1.0\n",
    )  # fmt: skip
    assert out.exit_code == 1, out.stdout
    assert "cannot serve apt no-such-package-agentpost" in out.stdout
    assert "this release has no package no-such-package-agentpost" in out.stdout
    assert "cannot serve pip agentpost-no-such-wheel==1.0" in out.stdout


@pytest.mark.timeout(900)
def test_a_pin_the_release_lacks_is_served_by_its_own_version_and_said(docker, tmp_path):
    """Ubuntu's ``jq=1.7.1-3build1`` (noble's build): Debian's jq, installed under the pin."""
    task = tmp_path / "ubuntu-pin"
    shutil.copytree(SHAPES / "solve-installs", task)
    solve = (task / "solution" / "solve.sh").read_text()
    solve = solve.replace("--no-install-recommends jq", "--no-install-recommends jq=1.7.1-3build1")
    (task / "solution" / "solve.sh").write_text(solve)
    _register()
    out = CliRunner().invoke(
        app, ["tasks", "check", "--suite", str(tmp_path), "--backend", "docker"]
    )
    assert out.exit_code == 0, out.stdout
    assert "note: apt jq=1.7.1-3build1 is not in this release: served this release has jq" in (
        out.stdout
    )


@pytest.mark.timeout(1200)
def test_a_scripted_agent_installs_offline_what_the_solution_installs(docker, tmp_path):
    """``agentpost run`` with the careful policy (it runs the solution's commands as its own
    turns): apt-get, pip and npm install from the image's offline caches, no network."""
    _register()
    args = ["run", "--suite", str(SHAPES), "--task", "solve-installs", "--task", "npm-install"]
    args += ["--policy", "careful", "--backend", "docker", "-o", str(tmp_path / "run"), "--json"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.stdout
    doc = json.loads(out.stdout[out.stdout.index('{"format"') :])
    assert doc["agents"]["scripted/careful"] == {
        "finished": 2, "resolved": 2, "resolution_rate": 1.0
    }  # fmt: skip
    lines = (tmp_path / "run" / "trajectories.jsonl").read_text()
    assert "apt-get install" in lines and "file:/opt/agentpost/apt" in lines


@pytest.mark.timeout(1200)
def test_pip_installs_from_an_index_the_sandbox_itself_serves(docker):
    """TB2's pypi-server: the solution runs a PyPI server on localhost:8080 and the tests
    ``pip install --index-url http://localhost:8080/simple vectorops``; the offline pip config
    must not hide that index (``PIP_NO_INDEX`` did), while served wheels still install."""
    from agentpost.sandbox.base import SandboxSpec
    from agentpost.tasks.images import ensure_image

    tag = ensure_image(load_task(SHAPES / "solve-installs"), docker)
    with docker.create(SandboxSpec(image=tag, writable_root=True)) as box:
        # Debian's own setuptools wheel (not the version served offline) on a local index
        local = (
            "set -e; whl=$(ls /usr/share/python-wheels/setuptools-*.whl); "
            "v=$(basename $whl | cut -d- -f2); mkdir -p /tmp/idx/simple/setuptools; "
            "cp $whl /tmp/idx/simple/setuptools/; cd /tmp/idx; "
            "python3 -m http.server 8080 >/dev/null 2>&1 & sleep 2; "
            "python3 -m pip install --index-url http://localhost:8080/simple setuptools==$v"
        )
        r = box.exec(local, user="0", timeout_s=120)
        assert r.exit_code == 0 and "Successfully installed setuptools" in r.stdout, r
        r = box.exec("python3 -m pip install --force-reinstall wheel", user="0", timeout_s=120)
        assert r.exit_code == 0 and " wheel-" in r.stdout.split("Successfully installed")[-1], r
        assert "ignored" not in r.stdout + r.stderr, r  # the served wheel is on the local index


@pytest.mark.timeout(900)
def test_tasks_check_names_a_python_the_image_lacks(docker, tmp_path):
    """TB2's mailman: ``uv venv -p 3.12`` in test.sh (Ubuntu 24.04's Python); the Debian 13
    base has 3.13 only and uv may not download one offline. ``tasks check`` says so: never a
    bare oracle 0. (Only that line of mailman's test.sh, so the build stays small.)"""
    out = _check_shape_with(
        tmp_path, "py313-verifier", "tests/test.sh",
        "#!/bin/bash\nuv venv -p 3.12 .tb && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n",
    )  # fmt: skip
    assert out.exit_code == 1, out.stdout
    assert "cannot serve Python 3.12 (uv venv -p 3.12): tests/test.sh asks Python 3.12" in (
        out.stdout
    )
    assert "has Python 3.13 only; uv cannot download interpreters offline" in out.stdout
