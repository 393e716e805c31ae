"""The docker backend keeps the sandbox contract, on a real daemon with an offline base image.

Runs wherever a daemon answers (CI starts one: scripts/dockerd.sh); the base image is built on
first use (debootstrap + docker import, about a minute) and cached by content hash.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentpost.errors import InfraError
from agentpost.sandbox.base import Limits, SandboxSpec
from agentpost.sandbox.docker import LABEL, DockerBackend

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


def _containers(backend, owner: str) -> list[str]:
    out = backend.cli("ps", "-aq", "--filter", f"label={LABEL}={owner}", timeout_s=30)
    return out.split()


def test_available_is_false_for_a_missing_cli():
    assert DockerBackend(binary="/nonexistent/docker").available() is False


def test_exec_files_timeout_and_background(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        r = box.exec("pwd; echo err >&2; exit 3")
        assert (r.exit_code, r.stdout, r.stderr) == (3, "/app\n", "err\n")
        assert box.exec(["cat"], stdin=b"in put").stdout == "in put"
        assert box.exec("echo $X", env={"X": "y"}).stdout == "y\n"
        box.put("/app/a/b.txt", b"hi")
        assert box.exec("cat a/b.txt").stdout == "hi"
        box.exec("echo out > /app/o.txt")
        assert box.get("/app/o.txt") == b"out\n"
        t0 = time.monotonic()
        r = box.exec("sleep 30", timeout_s=1)
        assert r.timed_out and r.exit_code is None and time.monotonic() - t0 < 10
        box.exec("sleep 300 & echo started")
        procs = box.exec("for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done")
        assert "sleep 300" not in procs.stdout and procs.exit_code == 0
        assert box.exec("touch /usr/x").exit_code != 0  # read-only root
        box.exec("ln -s /etc/passwd /app/link")
        with pytest.raises(PermissionError):
            box.get("/app/link")  # a hostile link never reaches a host file
        with pytest.raises(PermissionError):
            box.put("/app/link", b"x")


def test_output_is_capped(backend, image):
    spec = SandboxSpec(image=image, limits=Limits(output_bytes=1000))
    with backend.create(spec) as box:
        r = box.exec("head -c 50000 /dev/zero | tr '\\0' a; echo done >&2")
        assert r.truncated and len(r.stdout) == 1000 and r.stderr == "done\n"


def test_no_network_and_network_refused(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        r = box.exec(
            ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 80), 3)"]
        )
        assert r.exit_code != 0
        assert box.exec("ls /sys/class/net").stdout.split() == ["lo"]
    with pytest.raises(InfraError, match="network"):
        backend.create(SandboxSpec(image=image, network=True))


def test_limits_hold(backend, image):
    lim = Limits(processes=64, memory_bytes=256 << 20, file_bytes=1 << 20)
    with backend.create(SandboxSpec(image=image, limits=lim)) as box:
        bomb = box.exec("for i in $(seq 200); do sleep 5 & done 2>&1; wait", timeout_s=30)
        assert "fork" in bomb.stdout + bomb.stderr or "retry" in bomb.stdout + bomb.stderr
        mem = box.exec(["python3", "-c", "b = bytearray(600 << 20); print(len(b))"])
        assert mem.exit_code != 0
        big = box.exec("head -c 3000000 /dev/zero > /app/big")
        assert big.exit_code != 0 and box.fs.stat("/app/big").st_size <= 1 << 20


def test_the_disk_quota_holds_for_a_writable_root_and_the_volumes(backend, image):
    """Harbor's storage limit: what a sandbox writes (container layer and volumes together,
    not what the image brought) past ``disk_bytes`` ends the command as "disk quota"."""
    lim = Limits(disk_bytes=40 << 20, file_bytes=1 << 30)
    with backend.create(SandboxSpec(image=image, limits=lim, writable_root=True)) as box:
        ok = box.exec("head -c 10000000 /dev/zero > /app/a && head -c 10000000 /dev/zero > /b")
        assert ok.exit_code == 0 and ok.killed is None
        fill = box.exec("for i in $(seq 30); do head -c 5000000 /dev/zero > /opt/f$i; sleep 0.3;"
                        " done", timeout_s=60)  # fmt: skip
        assert fill.killed == "disk quota", fill
        assert box.exec("echo still > /app/x && cat /app/x").stdout == "still\n"


def test_snapshot_restore_is_exact(backend, image, tmp_path):
    with backend.create(SandboxSpec(image=image)) as box:
        box.exec("echo v1 > /app/f; mkdir -p /logs/x; echo l > /logs/x/y; echo t > /tmp/t")
        snap = box.snapshot(str(tmp_path / "s.tar"))
        box.exec("echo v2 > /app/f")
    with backend.restore(snap) as again:
        assert again.exec("cat /app/f /logs/x/y").stdout == "v1\nl\n"
        assert again.exec("ls /tmp").stdout == ""  # /tmp is not part of a snapshot


def test_image_contents_and_users_start_the_sandbox(backend, image, tmp_path):
    from agentpost.sandbox.images import build

    tag = "agentpost-test-seeded:1"
    dockerfile = f"""FROM {image}
RUN useradd --create-home agent && mkdir -p /app/src && echo seed > /app/src/a.txt \\
    && chown -R agent:agent /app && echo home > /root/.marker
"""
    build(backend, tag, dockerfile, None, 300)
    with backend.create(SandboxSpec(image=tag, user="agent")) as box:
        assert box.exec("whoami").stdout == "agent\n"
        assert box.exec("whoami", user="0").stdout == "root\n"
        assert box.exec("cat /app/src/a.txt; stat -c %U /app/src").stdout == "seed\nagent\n"
        assert box.exec("touch /app/new && echo ok").stdout == "ok\n"
        assert box.exec("echo x > /logs/agent/log && echo ok").stdout == "ok\n"
        assert box.exec("cat /root/.marker", user="0").stdout == "home\n"
        with pytest.raises(InfraError):
            box.exec("true", user="nobody-here")


def test_sandboxes_run_side_by_side(backend, image):
    def job(i: int) -> str:
        with backend.create(SandboxSpec(image=image)) as box:
            box.exec(f"echo {i} > /app/me; sleep 1")
            return box.exec("cat /app/me; ls /app").stdout

    t0 = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(job, range(4)))
    assert outs == [f"{i}\nme\n" for i in range(4)]
    assert time.monotonic() - t0 < 30


def test_a_killed_run_leaves_no_container(backend, image, tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        from agentpost.sandbox.base import SandboxSpec
        from agentpost.sandbox.docker import DockerBackend
        b = DockerBackend()
        box = b.create(SandboxSpec(image={image!r}))
        print(b.owner, flush=True)
        time.sleep(300)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env)
    owner = proc.stdout.readline().decode().strip()
    assert owner and _containers(backend, owner)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while _containers(backend, owner) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _containers(backend, owner) == []


def test_a_rerun_removes_containers_of_dead_owners(backend, image):
    dead = "999999999-1"  # no such pid
    backend.cli(
        "run", "-d", "--network", "none", "--label", f"{LABEL}={dead}", image, "sleep", "300",
        timeout_s=60,
    )  # fmt: skip
    assert _containers(backend, dead)
    assert DockerBackend().prune_stale() >= 1
    assert _containers(backend, dead) == []


def test_reset_private_leaves_fresh_tmp_and_home(backend, image):
    with backend.create(SandboxSpec(image=image)) as box:
        box.exec("echo x > /tmp/planted; mkdir -p /root/.local/lib && echo y > /root/.pyrc")
        box.exec("echo z > /app/kept")
        box.reset_private()
        assert box.exec("ls -A /tmp /root").stdout == "/root:\n\n/tmp:\n"
        assert box.exec("cat /app/kept; stat -c %a /tmp").stdout == "z\n1777\n"


@pytest.mark.parametrize("base", ["python", "python@trixie"])
def test_the_python_bases_have_pythons_headers_as_the_python_images_do(backend, base):
    """A python:X image ships CPython's headers, so a task's tests can build a C extension
    (TB2's feal-differential-cryptanalysis runs ``setup.py build_ext`` against 3.13)."""
    from agentpost.sandbox.images import ensure_base

    with backend.create(SandboxSpec(image=ensure_base(backend, base))) as box:
        where = "import sysconfig; print(sysconfig.get_paths()['include'])"
        r = box.exec(f'test -f "$(python3 -c "{where}")/Python.h" && echo found')
        assert r.stdout == "found\n", r


@pytest.mark.parametrize("base", ["python", "python@trixie"])
def test_pip_can_upgrade_pip_setuptools_and_wheel_in_the_python_bases(backend, base):
    """``pip install --upgrade pip==X`` (TB2's pypi-server Dockerfile, rstan-to-pystan's solution)
    works in a python:X image; a dpkg-installed pip has no RECORD, so pip cannot replace it."""
    from agentpost.sandbox.images import ensure_base

    spec = SandboxSpec(image=ensure_base(backend, base), writable_root=True)
    with backend.create(spec) as box:
        owned = """import importlib.metadata as m
for name in ("pip", "setuptools", "wheel"):
    try:
        print(name, bool(m.files(name)))  # None: no RECORD, pip cannot uninstall it
    except m.PackageNotFoundError:
        pass
"""
        r = box.exec(["python3", "-c", owned])
        assert r.exit_code == 0 and "False" not in r.stdout, r
        wheels = "--no-index --find-links /usr/share/python-wheels --force-reinstall pip"
        r = box.exec(f"python3 -m pip install {wheels} && pip --version", user="0")
        assert r.exit_code == 0 and "/usr/local/" in r.stdout, r


def test_a_task_asking_more_cpus_than_the_host_has_gets_them_all(backend, image):
    """TB2's rstan-to-pystan asks ``cpus = 4``; docker refuses ``--cpus`` above the host's count
    (here 2), so the sandbox never started. More CPUs than the host has is no bound at all."""
    spec = SandboxSpec(image=image, limits=Limits(cpus=float((os.cpu_count() or 1) + 2)))
    with backend.create(spec) as box:
        assert box.exec("echo ok").stdout == "ok\n"
