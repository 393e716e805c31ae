"""The bubblewrap backend keeps the sandbox contract: exec, files, snapshot/restore, limits."""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile

import pytest
from sandbox_testkit import bwrap_backend

from agentpost.errors import InfraError
from agentpost.sandbox.base import Limits, Sandbox, SandboxSpec
from agentpost.sandbox.bwrap import BwrapBackend
from agentpost.sandbox.registry import get_backend

MiB = 1024 * 1024


@pytest.fixture
def box():
    with bwrap_backend().create() as sandbox:
        yield sandbox


def test_registry_names_the_backends():
    assert get_backend("bwrap").name == "bwrap"
    assert get_backend("agentpost.sandbox.bwrap:BwrapBackend").name == "bwrap"
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        get_backend("lxc")
    with pytest.raises(ValueError, match="cannot load sandbox backend 'no_such_mod:X'"):
        get_backend("no_such_mod:X")
    with pytest.raises(ValueError, match="cannot load sandbox backend"):
        get_backend("agentpost.sandbox.bwrap:NoSuchClass")


def test_exec_runs_in_workdir_as_root_with_clean_env(box, monkeypatch):
    assert isinstance(box, Sandbox)
    monkeypatch.setenv("AGENTPOST_TEST_SECRET", "s3cret")
    r = box.exec("pwd; id -u; env")
    assert r.exit_code == 0 and not r.timed_out and not r.truncated
    lines = r.stdout.splitlines()
    assert lines[:2] == ["/app", "0"]
    assert "s3cret" not in r.stdout and "AGENTPOST_TEST_SECRET" not in r.stdout
    assert "HOME=/root" in lines and "LANG=C.UTF-8" in lines


def test_exec_exit_codes_stderr_cwd_env_and_stdin(box):
    r = box.exec(["bash", "-c", "echo out; echo err >&2; exit 7"])
    assert (r.exit_code, r.stdout, r.stderr) == (7, "out\n", "err\n")
    assert box.exec("kill -9 $$").exit_code == 137
    assert box.exec("pwd", cwd="/logs").stdout == "/logs\n"
    assert box.exec("echo $FOO", env={"FOO": "bar"}).stdout == "bar\n"
    data = b"line\n" * 50_000  # larger than a pipe buffer: stdin and stdout must interleave
    r = box.exec(["cat"], stdin=data)
    assert r.stdout.encode() == data
    # scripts write to /dev/stdout and /dev/stderr by name: that re-opens our pipes
    r = box.exec("echo o > /dev/stdout; echo e > /dev/stderr; cat /dev/stdin", stdin=b"i\n")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "o\ni\n", "e\n")


def test_spec_env_and_network_flag_reach_the_command():
    backend = bwrap_backend()
    with backend.create(SandboxSpec(env={"PATH": "/opt/x:/usr/bin:/bin", "A": "1"})) as box:
        assert box.exec("echo $PATH $A").stdout == "/opt/x:/usr/bin:/bin 1\n"
        assert _interfaces(box) == ["lo"]
    with backend.create(SandboxSpec(network=True)) as box:
        assert len(_interfaces(box)) > 1


def _interfaces(box) -> list[str]:
    lines = box.exec("cat /proc/net/dev").stdout.splitlines()[2:]
    return sorted(line.split(":")[0].strip() for line in lines)


def test_writable_dirs_persist_and_root_is_read_only(box):
    assert box.exec("echo 1 > /app/a && echo 2 > /tmp/t && echo 3 > ~/h").exit_code == 0
    r = box.exec("cat /app/a /tmp/t ~/h")
    assert r.stdout == "1\n2\n3\n"
    r = box.exec("touch /usr/pwned || touch /newdir || echo read-only")
    assert "Read-only file system" in r.stderr and r.stdout == "read-only\n"
    for d in ("/logs", "/tests", "/solution"):
        assert box.exec(f"touch {d}/x").exit_code == 0


def test_root_mirror_binds_entries_and_recreates_empty_dirs(tmp_path):
    """Entries of the host root are read-only binds, symlinks stay symlinks, and an empty
    directory is recreated with its permissions instead of costing a mount per exec."""
    from agentpost.sandbox.bwrap_launch import mirror_args

    (tmp_path / "usr").mkdir()
    (tmp_path / "usr" / "f").write_text("x")
    (tmp_path / "srv").mkdir(mode=0o700)
    os.chmod(tmp_path / "srv", 0o700)
    (tmp_path / "bin").symlink_to("usr/bin")
    (tmp_path / "skipme").mkdir()
    args = mirror_args(str(tmp_path), "/", {"/skipme"}, set())
    assert args == [
        *["--symlink", "usr/bin", "/bin"],
        *["--perms", "700", "--dir", "/srv"],
        *["--ro-bind-try", str(tmp_path / "usr"), "/usr"],
    ]
    # an entry removed between the listing and bwrap's start is skipped, not a setup failure
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "f").write_text("x")
    late = mirror_args(str(tmp_path), "/", {"/skipme"}, set())
    (gone / "f").unlink()
    gone.rmdir()
    assert ["--ro-bind-try", str(gone), "/gone"] == late[late.index(str(gone)) - 1 :][:3]
    empty = [
        d for d in ("/srv", "/media", "/mnt", "/opt") if os.path.isdir(d) and not os.listdir(d)
    ]
    with bwrap_backend().create(SandboxSpec(view="mirror")) as box:
        for d in empty:  # on this host: a plain dir in the sandbox, and still read-only
            r = box.exec(f"stat -c %a {d}; touch {d}/x")
            assert r.stdout == f"{os.stat(d).st_mode & 0o777:o}\n" and "Read-only" in r.stderr


def test_put_get_and_put_dir(box, tmp_path):
    box.put("/app/deep/dir/f.txt", b"hello", mode=0o755)
    r = box.exec("cat deep/dir/f.txt; stat -c %a deep/dir/f.txt; echo more >> deep/dir/f.txt")
    assert r.stdout == "hello755\n" and r.exit_code == 0
    assert box.get("/app/deep/dir/f.txt") == b"hellomore\n"
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("x = 1\n")
    (tmp_path / "src" / "run.sh").write_text("echo ran\n")
    os.symlink("pkg/m.py", tmp_path / "src" / "alias.py")
    box.put_dir(str(tmp_path / "src"), "/tests")
    assert box.exec("cat /tests/pkg/m.py /tests/alias.py; bash /tests/run.sh").stdout == (
        "x = 1\nx = 1\nran\n"
    )
    with pytest.raises(FileNotFoundError):
        box.get("/app/missing")
    with pytest.raises(PermissionError):
        box.get("/etc/hostname")
    with pytest.raises(PermissionError):
        box.put("/usr/local/x", b"")
    with pytest.raises(PermissionError):
        box.put("relative/path", b"")


def test_snapshot_and_restore_into_a_fresh_sandbox(tmp_path):
    backend = bwrap_backend()
    with backend.create() as box:
        box.exec(
            "mkdir -p /app/src && echo v1 > /app/src/f && ln -s src/f /app/l && echo s > /tmp/x"
        )
        box.exec("echo log > /logs/run.log; mkfifo /app/pipe")
        snap = box.snapshot(str(tmp_path / "s.tar"))
        box.exec("echo v2 > /app/src/f && rm /logs/run.log")
        assert box.get("/app/src/f") == b"v2\n"
    names = tarfile.open(snap.path).getnames()
    assert "app/src/f" in names and "logs/run.log" in names and not any("tmp" in n for n in names)
    with backend.restore(snap) as again:
        r = again.exec("cat /app/src/f /app/l /logs/run.log; ls /tmp; test -p /app/pipe")
        assert r.stdout == "v1\nv1\nlog\n" and r.exit_code == 0
        r = again.exec("echo v3 > /app/src/f && mkdir /app/src/new && touch /logs/more")
        assert r.exit_code == 0, r.stderr  # restored files still belong to the sandbox
        assert again.spec == snap.spec


@pytest.mark.parametrize("base", ["default", "var-tmp"])
def test_sandboxes_are_isolated_from_each_other(base):
    bwrap_backend()
    base_dir = None if base == "default" else tempfile.mkdtemp(dir="/var/tmp")
    backend = BwrapBackend(base_dir=base_dir)
    try:
        with backend.create() as a, backend.create() as b:
            a.exec("echo mine > /app/f; echo t > /tmp/t")
            assert b.exec("ls -A /app /tmp").stdout.split() == ["/app:", "/tmp:"]
            r = b.exec(f"ls -A {os.path.dirname(a.root)}; cat {a.root}/fs/app/f")
            assert r.stdout == "" and "No such file" in r.stderr  # the base dir is masked
    finally:
        if base_dir:
            shutil.rmtree(base_dir)


def test_limits_file_size_memory_processes():
    spec = SandboxSpec(limits=Limits(file_bytes=1 * MiB, memory_bytes=256 * MiB, processes=32))
    with bwrap_backend().create(spec) as box:
        r = box.exec("head -c 2097152 /dev/zero > /app/big; echo $?; stat -c %s /app/big")
        assert r.stdout.split() == ["153", str(1 * MiB)]  # SIGXFSZ at the limit
        r = box.exec(["python3", "-c", "x = bytearray(512 * 1024 * 1024)"])
        assert r.exit_code == 1 and "MemoryError" in r.stderr
        r = box.exec("ulimit -u; for i in $(seq 60); do sleep 1 & done", timeout_s=3)
        assert r.stdout == "32\n" and "fork: retry: Resource temporarily unavailable" in r.stderr


def test_closed_sandbox_refuses_exec_and_removes_its_files():
    box = bwrap_backend().create()
    box.exec("echo x > /app/f")
    root = box.root
    box.close()
    assert not os.path.exists(root)
    with pytest.raises(InfraError):
        box.exec("true")


def test_setup_failures_are_infra_errors_but_a_bad_cwd_is_not(tmp_path):
    (tmp_path / "etc").mkdir()  # a rootfs without prlimit or a shell: bwrap cannot start it
    with bwrap_backend().create(SandboxSpec(rootfs=str(tmp_path))) as box:
        with pytest.raises(InfraError, match="bwrap could not set up"):
            box.exec(["true"])
    with bwrap_backend().create() as box:
        r = box.exec("true", cwd="/nonexistent")
        assert r.exit_code == 1 and "Can't chdir" in r.stderr


def test_pruning_never_locks_the_shared_base_dir(tmp_path) -> None:
    """Two pruners racing on one stale dir must not chmod the shared base dir (a 0700 base dir
    made every other sandbox fail with 'Permission denied')."""
    import os

    from agentpost.sandbox.hostfs import _force_remove_under, prune_stale

    base = tmp_path / "base"
    stale = base / "sbx-999999999-x" / "fs" / "app"
    stale.mkdir(parents=True)
    os.chmod(base, 0o711)
    handler = _force_remove_under(str(base / "sbx-999999999-x"))
    handler(os.rmdir, str(base / "sbx-999999999-x"), (FileNotFoundError, FileNotFoundError(), None))
    assert os.stat(base).st_mode & 0o777 == 0o711
    assert prune_stale(str(base)) == 1
    assert not (base / "sbx-999999999-x").exists()
    assert os.stat(base).st_mode & 0o777 == 0o711
