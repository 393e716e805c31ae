"""The docker backend's persistent executor (issue 18, item 1): the container's PID 1 runs every
exec (no ``docker exec``), out of reach of the agent's commands, even as root with Docker's
default capabilities; restarted when the container dies; the keeper + ``docker exec`` path
stays for images without python3. Runs wherever a daemon answers (CI starts one)."""

from __future__ import annotations

import json
import threading

import pytest
from sandbox_testkit import PLANT, wait_until

from agentpost.errors import InfraError
from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.docker import DockerBackend

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    docker = DockerBackend()
    if not docker.available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    return docker


@pytest.fixture(scope="module")
def image(backend) -> str:
    from agentpost.sandbox.images import ensure_base

    return ensure_base(backend, "python")


PROBE = r"""
import ctypes, json, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def attack(pid):
    got = []
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            os.close(os.open(f"/proc/{pid}/fd/{n}", os.O_WRONLY | os.O_NONBLOCK))
            got.append(f"fd{n}")
        except OSError:
            pass
    try:
        with open(f"/proc/{pid}/mem", "rb"):
            got.append("mem")
    except OSError:
        pass
    return got
sibling = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
print(json.dumps({"executor": attack(1), "sibling": attack(sibling.pid)}))
sibling.kill()
"""


def test_the_container_runs_every_exec_through_one_unreachable_executor(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        assert box.executor is not None
        got = json.loads(box.exec(["python3", "-c", PROBE]).stdout)
        assert got["executor"] == [] and "fd1" in got["sibling"] and "mem" in got["sibling"]
        r = box.exec("for s in KILL STOP TERM INT; do kill -$s 1; done; kill -9 -1; echo survived")
        assert (r.exit_code, r.stdout) == (0, "survived\n"), r
        box.exec("sleep 300 & setsid sleep 301 & echo started")
        procs = box.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").stdout
        assert "sleep 30" not in procs  # background processes died with their exec
        assert box.executor.starts == 1


def test_a_killed_container_comes_back_with_its_files(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        box.exec("echo kept > /app/f")
        backend.cli("kill", box.name, timeout_s=60)  # as the OOM killer or an operator would
        assert wait_until(lambda: not box.executor.server.alive(), 30)  # its stream ends
        assert box.exec("cat /app/f").stdout == "kept\n"
        assert box.executor.starts == 2
        box.reset_private()
        assert box.exec("ls -A /tmp").stdout == ""


def test_a_container_killed_mid_command_is_an_infra_error_not_the_commands_result(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        box.exec("true")
        killer = threading.Timer(1.0, backend.cli, ("kill", box.name), {"timeout_s": 60})
        killer.start()
        with pytest.raises(InfraError, match="executor ended during a command"):
            box.exec("sleep 60", timeout_s=120)
        killer.join()
        assert box.exec("echo ok").stdout == "ok\n" and box.executor.starts == 2


def test_closing_the_container_mid_command_is_a_cancel_not_an_infra_error(backend, image):
    """``close`` from another thread while a command runs (a stop): the exec returns as
    killed="cancelled", as on bwrap (it used to raise InfraError, which retries a rollout)."""
    box = backend.create(SandboxSpec(image=image))
    box.exec("true")
    closer = threading.Timer(1.0, box.close)
    closer.start()
    r = box.exec("sleep 30", timeout_s=60)
    closer.join()
    assert (r.exit_code, r.killed) == (137, "cancelled")


def test_a_command_that_prints_dockers_errors_is_not_an_infra_error(backend, image):
    """The executor path runs no ``docker exec``: docker's own error text on a command's stderr
    (with exit 125-127) is that command's output, so a policy cannot turn a failure into an
    infrastructure fault that would be retried instead of scored."""
    with backend.create(SandboxSpec(image=image)) as box:
        for code in (125, 126, 127):
            r = box.exec(f"echo 'Error response from daemon: No such container' >&2; exit {code}")
            assert r.exit_code == code and "Error response" in r.stderr


def test_a_restarted_container_executor_runs_nothing_the_agent_planted(backend, image):
    """As root in the container: plant modules, try to overwrite the interpreter, get the
    container restarted. Armed: an ordinary python3 in the container does run the plant."""
    with backend.create(SandboxSpec(image=image)) as box:
        r = box.exec(["python3", "-c", PLANT])
        assert r.exit_code == 0, r.stderr
        r = box.exec('echo x > "$(command -v python3)"; touch /usr/lib/pwned')
        assert r.stderr.count("Read-only file system") == 2, r.stderr
        backend.cli("kill", box.name, timeout_s=60)
        assert wait_until(lambda: not box.executor.server.alive(), 30)
        r = box.exec("echo after restart")
        assert r.stdout == "after restart\n" and box.executor.starts == 2
        with pytest.raises(FileNotFoundError):
            box.get("/app/pwned")
        box.exec(["python3", "-c", "pass"])  # the positive control: the plant is live
        assert box.get("/app/pwned") == b"x"


def test_an_image_without_python_falls_back_to_docker_exec(backend):
    from agentpost.sandbox.images import ensure_base

    with backend.create(SandboxSpec(image=ensure_base(backend, "minimal"))) as box:
        assert box.executor is None
        r = box.exec("echo $0; sleep 300 & echo started")
        assert r.stdout == "bash\nstarted\n"
        assert r.strays == 1  # what it left running is counted (then killed), as the executor does
        procs = box.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
        assert "sleep 300" not in procs.stdout and procs.strays == 0
