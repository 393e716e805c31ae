"""A writable-root docker sandbox keeps its files on one filesystem, as Harbor's container does.

Terminal-Bench 2's path-tracing-reverse test renames ``/app/mystery`` to ``/tmp/mystery``: under
Harbor both live in the container's one overlay filesystem; with ``/app`` and ``/tmp`` as volumes
of their own the rename is EXDEV and the oracle scores 0. So a writable-root sandbox keeps its
writable dirs, ``/tmp`` and the home in its container layer, and the host reaches them through
overlay2's merged directory by descent (``docker_volumes.VolumeLayout``).

The attacks: in the container layer, the agent can replace ``/app`` or ``/tmp`` itself (a volume's
mount point it could not), with a link to a host path or to ``/``; nothing the host does then
(get, put, snapshot, reset) may reach a host file. And the agent's layer is committed for the
verifier, so what it planted under ``/logs`` or ``/tests`` must not reach the verifier's own dirs.
"""

from __future__ import annotations

import tarfile

import pytest

from agentpost.ingress.keys import LinkRefused
from agentpost.sandbox.base import SandboxSpec

pytestmark = pytest.mark.timeout(600)

RENAME = (
    "python3 -c \"import os; open('/app/m', 'w').write('m'); os.rename('/app/m', '/tmp/m');"
    " os.rename('/tmp/m', '/root/m'); print(open('/root/m').read())\""
)


@pytest.fixture(scope="module")
def backend(docker):
    return docker


@pytest.fixture(scope="module")
def image(python_image):
    return python_image


def _root(image: str) -> SandboxSpec:
    return SandboxSpec(image=image, writable_root=True)


def test_app_tmp_and_home_are_one_filesystem_for_the_agent_and_the_tests(backend, image):
    with backend.create(_root(image)) as box:
        r = box.exec(RENAME)
        assert (r.exit_code, r.stdout) == (0, "m\n"), r.stderr
        box.exec("echo agent > /app/mystery; echo t > /tmp/agent-tmp")
        assert box.get("/app/mystery") == b"agent\n"
        with box.verifier_sandbox() as v:
            r = v.exec(
                "python3 -c \"import os; os.rename('/app/mystery', '/tmp/mystery');"
                " print(open('/tmp/mystery').read().strip())\"; " + RENAME
            )
            assert (r.exit_code, r.stdout) == (0, "agent\nm\n"), r.stderr
            assert v.exec("cat /tmp/agent-tmp").stdout == "t\n"  # Harbor: the same container's
        assert box.exec("cat /app/mystery").stdout == "agent\n"  # the tests had a copy


def test_a_replaced_app_is_read_as_it_is_now(backend, image):
    with backend.create(_root(image)) as box:
        box.exec("echo old > /app/f")
        assert box.get("/app/f") == b"old\n"
        box.exec("rm -rf /app && mkdir /app && echo new > /app/f")
        assert box.get("/app/f") == b"new\n"
        box.put("/app/g", b"host\n")
        assert box.exec("cat /app/g").stdout == "host\n"


def test_a_writable_dir_swapped_for_a_link_to_a_host_path_never_reaches_the_host(
    backend, image, tmp_path
):
    secret = tmp_path / "secret.txt"
    secret.write_text("host only\n")
    with backend.create(_root(image)) as box:
        assert box.exec(f"rm -rf /app && ln -s {tmp_path} /app").exit_code == 0
        with pytest.raises(FileNotFoundError):
            box.get("/app/secret.txt")  # the link resolves in the sandbox: no such dir there
        try:
            box.put("/app/planted", b"x")
        except (FileNotFoundError, PermissionError):
            pass
        assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.txt"]
        with pytest.raises(LinkRefused):
            box.snapshot(str(tmp_path.parent / "snap.tar"))
        assert box.exec(f"rm /app && ln -s / /app && rm -rf /tmp && ln -s {tmp_path} /tmp"
                        " && rm -rf /root && ln -s / /root").exit_code == 0  # fmt: skip
        box.reset_private()  # /tmp and the home: fresh dirs again, the host's untouched
        assert box.exec("stat -c '%F %a' /tmp /root").stdout == "directory 1777\ndirectory 700\n"
        assert box.exec("ls -A /tmp /root").stdout == "/root:\n\n/tmp:\n"
        assert secret.read_text() == "host only\n"
        assert box.exec("test -x /bin/sh && echo ok").stdout == "ok\n"  # "/" not emptied
    assert secret.read_text() == "host only\n"


def test_what_the_agent_plants_in_logs_and_tests_never_reaches_the_verifier(backend, image):
    with backend.create(_root(image)) as box:
        box.exec("mkdir -p /logs/verifier /tests; echo 1 > /logs/verifier/reward.txt;"
                 " echo stale > /tests/conftest.py; echo agent > /app/a.txt")  # fmt: skip
        with box.verifier_sandbox() as v:
            r = v.exec("cat /app/a.txt; find /tests /logs -type f | wc -l")
            assert r.stdout.split() == ["agent", "0"], r.stdout


def test_snapshot_and_restore_of_a_writable_root_sandbox_are_exact(backend, image, tmp_path):
    with backend.create(_root(image)) as box:
        box.exec("echo v1 > /app/f; mkdir -p /logs/x; echo l > /logs/x/y; echo t > /tmp/t")
        snap = box.snapshot(str(tmp_path / "s.tar"))
        box.exec("echo v2 > /app/f")
    with tarfile.open(snap.path) as tar:
        names = set(tar.getnames())
    assert {"app/f", "logs/x/y"} <= names and not any(n.startswith("tmp") for n in names)
    with backend.restore(snap) as again:
        assert again.exec("cat /app/f /logs/x/y").stdout == "v1\nl\n"
        assert again.exec("ls /tmp").stdout == ""  # /tmp is not part of a snapshot


def test_the_link_sweep_covers_the_agents_tmp_that_the_tests_share(backend, image, tmp_path):
    """A link the agent leaves in its /tmp (the tests' /tmp here) into /logs is removed before
    the tests run: a test writing /tmp/out cannot write the reward through it."""
    from agentpost.tasks.verifier import run_tests

    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test.sh").write_text(
        "echo 0 > /logs/verifier/reward.txt; echo 1 > /tmp/out 2>/dev/null; echo 1 > ~/out\n"
    )
    with backend.create(_root(image)) as box:
        box.exec("ln -s /logs/verifier/reward.txt /tmp/out; ln -s /logs/verifier/reward.txt ~/out")
        run = run_tests(box, tests_dir=tests, extra={}, command="bash /tests/test.sh", cwd="/app",
                        timeout_s=60, env={}, reads=("reward.txt",), exec_kw={})  # fmt: skip
    assert run.problem is None and run.removed_links == 2, run
    assert run.files["reward.txt"] == b"0\n"
