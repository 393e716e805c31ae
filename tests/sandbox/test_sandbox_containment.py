"""Hostile commands run for real inside bubblewrap; the host must come out unchanged.

Canary files live in a host directory the sandbox can see (read-only) but must not change. It
is under /var/tmp, not /tmp, because every sandbox gets a private /tmp that hides the host's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from sandbox_testkit import bwrap_backend, marker, pids_with, wait_until

from agentpost.sandbox.base import Limits, SandboxSpec
from agentpost.sandbox.bwrap import BwrapBackend

SRC = Path(__file__).resolve().parents[2] / "src"


def _digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = (
            "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        )
    return out


@pytest.fixture
def canary():
    base = "/var/tmp" if os.path.isdir("/var/tmp") else os.path.expanduser("~")
    root = Path(tempfile.mkdtemp(prefix="agentpost-canary-", dir=base))
    os.chmod(root, 0o755)
    (root / "keep.txt").write_text("do not touch\n")
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_text("deep\n")
    before = _digest(root)
    yield root
    assert _digest(root) == before, "a sandboxed command changed host files"
    shutil.rmtree(root)


@pytest.fixture
def box():
    with bwrap_backend().create() as sandbox:
        yield sandbox


def test_writing_and_deleting_outside_the_workdir_fails(box, canary):
    """The canary's dir (/var/tmp) is not even visible in the hermetic view; in the mirror view
    it is read-only. Either way nothing outside the writable dirs changes."""
    with bwrap_backend().create(SandboxSpec(view="mirror")) as mirror:
        _write_outside(mirror, canary, "Read-only file system")
    _write_outside(box, canary, "No such file or directory")


def _write_outside(box, canary, why):
    r = box.exec(
        f"echo pwn > {canary}/new.txt; echo pwn >> {canary}/keep.txt; rm -f {canary}/keep.txt;"
        f" rm -rf {canary}/sub; mv {canary}/keep.txt /app/; touch /etc/pwned /usr/bin/pwned;"
        " echo pwn > /app/inside.txt"
    )
    assert r.stderr.count(why) >= 3 and r.stderr.count("Read-only file system") >= 2
    assert (canary / "keep.txt").read_text() == "do not touch\n"
    assert not os.path.exists("/etc/pwned") and not os.path.exists("/usr/bin/pwned")
    assert box.get("/app/inside.txt") == b"pwn\n"


def test_rm_rf_root_leaves_the_host_intact(box, canary):
    box.put("/app/mine.txt", b"x")
    with bwrap_backend().create() as other:  # another sandbox's files are host files too
        other.put("/app/theirs.txt", b"keep")
        other.exec("echo keep > /tmp/t")
        r = box.exec("rm -rf --no-preserve-root / 2>/dev/null; ls -A /app | wc -l", timeout_s=60)
        assert other.get("/app/theirs.txt") == b"keep" and other.get("/tmp/t") == b"keep\n"
    if not r.timed_out:
        assert r.stdout.strip() == "0"  # its own work dir is fair game
    assert (canary / "keep.txt").read_text() == "do not touch\n"
    assert os.path.exists("/usr/bin/env") and os.path.exists("/etc/passwd")
    assert box.exec("echo alive").stdout == "alive\n"  # the sandbox itself still works


def _listen() -> tuple[socket.socket, list[int]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(1)
            conn.sendall(b"hello\n")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, accepted


def test_network_is_off_unless_the_spec_allows_it(box):
    server, accepted = _listen()
    port = server.getsockname()[1]
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -1 <&3"
    try:
        r = box.exec(connect, timeout_s=10)
        assert r.exit_code != 0 and r.stdout == "" and accepted == []
        r = box.exec(
            f"{connect.replace('127.0.0.1', '1.1.1.1').replace(str(port), '80')}", timeout_s=5
        )
        assert r.exit_code != 0
        with bwrap_backend().create(SandboxSpec(network=True)) as open_box:
            r = open_box.exec(connect, timeout_s=10)  # positive control: the server is reachable
            assert r.stdout == "hello\n" and accepted == [1]
    finally:
        server.close()


def test_fork_bomb_is_contained_and_ended(canary):
    """The bomb stops at its own sandbox's process limit: while it rages, the host and a second
    sandbox (same host uid, its own user namespace) can still fork."""
    tag = marker()
    spec = SandboxSpec(limits=Limits(processes=64))
    start = time.monotonic()
    out: list = []
    with bwrap_backend().create(spec) as box, bwrap_backend().create(spec) as other:
        bomb = ["bash", "-c", "b() { b | b & }; b; sleep " + tag]
        thread = threading.Thread(target=lambda: out.append(box.exec(bomb, timeout_s=3)))
        thread.start()
        assert wait_until(lambda: len(pids_with(tag)) > 0 or not thread.is_alive(), 3)
        time.sleep(0.3)
        assert thread.is_alive()  # the bomb is still running: others must not starve
        assert subprocess.run(["true"]).returncode == 0
        r2 = other.exec("for i in $(seq 20); do true & done; wait; echo ok", timeout_s=10)
        assert (r2.exit_code, r2.stdout) == (0, "ok\n"), r2.stderr[-300:]
        thread.join()
    assert time.monotonic() - start < 20
    (r,) = out
    assert r.timed_out or r.exit_code is not None
    assert wait_until(lambda: not pids_with(tag), 3)
    assert subprocess.run(["true"]).returncode == 0  # the host can still fork


def test_endless_output_is_capped_and_returns(box):
    r = box.exec("yes", timeout_s=20)
    assert r.truncated and not r.timed_out and r.duration_s < 15
    assert len(r.stdout) == box.spec.limits.output_bytes and r.stdout.startswith("y\ny\n")
    r = box.exec("head -c 11000000 /dev/zero | tr '\\0' e >&2; echo done")
    assert r.truncated and len(r.stderr) == 10 * 1024 * 1024 and r.stdout == "done\n"
    assert r.exit_code == 0  # under the runaway limit the command runs to its end


def test_a_command_that_never_ends_times_out_and_dies(box):
    tag = marker()
    r = box.exec(f"sleep {tag}", timeout_s=0.5)
    assert r.timed_out and r.exit_code is None and 0.5 <= r.duration_s < 3
    assert pids_with(tag) == []


def test_closing_both_pipes_does_not_escape_the_timeout(box):
    tag = marker()
    r = box.exec(f"exec >&- 2>&-; sleep {tag}", timeout_s=0.5)
    assert r.timed_out and r.duration_s < 3
    assert pids_with(tag) == []


def test_background_processes_do_not_outlive_exec(box):
    tag = marker()
    r = box.exec(
        f"sleep {tag} & (sleep {tag} &) ; setsid sleep {tag} & nohup sleep {tag} >/dev/null 2>&1 &"
        " (sleep 0.3; echo late > /app/late) & disown -a; echo started"
    )
    assert r.stdout == "started\n" and r.duration_s < 3
    assert pids_with(tag) == []
    time.sleep(0.6)
    with pytest.raises(FileNotFoundError):
        box.get("/app/late")


def test_killing_the_parent_kills_the_sandbox(tmp_path):
    bwrap_backend()
    tag = marker()
    child_code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        from agentpost.sandbox.bwrap import BwrapBackend
        box = BwrapBackend().create()
        print(box.root, flush=True)
        box.exec("sleep {tag} & sleep {tag}", timeout_s=60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", child_code], stdout=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(pids_with(f"sleep\0{tag}")) == 2, 10), (
            "sandboxed sleeps never started"
        )
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert wait_until(lambda: pids_with(tag) == [], 3), "sandboxed processes outlived parent"
    finally:
        child.kill()
        child.wait()
    leftover = child.stdout.read().strip()  # the killed parent could not clean up, so the
    assert leftover.startswith("/")  # next backend (maybe another process's) prunes its dir
    BwrapBackend().ensure_base_dir()
    assert not os.path.exists(leftover)


def test_symlinks_pointing_outside_are_never_followed_on_the_host(box, canary):
    r = box.exec(
        f"ln -s /etc/passwd /app/passwd; ln -s {canary}/keep.txt /app/keep; ln -s / /app/root;"
        f" ln -s ../../../../etc/shadow /app/rel; ln -s {canary} /app/dir; ln -s loop /app/loop;"
        " echo ok > /app/real; ln -s real /app/inside"
    )
    assert r.exit_code == 0
    for path in (
        "/app/passwd",
        "/app/keep",
        "/app/root/etc/passwd",
        "/app/rel",
        "/app/dir/keep.txt",
    ):
        with pytest.raises(PermissionError):
            box.get(path)
        with pytest.raises(PermissionError):
            box.put(path, b"pwned")
    with pytest.raises(OSError):
        box.get("/app/loop")
    assert box.exec("mkfifo /app/fifo").exit_code == 0
    with pytest.raises(PermissionError, match="not a regular file"):
        box.get("/app/fifo")  # a plain open() would block forever
    with pytest.raises(PermissionError, match="not a regular file"):
        box.put("/app/fifo", b"x")
    with pytest.raises(PermissionError):
        box.put_dir(str(canary), "/app/dir/copied")
    assert box.get("/app/inside") == b"ok\n"
    box.put("/app/inside", b"changed\n")  # a symlink inside the sandbox is resolved inside
    assert box.get("/app/real") == b"changed\n"
    snap = box.snapshot()
    try:
        members = {m.name: m for m in tarfile.open(snap.path).getmembers()}
        assert members["app/passwd"].issym() and members["app/passwd"].size == 0
    finally:
        os.unlink(snap.path)


@pytest.mark.parametrize("case", ["dotdot", "symlink-then-file", "absolute"])
def test_a_forged_snapshot_cannot_write_outside(case, canary, tmp_path):
    import io

    from agentpost.ingress.keys import Refused
    from agentpost.sandbox.base import Snapshot

    target = canary / "pwned.txt"
    path = tmp_path / "forged.tar"
    with tarfile.open(path, "w") as tar:

        def add(name: str, link: str | None = None) -> None:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = 3
                tar.addfile(info, io.BytesIO(b"pwn"))

        if case == "dotdot":
            add("app/" + "../" * 8 + str(target).lstrip("/"))
        elif case == "symlink-then-file":
            add("app/l", link=str(canary))
            add("app/l/pwned.txt")
        else:
            add(str(target))
    backend = bwrap_backend()
    with pytest.raises(Refused):  # refused whole, before the sandbox starts
        backend.restore(Snapshot(str(path), SandboxSpec())).close()
    assert not target.exists()
