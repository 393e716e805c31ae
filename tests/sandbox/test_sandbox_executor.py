"""The persistent executor of the bubblewrap backend (issue 18, item 1): one bwrap per sandbox,
each exec a fresh process in a fresh session, and an executor the agent's commands can neither
reach, stop nor replace. Real sandboxes throughout."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
from sandbox_testkit import PLANT, bwrap_backend, marker, pids_with, wait_until

from agentpost.errors import InfraError
from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.bwrap_server import ENV_MODE


@pytest.fixture
def box():
    with bwrap_backend().create() as sandbox:
        if sandbox.executor is None:
            pytest.skip("no python3 in the sandbox root: the per-exec bwrap is used")
        yield sandbox


SELF = (
    "import os; print(os.getpid(), os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid(),"
    " os.getppid(), sorted(os.listdir('/proc/self/fd')))"
)


def test_one_executor_serves_every_exec_each_a_fresh_process(box):
    seen = set()
    for _ in range(4):
        r = box.exec(["python3", "-c", SELF])
        pid, leader, group, parent, fds = r.stdout.split(" ", 4)
        assert (leader, group, parent) == ("True", "True", "1")  # own session, child of PID 1
        assert fds.strip() == "['0', '1', '2', '3']"  # stdio and listdir's own fd, nothing else
        seen.add(pid)
    assert len(seen) == 4 and box.executor.starts == 1
    assert box.exec("cd /tmp; export X=1; pwd").stdout == "/tmp\n"
    assert box.exec("pwd; echo ${X:-unset}").stdout == "/app\nunset\n"  # nothing carries over
    cmdline = box.exec("tr '\\0' ' ' < /proc/1/cmdline").stdout
    assert cmdline.startswith(f"{box.executor.python} -I -S -B -c ")
    box.exec("sleep 5", timeout_s=0.3)
    box.exec("yes", timeout_s=20)
    assert box.exec("echo ok").stdout == "ok\n"
    assert box.executor.starts == 1  # a timeout or an output cap costs no restart


# Probes a target pid: open its protocol fds for writing, read its memory, trace it.
PROBE = r"""
import ctypes, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def attack(pid):
    got = []
    for n in os.listdir(f"/proc/{pid}/fd"):
        for mode in (os.O_WRONLY, os.O_RDONLY):
            try:
                os.close(os.open(f"/proc/{pid}/fd/{n}", mode | os.O_NONBLOCK))
                got.append(f"fd{n}")
            except OSError:
                pass
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            got.append("mem")
    except OSError:
        pass
    if libc.ptrace(0x4206, pid, 0, 0) == 0:  # PTRACE_SEIZE
        got.append("ptrace")
    return got
sibling = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
print(json.dumps({"executor": attack(1), "sibling": attack(sibling.pid)}))
sibling.kill()
"""


def test_the_agent_cannot_reach_or_stop_the_executor(box):
    """Attack: write a forged answer into the executor's pipes through /proc/1/fd, read its
    memory, trace it, signal it. The same probes on a sibling process of the command work (the
    positive control), so a pass is the executor's doing (not dumpable, PID 1), not the probe's."""
    r = box.exec(["python3", "-c", PROBE])
    got = json.loads(r.stdout)
    assert got["executor"] == [], got
    assert "mem" in got["sibling"] and "ptrace" in got["sibling"] and "fd1" in got["sibling"]
    r = box.exec(
        "for s in KILL STOP TERM INT HUP SEGV; do kill -$s 1; done; kill -9 -1; echo survived"
    )
    assert (r.exit_code, r.stdout) == (0, "survived\n"), r
    assert box.exec("echo still here").stdout == "still here\n"
    assert box.executor.starts == 1  # never hit, so never restarted


def test_a_restarted_executor_runs_nothing_the_agent_planted(box):
    """Attack: plant modules where a Python start would pick them up (user site, cwd, /tmp,
    a ``json.py`` shadowing the stdlib), try to overwrite the interpreter, then get the
    executor restarted. Armed: an ordinary python3 in the sandbox does run the plant."""
    r = box.exec(["python3", "-c", PLANT])
    assert r.exit_code == 0, r.stderr
    r = box.exec(f"echo x > {box.executor.python}; touch /usr/lib/pwned")
    assert r.stderr.count("Read-only file system") == 2
    os.kill(box.executor.host_pid, signal.SIGKILL)  # a restart, as after a crash
    assert wait_until(box.executor.exited, 3)
    r = box.exec("echo after restart", env={"PYTHONPATH": "/app", "PYTHONSTARTUP": "/app/json.py"})
    assert r.stdout == "after restart\n" and box.executor.starts == 2
    with pytest.raises(FileNotFoundError):
        box.get("/app/pwned")
    box.exec(["python3", "-c", "pass"])  # the positive control: the plant is live
    assert box.get("/app/pwned") == b"x"


def test_an_idle_executor_that_died_is_restarted_silently(box):
    box.exec("echo 1 > /app/kept")
    os.kill(box.executor.host_pid, signal.SIGKILL)
    assert wait_until(box.executor.exited, 3)
    assert box.exec("cat /app/kept").stdout == "1\n"
    assert box.executor.starts == 2


def test_an_executor_killed_mid_command_is_an_infra_error_and_the_sandbox_recovers(box):
    tag = marker()
    box.exec("true")
    pid = box.executor.host_pid
    killer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(InfraError, match="executor ended during a command"):
        box.exec(f"sleep {tag} & sleep {tag}", timeout_s=30)
    killer.join()
    assert pids_with(tag) == []
    assert box.exec("echo ok").stdout == "ok\n"


def test_cancel_ends_the_command_not_the_sandbox(box):
    tag = marker()
    box.exec("true")
    canceller = threading.Timer(0.5, box.cancel)
    canceller.start()
    t = time.monotonic()
    r = box.exec(f"sleep {tag} & sleep {tag}", timeout_s=30)
    canceller.join()
    assert r.exit_code == 137 and not r.timed_out and time.monotonic() - t < 10
    assert r.killed == "cancelled"  # not a bare 137 that reads like the command's own exit
    assert pids_with(tag) == []
    ok = box.exec("echo ok")
    assert (ok.stdout, ok.killed) == ("ok\n", None)


def test_stdin_a_command_never_read_does_not_spill_into_the_next_exec(box):
    # The command ends while most of its stdin is still on the host's side of the pipe; the
    # next request must still start on a frame boundary (it used to time out, after a restart).
    for _ in range(2):
        assert box.exec("true", stdin=b"x" * (16 << 20), timeout_s=30).exit_code == 0
        r = box.exec("echo ok", timeout_s=10)
        assert (r.stdout, r.exit_code, r.killed) == ("ok\n", 0, None)
    assert box.executor.starts == 1


def test_an_exec_interrupted_on_the_host_side_does_not_answer_the_next_one(box):
    # watch() raising mid-command (as an interrupt would): the command must not stay running
    # on the server, or its answer ("" and exit 0) would be taken for the next exec's.
    def boom():
        raise RuntimeError("watch failed")

    req = {"argv": ["sleep", "1"], "cwd": "/app", "user": None, "env": {}}
    with pytest.raises(RuntimeError, match="watch failed"):
        box._server().run(
            req, stdin=None, timeout_s=10, cap=1 << 20, kill_after=1 << 26, watch=boom
        )
    r = box.exec("echo ok", timeout_s=10)
    assert (r.stdout, r.exit_code, r.killed) == ("ok\n", 0, None)
    assert box.executor.starts == 2  # the interrupted executor was ended and replaced


def test_reset_private_restarts_the_executor_on_fresh_dirs(box):
    box.exec("echo x > /tmp/a; echo y > /root/b; echo z > /dev/shm/c; echo w > /app/kept")
    box.reset_private()
    r = box.exec("ls -A /tmp /root /dev/shm; cat /app/kept")
    assert r.stdout == "/dev/shm:\n\n/root:\n\n/tmp:\nw\n"
    assert box.executor.starts == 2


SHM = (
    "import ctypes; libc = ctypes.CDLL(None)\n"
    "i = libc.shmget(0, 1 << 20, 0o1600)\n"  # IPC_PRIVATE, IPC_CREAT | 0600
    "q = libc.msgget(0, 0o1600)\n"
    "print(i >= 0 and q >= 0, len(open('/proc/sysvipc/shm').readlines()))\n"
)


def test_sysv_ipc_objects_do_not_outlive_an_exec(box):
    assert box.exec(["python3", "-c", SHM]).stdout == "True 2\n"  # made, and visible
    r = box.exec("tail -n +2 /proc/sysvipc/shm /proc/sysvipc/msg | grep -c '^ *[0-9]'")
    assert r.stdout == "0\n"


def test_execs_on_one_sandbox_are_serialised(box):
    spans: list[tuple[float, float]] = []

    def one() -> None:
        r = box.exec("date +%s.%N; sleep 0.4; date +%s.%N")
        a, b = map(float, r.stdout.split())
        spans.append((a, b))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = sorted(spans)
    assert a1 <= b0  # one after the other, never side by side


def test_the_per_exec_bwrap_stays_available(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_MODE, "fresh")
    with bwrap_backend().create() as box:
        assert box.executor is None
        r = box.exec("echo $$; sleep 60 & echo started")
        assert r.stdout.split()[0] == "2" and r.stdout.endswith("started\n")  # bwrap's init is 1
        canceller = threading.Timer(0.5, box.cancel)  # a cancel there says so too
        canceller.start()
        r = box.exec("sleep 30", timeout_s=30)
        canceller.join()
        assert (r.exit_code, r.timed_out, r.killed) == (137, False, "cancelled")
        assert box.exec("echo ok").killed is None
    monkeypatch.delenv(ENV_MODE)
    (tmp_path / "etc").mkdir()  # a root without python3: the per-exec bwrap, automatically
    with bwrap_backend().create(SandboxSpec(rootfs=str(tmp_path))) as box:
        assert box.executor is None


def test_closing_the_sandbox_mid_command_ends_everything(box):
    """Closing the sandbox from another thread while a command runs (``close`` cancels: the
    executor, the PID namespace's init, is killed) ends it and every process at once."""
    tag = marker()
    box.exec("true")
    closer = threading.Timer(0.5, box.close)
    closer.start()
    r = box.exec(f"sleep {tag} & sleep {tag}", timeout_s=30)
    closer.join()
    assert (r.exit_code, r.killed) == (137, "cancelled")  # the close, not a fault
    assert wait_until(lambda: pids_with(tag) == [], 3)
    assert not os.path.exists(box.root)


def test_a_sandbox_outlives_the_thread_that_started_its_executor(box):
    starter = threading.Thread(target=lambda: box.exec("true"))
    starter.start()
    starter.join()  # bwrap's parent-death signal would follow this thread
    time.sleep(0.3)
    assert box.exec("echo ok").stdout == "ok\n" and box.executor.starts == 1


def test_the_executor_refuses_to_run_outside_its_own_pid_namespace(tmp_path):
    """``kill(-1)`` from anywhere but a PID-namespace init would signal every process of the
    user: the server checks that it is PID 1 before anything else."""
    import subprocess
    import sys

    from agentpost.sandbox.exec_client import server_source

    victim = subprocess.Popen(["sleep", "30"])
    try:
        r = subprocess.run(
            [sys.executable, "-I", "-S", "-c", server_source(), "{}"],
            input=b"",
            capture_output=True,
            timeout=30,
        )
        assert r.returncode == 1 and b"must run as PID 1" in r.stderr
        assert victim.poll() is None  # nothing was signalled
    finally:
        victim.kill()
        victim.wait()


def test_a_command_the_executor_cannot_start_is_the_commands_failure(box):
    """A NUL byte or a lone surrogate in the command, an environment value that is not text, a
    group that does not exist: the exec fails like a command that cannot run (126), the
    executor keeps serving (no restart, no InfraError that would retry the rollout)."""
    box.exec("true")
    for kwargs in (
        {"command": "echo a\x00b"},
        {"command": "echo \ud800"},
        {"command": "true", "env": {"A": 1}},
        {"command": "true", "env": {"A=B": "1"}},
        {"command": "true", "cwd": "/app\x00x"},
    ):
        r = box.exec(**kwargs)
        assert r.exit_code in (1, 126) and "agentpost: " in r.stderr, (kwargs, r)
    # a user or group the image lacks is the caller's setup (docker's -u): said in the answer,
    # raised as InfraError, and the executor stays in step for the next request
    with pytest.raises(InfraError, match="nosuchgroup"):
        box._server().run(
            {"argv": ["true"], "cwd": "/", "env": {}, "user": "0:nosuchgroup"},
            stdin=b"",
            timeout_s=10,
            cap=1 << 16,
            kill_after=1 << 20,
        )
    # the same words printed by a command are only its output
    r = box.exec("echo 'unable to find user x: no matching entries' >&2; exit 126")
    assert r.exit_code == 126
    assert box.exec("echo ok").stdout == "ok\n" and box.executor.starts == 1


def test_the_client_and_the_server_speak_the_same_frames():
    """``exec_server.py`` is sent as source (it cannot import the client): its frame formats
    and the rc that marks a missing user must be the client's."""
    from agentpost.sandbox import exec_client

    source = exec_client.server_source()
    assert f'HEADER = _struct.Struct("{exec_client.HEADER.format}")' in source
    assert f'DONE = _struct.Struct("{exec_client.DONE.format}")' in source
    assert "NO_USER = 1 << 20" in source and exec_client.NO_USER == 1 << 20
