"""The per-exec bubblewrap path: one ``bwrap`` (new namespaces, ~30 mounts) for one exec.

The fallback of the persistent executor (``bwrap_server.py``): used with
``AGENTPOST_SANDBOX_EXEC=fresh`` and for a sandbox root without ``python3``. Nothing outlives
an exec: when the command exits, bwrap's PID-namespace init exits and the kernel kills every
process left in the namespace; bwrap itself may exit a moment earlier, so the exec also waits on
a pidfd of that init (its pid comes from ``--info-fd``). At the timeout the init is SIGKILLed
through the pidfd, which empties the namespace the same way; ``--die-with-parent`` ends the tree
if agentpost itself dies. Limits are set by ``prlimit`` inside the new user namespace.

Layer: io.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess

from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult
from agentpost.sandbox.bwrap_launch import base_env, kill_tree, owned_pipes, read_info, wait_exit
from agentpost.sandbox.capture import argv_of, run_capped, runaway_bytes


def exec_fresh(box, command, timeout_s: float, cwd, env, stdin) -> ExecResult:
    """Run one command in its own bwrap (``box``: a ``BwrapSandbox``)."""
    proc, pidfd = _start(box, command, cwd, env, stdin)
    with box._cancel_lock:
        box._cancelled = False
        box._running = (proc, pidfd)  # for ``cancel`` from another thread
    try:
        lim = box.spec.limits
        result = run_capped(
            proc,
            stdin=stdin,
            timeout_s=timeout_s,
            cap=lim.output_bytes,
            kill_after=runaway_bytes(lim.output_bytes),
            kill=lambda p: kill_tree(p, pidfd),
            watch=None if box.layout.quota else box._over_quota,
        )
    except BaseException:  # Ctrl-C, SIGTERM: kill the command before the dir goes away
        kill_tree(proc, pidfd)
        proc.wait()
        raise
    finally:
        with box._cancel_lock:
            box._running = None
        wait_exit(pidfd)
    if result.exit_code == 1 and setup_failed(result.stderr):
        raise InfraError(f"bwrap could not set up the sandbox: {result.stderr.strip()}")
    if box._cancelled and result.killed is None:
        return dataclasses.replace(result, killed="cancelled")
    return result


def _argv(box, command: str | list[str], cwd: str | None, info_fd: int) -> list[str]:
    lim = box.spec.limits
    cmd = argv_of(command)
    return [
        *box._args,
        *["--info-fd", str(info_fd), "--chdir", cwd or box.spec.workdir, "--", "prlimit"],
        *[f"--nproc={lim.processes}", f"--as={lim.memory_bytes}", f"--fsize={lim.file_bytes}"],
        "--",
        *cmd,
    ]


def _start(box, command, cwd, env, stdin) -> tuple[subprocess.Popen, int | None]:
    """Start bwrap; return it and a pidfd on its PID-namespace init (None if that is gone).

    bwrap exits as soon as the command does, while the kernel may still be killing what the
    command left in the namespace; waiting on the init's pidfd closes that window."""
    info_r, info_w = os.pipe()
    parent, child = owned_pipes(bool(stdin), box.backend.owner())
    try:
        proc = subprocess.Popen(
            _argv(box, command, cwd, info_w),
            stdin=child[0] if stdin else subprocess.DEVNULL,
            stdout=child[-2],
            stderr=child[-1],
            env={**base_env(box.spec), **(env or {})},
            pass_fds=(info_w, *box.pass_fds),
            start_new_session=True,
            cwd="/",
        )
    except OSError as e:
        for fd in (info_r, *parent):
            os.close(fd)
        raise InfraError(f"cannot start bwrap: {e}") from e
    finally:
        for fd in (info_w, *child):
            os.close(fd)
    streams = [open(fd, "rb", buffering=0) for fd in parent[-2:]]
    proc.stdout, proc.stderr = streams
    if stdin:
        proc.stdin = open(parent[0], "wb", buffering=0)
    try:
        init_pid = read_info(info_r).get("child-pid")
    finally:
        os.close(info_r)
    pidfd = None
    if isinstance(init_pid, int):
        try:
            pidfd = os.pidfd_open(init_pid)
        except OSError:  # already gone (setup failed), or no pidfd support
            pidfd = None
    return proc, pidfd


def setup_failed(stderr: str) -> bool:
    """bwrap's own setup errors (namespaces, mounts) are infrastructure failures; a missing
    ``cwd`` is the caller's and comes back as an ordinary failed exec."""
    return stderr.startswith("bwrap: ") and "Can't chdir" not in stderr.splitlines()[0]
