"""Red team of the writable-root docker sandbox (#27): the agent's root is committed for the tests.

With ``writable_root`` the verifier's container runs on ``docker commit`` of the agent's layer,
so every top-level name of its root is the agent's to choose, not only ``/app``: a link
``/peek -> /tests``, an ``/app`` that is a link to ``/logs``, or a ``/logs`` that is a link into
``/app`` (docker then mounts the verifier's fresh ``/logs`` volume *inside* the agent's dir).
Code the tests run through ``as-agent`` may still not read ``/tests`` or write ``/logs``
(``docs/threat-model.md``, Verifier), and the reward the host reads is the tests' alone.

And the tests must see the agent's root as the agent left it: a commit is skipped only when the
layer holds nothing of the agent's (an ``/app`` emptied by ``rm -rf /app && mkdir /app``, or
re-moded, looked unchanged and the tests got the image's ``/app`` back).
"""

from __future__ import annotations

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InfraError
from agentpost.sandbox.base import SandboxSpec

pytestmark = pytest.mark.timeout(600)

SECRET = "expected-answer-42"


def _grade(box, tmp_path, script: str):
    from agentpost.tasks.verifier import run_tests

    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "expected.txt").write_text(SECRET + "\n")
    (tests / "test.sh").write_text(script)
    return run_tests(box, tests_dir=tests, extra={}, command="bash /tests/test.sh", cwd="/",
                     timeout_s=120, env={}, reads=("reward.txt", "seen.txt"),
                     exec_kw={})  # fmt: skip


# the tests write 0, then run the agent's code through as-agent, as a bundled suite does
AS_AGENT_TRIES = """
echo 0 > /logs/verifier/reward.txt
"$AGENTPOST_AS_AGENT" sh -c '{code}' > /logs/verifier/seen.txt 2>&1
exit 0
"""


def test_a_top_level_link_into_tests_or_logs_gives_agent_code_nothing(
    docker, python_image, tmp_path
):
    """``/peek -> /tests`` and ``/drop -> /logs`` in the agent's root: as-agent granted read on
    every top-level name it found, following the link to the hidden dirs."""
    code = (
        "cat /peek/expected.txt; echo 1 > /drop/verifier/reward.txt; ls /peek /drop/verifier; true"
    )
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        assert box.exec("ln -s /tests /peek && ln -s /logs /drop").exit_code == 0
        run = _grade(box, tmp_path, AS_AGENT_TRIES.format(code=code))
    assert run.problem is None, run.problem
    assert run.files["reward.txt"] == b"0\n", run.files
    assert SECRET not in run.files["seen.txt"].decode(), run.files["seen.txt"]
    assert "test.sh" not in run.files["seen.txt"].decode(), run.files["seen.txt"]


def test_an_agent_dir_replaced_by_a_link_to_logs_is_not_writable_by_agent_code(
    docker, python_image, tmp_path
):
    """``/app -> /logs``: as-agent's write rule for the agent's dir ``/app`` followed the link
    and gave agent code ``/logs/verifier``."""
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        assert box.exec("cd / && rm -rf /app && ln -s /logs /app", cwd="/").exit_code == 0
        run = _grade(box, tmp_path, AS_AGENT_TRIES.format(code="echo 1 > /app/verifier/reward.txt"))
    assert run.files.get("reward.txt") == b"0\n", run.files


def test_a_logs_link_never_puts_the_verifiers_logs_in_reach_of_agent_code(
    docker, python_image, tmp_path
):
    """``/logs -> /app/L`` (and ``/tests -> /app/T``) in the agent's root: docker mounts the
    verifier's fresh volume where the link leads, inside the agent's dir, where as-agent may
    write (and read). Either the verifier refuses that root (the agent's 0 by the outcome rules:
    a control in a fresh sandbox is clean), or the reward stays the tests'."""
    code = "cat /app/T/expected.txt; echo 1 > /app/L/verifier/reward.txt; true"
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        setup = "mkdir -p /app/L /app/T && rm -rf /logs /tests && ln -s /app/L /logs"
        assert box.exec(setup + " && ln -s /app/T /tests").exit_code == 0
        try:
            run = _grade(box, tmp_path, AS_AGENT_TRIES.format(code=code))
        except InfraError as e:
            assert "/logs" in str(e) or "/tests" in str(e), e
            return
    assert run.files.get("reward.txt") == b"0\n", run.files
    assert SECRET not in str(run.files.get("seen.txt")), run.files


@pytest.mark.parametrize(
    "change, look",
    [
        ("rm -rf /app && mkdir /app", "ls -A /app"),  # an opaque, empty dir in the layer
        ("chmod 0700 /app", "stat -c %a /app"),
        ("rm -rf /app && ln -s /srv /app", "readlink /app"),
    ],
)
def test_the_tests_see_the_agents_root_as_the_agent_left_it(docker, python_image, change, look):
    """An image whose ``/app`` holds a file: what the agent did to ``/app`` itself (emptied and
    made again, re-moded, replaced by a link) is what the tests see, not the image's ``/app``."""
    from agentpost.sandbox.docker_verifier import _commit

    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as seed:
        seed.exec("mkdir -p /app && echo image > /app/from-image && chmod 755 /app")
        task_image = _commit(seed)
    try:
        spec = SandboxSpec(image=task_image, writable_root=True, writable_dirs=("/app",))
        with docker.create(spec) as box:  # (no /logs: setup writes nothing in the layer)
            assert box.exec(f"cd / && {change}", cwd="/").exit_code == 0
            seen = box.exec(look, cwd="/").stdout
            with box.verifier_sandbox() as v:
                assert v.exec(look, cwd="/").stdout == seen
    finally:
        docker.cli("rmi", "-f", task_image, timeout_s=120, check=False)


def test_a_planted_harness_path_never_lets_agent_code_rewrite_as_agent(
    docker, python_image, tmp_path
):
    """``/run/agentpost/as-agent -> /app/as`` in the agent's root (a writable root has no fresh
    ``/run``): the harness installed as-agent through the link into the agent's dir, where the
    first call's agent code rewrote it, and the second call then ran with the tests' powers."""
    first = 'chmod 755 /app/as; printf "#!/bin/sh\\nexec \\"\\$@\\"\\n" > /app/as'
    script = (
        "echo 0 > /logs/verifier/reward.txt\n"
        f"\"$AGENTPOST_AS_AGENT\" sh -c '{first}' > /logs/verifier/seen.txt 2>&1\n"
        "\"$AGENTPOST_AS_AGENT\" sh -c 'echo 1 > /logs/verifier/reward.txt' >> "
        "/logs/verifier/seen.txt 2>&1\nexit 0\n"
    )
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        plant = "mkdir -p /run/agentpost && touch /app/as && ln -s /app/as /run/agentpost/as-agent"
        assert box.exec(plant).exit_code == 0
        try:
            run = _grade(box, tmp_path, script)
        except InfraError as e:
            assert "/run/agentpost" in str(e), e
            return
    assert run.files.get("reward.txt") == b"0\n", run.files


# --- a device node the agent made: the host never opens it (it holds every device's rights) --


def _open_events(path: str):
    """An inotify watch for opens of ``path``; returns a function counting them so far."""
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    ifd = libc.inotify_init1(os.O_NONBLOCK)
    assert ifd >= 0 and libc.inotify_add_watch(ifd, os.fsencode(path), 0x20) >= 0  # IN_OPEN

    def count() -> int:
        n = 0
        while True:
            try:
                n += len(os.read(ifd, 4096)) // 16
            except BlockingIOError:
                return n

    return count


def test_the_host_never_opens_a_device_node_on_a_get(tmp_path):
    """A root agent may ``mknod`` in its layer (docker keeps CAP_MKNOD; the device cgroup stops
    only the container's own opens): ``get`` opened it on the host with the host's rights
    before it looked at its type (a watchdog's open arms it, a tty's may become ours)."""
    import os
    import stat

    from agentpost.sandbox.hostfs import MountTable

    (tmp_path / "app").mkdir()
    node = tmp_path / "app" / "dev"
    os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    opens = _open_events(str(node))
    with pytest.raises(PermissionError):
        MountTable({"/app": str(tmp_path / "app")}).read("/app/dev")
    assert opens() == 0


def test_a_device_node_in_the_agents_layer_is_never_opened_by_the_host(
    docker, python_image, tmp_path
):
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        assert box.exec("mknod /app/dev c 1 3 && mkfifo /app/fifo").exit_code == 0
        opens = _open_events(box.layout.merged + "/app/dev")
        for path in ("/app/dev", "/app/fifo"):
            with pytest.raises(PermissionError):
                box.get(path)
        box.snapshot(str(tmp_path / "s.tar"))
        assert opens() == 0


DEEP = (
    "python3 -c \"import os\nos.chdir('/app')\nfor _ in range(24):\n"
    "    os.mkdir('d' * 200); os.chdir('d' * 200)\n"
    "open('big', 'wb').write(b'x' * (24 << 20))\""
)


def test_files_below_a_path_past_path_max_count_against_the_disk_quota(docker, python_image):
    """The disk poll walked the layer by host path: a dir nested past ``PATH_MAX`` (the host's
    path of the upper dir is ~100 bytes longer still) could not be listed, the walk skipped it
    silently, and what lay below never counted."""
    from agentpost.sandbox.base import Limits

    spec = SandboxSpec(image=python_image, writable_root=True, limits=Limits(disk_bytes=8 << 20))
    with docker.create(spec) as box:
        before = box._disk.used()
        box.exec(DEEP, timeout_s=120)
        assert box._disk.used() - before > 20 << 20


def test_a_snapshot_of_a_layer_whose_app_the_agent_removed_is_its_state(docker, python_image):
    """In the layer the agent may remove ``/app`` itself (a volume's mount point it could not):
    the snapshot is that state (no ``/app``; restored as an empty one), not a FileNotFoundError
    that a replay or a grader takes for a fault of ours."""
    import tarfile
    import tempfile

    with tempfile.TemporaryDirectory(prefix="review3-") as tmp:
        with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
            assert box.exec("rm -rf /app && echo l > /logs/kept", cwd="/").exit_code == 0
            snap = box.snapshot(tmp + "/s.tar")
        with tarfile.open(snap.path) as tar:
            names = tar.getnames()
        assert "logs/kept" in names and not any(n.split("/")[0] == "app" for n in names)
        with docker.restore(snap) as again:
            assert again.exec("ls -A /app; cat /logs/kept", cwd="/").stdout == "l\n"


# --- a kept server swapping the layer's dirs for links to a host path while the host works ----

SWAP_TOP = r"""
import ctypes, os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
top, host = sys.argv[1], sys.argv[2]
os.chdir("/"); os.makedirs(top + "/d", exist_ok=True)
os.symlink(host, "l"); os.symlink(host, top + "/l")
libc = ctypes.CDLL(None, use_errno=True)
open("/root/ready", "w").close()
while True:  # /app <-> /l and /app/d <-> /app/l (each l -> the host dir), atomically
    libc.renameat2(-100, top.lstrip("/").encode(), -100, b"l", 2)
    libc.renameat2(-100, (top + "/d").encode(), -100, (top + "/l").encode(), 2)
"""


def test_a_kept_server_swapping_app_itself_never_redirects_the_host(docker, python_image, tmp_path):
    """In the layer the agent can swap ``/app`` itself (a volume's mount point it could not),
    and ``/app/d``, with links to a host dir, over and over, while the host puts, gets,
    snapshots and polls the disk: each lands in the container or is refused, never outside."""
    import tarfile
    import time

    from agentpost.ingress.keys import Refused

    canaries = HostCanaries(tmp_path / "host")
    spec = SandboxSpec(image=python_image, writable_root=True, keep_processes=True)
    got, snaps = [], []
    with docker.create(spec) as box:
        box.put("/root/swap.py", SWAP_TOP.encode())
        r = box.exec(f"(python3 /root/swap.py /app {canaries.root} >/dev/null 2>&1 &); true")
        assert r.exit_code == 0, r
        deadline = time.monotonic() + 30
        while box.exec("test -e /root/ready", cwd="/").exit_code != 0:
            assert time.monotonic() < deadline, "the swapper never started"
        for i in range(1500):
            for path in ("/app/f", "/app/d/f"):
                try:
                    box.put(path, b"pwned %d" % i)
                except (Refused, OSError):
                    pass
            for path in ("/app/canary.txt", "/app/d/canary.txt"):
                try:
                    got.append(box.get(path))
                except (Refused, OSError):
                    pass
            if i % 100 == 0:
                box._disk.used()
                try:
                    snaps.append(box.snapshot(str(tmp_path / f"s{i}.tar")).path)
                except (Refused, OSError):
                    pass
        assert box.exec("pgrep -f swap.py >/dev/null", cwd="/").exit_code == 0  # still swapping
    assert not [g for g in got if g.startswith(b"canary")], "a host file was read"
    assert canaries.untouched(), canaries.changes()
    for snap in snaps:
        with tarfile.open(snap) as tar:
            assert not any("canary" in n or n.endswith("passwd") for n in tar.getnames())


SERVER = (
    '(python3 -c \'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0));'
    " s.listen(); time.sleep(600)' &); sleep 1"
)


@pytest.mark.parametrize("root", [True, False], ids=["writable-root", "read-only-root"])
@pytest.mark.parametrize("kept", [False, True], ids=["no-server", "kept-server"])
def test_an_agent_dir_in_a_volume_reaches_the_tests_as_the_agent_left_it(
    docker, python_image, root, kept
):
    """An image with ``VOLUME /app`` (its own, or its base's): docker gives a writable-root
    container a volume there all the same, and ``docker commit`` leaves volumes out, so the
    tests got the image's ``/app`` and every solution scored as the untouched state. And with a
    kept server the tests get a copy, which began as a volume filled from the image: a file the
    agent had removed came back (read-only roots too)."""
    import subprocess

    tag = "review3-volume-app:1"
    dockerfile = (
        f"FROM {python_image}\nRUN mkdir -p /app && echo i > /app/from-image\nVOLUME /app\n"
    )
    build = [docker.binary, "build", "--network", "none", "-q", "-t", tag, "-"]
    subprocess.run(build, check=True, timeout=300, input=dockerfile, text=True, capture_output=True)
    try:
        spec = SandboxSpec(image=tag, writable_root=root, keep_processes=kept)
        with docker.create(spec) as box:
            assert box.exec("rm /app/from-image && echo agent > /app/x").exit_code == 0
            if kept:
                assert box.exec(SERVER).exit_code == 0
            with box.verifier_sandbox() as v:
                assert v.copied == kept
                assert v.exec("ls /app; cat /app/x").stdout == "x\nagent\n"
    finally:
        docker.cli("rmi", "-f", tag, timeout_s=120, check=False)


@pytest.mark.parametrize(
    "turn",
    [
        "mkdir -p /app/L && rm -rf /logs && ln -s /app/L /logs",
        "mkdir -p /app/T && rm -rf /tests && ln -s /app/T /tests",
        "rm -rf /run/agentpost && mkdir -p /app/h && ln -s /app/h /run/agentpost",
    ],
)
def test_a_refused_root_is_the_agents_zero_not_an_infrastructure_fault(docker, python_image, turn):
    """End to end, in a writable root (Harbor's container): the verifier refuses a root whose
    /logs, /tests or harness dir is a link; the control (the oracle in a fresh sandbox of the
    same spec) grades cleanly, so the outcome is the agent's 0, never ``infra_error``."""
    import dataclasses
    from pathlib import Path

    from grading import assert_zero

    from agentpost.tasks.evaluate import evaluate, prepare, spec_for
    from agentpost.tasks.loader import load_task

    task = load_task(Path(__file__).resolve().parent / "fixtures" / "harbor-pytest")
    spec = spec_for(task, backend=docker)
    spec = dataclasses.replace(spec, image=python_image, writable_root=True, keep_processes=True)
    with docker.create(spec) as box:
        prepare(task, box)
        assert box.exec(turn, cwd="/").exit_code == 0
        res = evaluate(task, box)
    assert_zero(res)
    assert res.details["control"] == "clean", res.details
    assert "cannot be mounted there" in res.output, res.output[-500:]


def test_a_commit_whose_root_cannot_start_says_so(docker, python_image):
    """A file named ``/.wh.usr`` in the agent's layer is a whiteout once committed: the tests'
    root has no /usr (the agent's own view still had it), so the verifier's container stops at
    once. The error said the host lacked overlay2 (an operator's fault); it is the agent's root,
    and says so (graded as the agent's 0 through the control, like any sandbox error then)."""
    with docker.create(SandboxSpec(image=python_image, writable_root=True)) as box:
        assert box.exec("touch /.wh.usr && test -x /usr/bin/env", cwd="/").exit_code == 0
        with pytest.raises(InfraError) as e:
            with box.verifier_sandbox():
                pass
    assert "overlay2 storage driver" not in str(e.value) and "not running" in str(e.value), e.value
