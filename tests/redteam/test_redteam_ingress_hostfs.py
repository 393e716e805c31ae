"""Red team, issue 26 (round three): a process the sandbox keeps between execs (``keep_processes``,
Harbor's servers) swaps a directory of ``/app`` for a symlink to a host directory, over and
over, while the host puts and gets files there (``hostfs.MountTable``: the verifier's writes,
the reward read). On main the path was resolved by name (``lstat`` of each component) and then
opened again by path, so a swap between the two made the host write a file into the canary
directory and read the canary's file. Canaries sit outside every dir of the sandbox.

The swapper exchanges the two names atomically (``renameat2(RENAME_EXCHANGE)``), so ``d`` is
always either the real dir or the link; every attempt of the host either lands in the real dir
or is refused, never outside.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.ingress.keys import Refused
from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.hostfs import MountTable
from agentpost.sandbox.registry import get_backend

# a server (a listening socket: kept between execs), then swaps d <-> l (l -> the host dir)
SWAP = r"""
import ctypes, os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
os.chdir(sys.argv[1]); os.makedirs("d", exist_ok=True)
if not os.path.lexists("l"):
    os.symlink(sys.argv[2], "l")
libc = ctypes.CDLL(None, use_errno=True)
open("ready", "w").close()
while True:
    if libc.renameat2(-100, b"d", -100, b"l", 2) != 0:  # RENAME_EXCHANGE
        os.rename("d", "x"); os.rename("l", "d"); os.rename("d", "l"); os.rename("x", "d")
"""
ATTEMPTS = 10_000  # on main about 1 in 1500 escaped (4-11 per 10k, measured)
REFUSED = (Refused, OSError)  # refused or raced: either way nothing reached the host


def _hammer(put, get, canary: Path, n: int = ATTEMPTS) -> list[bytes]:
    """``n`` puts of ``/app/d/f`` and gets of ``/app/d/canary.txt``; what the gets returned."""
    got = []
    for i in range(n):
        try:
            put("/app/d/f", b"pwned %d" % i)
        except REFUSED:
            pass
        try:
            got.append(get("/app/d/canary.txt"))
        except REFUSED:
            pass
    return got


def _wait_for(path: Path, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"the swapper never started ({path})"
        time.sleep(0.05)


def test_a_concurrent_swap_cannot_redirect_host_reads_and_writes(tmp_path: Path):
    """The mount table alone, the swapper a plain process beside it (no sandbox needed)."""
    canaries = HostCanaries(tmp_path / "host")
    app = tmp_path / "box" / "app"
    app.mkdir(parents=True)
    fs = MountTable({"/app": str(app)})
    swapper = subprocess.Popen([sys.executable, "-c", SWAP, str(app), str(canaries.root)])
    try:
        _wait_for(app / "ready")
        got = _hammer(fs.write, fs.read, canaries.root)
    finally:
        swapper.kill()
        swapper.wait()
    assert not [g for g in got if g.startswith(b"canary")], "a host file was read"
    assert canaries.untouched(), canaries.changes()


BWRAP = get_backend("bwrap")


@pytest.mark.skipif(not BWRAP.available(), reason="bubblewrap unavailable")
@pytest.mark.timeout(600)
def test_a_kept_server_cannot_redirect_put_and_get(tmp_path: Path):
    """The same attack from a real kept process inside a bwrap sandbox (Harbor semantics)."""
    canaries = HostCanaries(tmp_path / "host")
    with BWRAP.create(SandboxSpec(keep_processes=True)) as box:
        box.put("/app/swap.py", SWAP.encode())
        r = box.exec(f"(python3 /app/swap.py /app {canaries.root} >/dev/null 2>&1 &); true")
        assert r.exit_code == 0, r
        _wait_for(Path(box.layout.mounts["/app"]) / "ready")
        assert box.exec("pgrep -f swap.py >/dev/null").exit_code == 0  # it outlived its exec
        got = _hammer(box.put, box.get, canaries.root, n=ATTEMPTS // 2)
    assert not [g for g in got if g.startswith(b"canary")], "a host file was read"
    assert canaries.untouched(), canaries.changes()


def test_put_replaces_a_hard_link_instead_of_writing_through_it(tmp_path: Path):
    """A sandbox that hard-links a file it may not write into its dir (same file system) does
    not get the host to write it: on main ``put`` truncated and rewrote the shared inode."""
    canaries = HostCanaries(tmp_path / "host")
    app = tmp_path / "box" / "app"
    app.mkdir(parents=True)
    secret = canaries.root / "passwd"
    os.link(secret, app / "tests.py")
    before = canaries.state()["passwd"]
    fs = MountTable({"/app": str(app)})
    fs.write("/app/tests.py", b"the verifier's file\n")
    assert fs.read("/app/tests.py") == b"the verifier's file\n"
    assert (app / "tests.py").stat().st_nlink == secret.stat().st_nlink == 1
    after = canaries.state()["passwd"]  # unlinked from /app: its link count and ctime moved
    mode, mtime, digest = 0, 4, 7
    assert [after[i] for i in (mode, mtime, digest)] == [before[i] for i in (mode, mtime, digest)]


def test_a_root_mount_keeps_dotdot_and_links_inside_the_container_root(tmp_path: Path):
    """A root mount (``"/"``: a writable-root container's layer, ``docker_volumes``): ``..``
    above it stays at its top, links resolve against it, and a link naming a host path is
    that path inside the root (absent there), never the host's."""
    root, host = tmp_path / "root", tmp_path / "host"
    (root / "app").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc" / "hostname").write_text("sandbox\n")
    host.mkdir()
    (host / "secret").write_text("host\n")
    (root / "app" / "up").symlink_to("../../../../../..")
    (root / "app" / "abs").symlink_to("/etc")
    (root / "app" / "h").symlink_to(host)
    fs = MountTable({"/": str(root)})
    assert fs.read("/app/up/etc/hostname") == b"sandbox\n"
    assert fs.read("/../../etc/hostname") == b"sandbox\n"
    assert fs.read("/app/abs/hostname") == b"sandbox\n"
    with pytest.raises(FileNotFoundError):
        fs.read("/app/h/secret")
    fs.write("/app/h/planted", b"x")  # made inside the root, where the link points there
    assert (root / host.relative_to("/") / "planted").read_bytes() == b"x"
    assert sorted(p.name for p in host.iterdir()) == ["secret"]
