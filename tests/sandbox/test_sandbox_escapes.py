"""More ways out of a bubblewrap sandbox that must stay shut: host Unix sockets (abstract and
pathname) and RAM-backed directories that could fill the host's memory."""

from __future__ import annotations

import os
import socket

import pytest
from sandbox_testkit import bwrap_backend, marker


@pytest.fixture
def box():
    with bwrap_backend().create() as sandbox:
        yield sandbox


def test_host_unix_sockets_are_out_of_reach(box, tmp_path):
    """Abstract sockets belong to the network namespace; pathname sockets in the host's /tmp
    and /run are hidden by the private /tmp and the empty /run. (Known limit: a world-writable
    socket elsewhere on the read-only host root stays connectable; see bwrap.py.)"""
    name = f"agentpost-test-{marker()}"
    servers, accepted = [], []
    for addr in ("\0" + name, str(tmp_path / "s.sock")):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(addr)
        srv.listen(4)
        srv.setblocking(False)
        servers.append(srv)
    os.chmod(tmp_path, 0o777)
    os.chmod(tmp_path / "s.sock", 0o777)
    probe = (
        "import socket, sys\n"
        "for a in sys.argv[1:]:\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n"
        "        s.connect(a.replace('@', chr(0), 1)); print('connected', a)\n"
        "    except OSError as e:\n"
        "        print('refused', a, e.errno)\n"
    )
    try:
        r = box.exec(["python3", "-c", probe, "@" + name, str(tmp_path / "s.sock")])
        for srv in servers:
            try:
                srv.accept()
                accepted.append(srv)
            except BlockingIOError:
                pass
        assert r.exit_code == 0 and "connected" not in r.stdout and r.stdout.count("refused") == 2
        assert accepted == []
    finally:
        for srv in servers:
            srv.close()


def test_ram_backed_dirs_are_bounded(box):
    """tmpfs is host RAM: /dev (bwrap's default size is half the RAM) is read-only, /dev/shm
    stops at its size, /run at 1 MiB; device nodes keep working."""
    r = box.exec(
        "head -c 4096 /dev/zero > /dev/fill; echo dev=$?; echo x > /dev/null; echo null=$?;"
        " head -c 2000000 /dev/zero > /run/fill; echo run=$?"
    )
    assert r.stdout.split() == ["dev=1", "null=0", "run=1"], r.stderr
    assert "Read-only file system" in r.stderr and "No space left" in r.stderr
    shm = min(box.spec.limits.memory_bytes, 512 << 20)
    r = box.exec("df -B1 --output=size /dev/shm | tail -1")
    assert int(r.stdout) == shm
