"""The persistent executor for the bubblewrap backend: one ``bwrap`` per sandbox, not per exec.

``BwrapServer.up()`` starts the sandbox's bwrap once (the same namespaces, mounts, cgroup and
unprivileged uid as a per-exec bwrap) with ``--as-pid-1``, so the executor (``exec_server.py``)
is the init of the sandbox's PID namespace; every exec then costs one ``posix_spawn`` inside it
instead of building namespaces and ~30 mounts again. The sandbox's rlimits (processes, address
space, file size) are set on the executor and inherited by every command, in place of ``prlimit``.

Lifecycle: started on the first exec; ended (SIGKILL to the init through its pidfd: the kernel
then empties the whole namespace) by ``stop()``, which ``reset_private`` (its /tmp and home
binds would point at the removed dirs) and ``close`` call; restarted on the next exec after it
died. A server found dead before a command is restarted silently (nothing of the sandbox ran,
so nothing is lost); one that dies during a command is the command's doing only when the
sandbox's memory cgroup counted an OOM kill ("memory limit"); otherwise it is an infrastructure
error (``InfraError``, retried by callers). A command cannot kill it: ``kill -9 -1`` and
``kill -9 1`` do not reach a PID-namespace init without handlers.

Lifetime: the server ends (and the kernel with it every process of the sandbox) when its stdin
closes, which happens when agentpost exits or is killed, whatever the signal. Not
``--die-with-parent``: its parent-death signal follows the *thread* that started bwrap, so a
sandbox started by one worker thread and used by another would die with the first thread.

Departures from a per-exec bwrap, stated: ``/dev/shm``, ``/run`` and SysV IPC objects live as
long as the server, not one exec (the server removes SysV objects after each command;
``reset_private`` restarts it, so the verifier sees fresh ones); the executor's own few MiB
count against the memory cgroup and its one process against ``Limits.processes``.

Fallbacks: ``AGENTPOST_SANDBOX_EXEC=fresh`` keeps the per-exec bwrap; so does a sandbox whose
root has no ``python3`` (a bare ``rootfs``) or whose server cannot start (reason in
``fallback``).

Layer: io.
"""

from __future__ import annotations

import os
import select

from agentpost.sandbox.bwrap_launch import kill_tree, read_info
from agentpost.sandbox.exec_client import Server, StartFailed, server_argv

ENV_MODE = "AGENTPOST_SANDBOX_EXEC"  # "server" (default) or "fresh" (a bwrap per exec)
PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3")


def wanted() -> bool:
    return os.environ.get(ENV_MODE, "server") != "fresh"


def find_python(rootfs: str) -> str | None:
    for path in PYTHONS:
        if os.path.lexists(os.path.join(rootfs, path.lstrip("/"))):
            return path
    return None


class BwrapServer:
    """One sandbox's executor: ``up()`` gives a running ``Server`` (or None: use a fresh bwrap)."""

    def __init__(self, bwrap_args: list[str], env: dict, python: str, rlimits: dict, pass_fds=()):
        self.bwrap_args, self.env, self.python, self.rlimits = bwrap_args, env, python, rlimits
        self.pass_fds = tuple(pass_fds)  # fds the command line names (a user namespace's)
        self.server: Server | None = None
        self.pidfd: int | None = None
        self.fallback: str | None = None  # why this sandbox uses a fresh bwrap per exec
        self.starts = 0
        self.host_pid: int | None = None  # the executor's pid on the host (for tests and ps)

    def up(self) -> Server | None:
        if self.server is not None and self.server.alive() and not self.exited():
            return self.server
        self.stop()
        info_r, info_w = os.pipe()
        args = [a for a in self.bwrap_args if a != "--die-with-parent"]  # see the docstring
        argv = [*args, "--as-pid-1", "--info-fd", str(info_w), "--chdir", "/", "--"]
        argv += server_argv(self.python, self.rlimits)
        server = Server(hard_kill=lambda: kill_tree(server.proc, self.pidfd))
        self.server = server

        def started(_proc) -> None:
            os.close(info_w)
            try:
                pid = read_info(info_r).get("child-pid")
            finally:
                os.close(info_r)
            self.host_pid = pid if isinstance(pid, int) else None
            if isinstance(pid, int):
                try:
                    self.pidfd = os.pidfd_open(pid)
                except OSError:  # already gone: the start fails below
                    self.pidfd = None

        try:
            server.start(argv, env=self.env, pass_fds=(info_w, *self.pass_fds), started=started)
        except StartFailed as e:
            if server.proc is None:
                os.close(info_w)
                os.close(info_r)
            self.stop()
            first = e.detail.splitlines()[0] if e.detail else ""
            if first.startswith("bwrap: ") and "execvp" not in first:
                raise  # the sandbox itself cannot be set up: the caller's InfraError
            self.fallback = f"the executor could not start: {e.detail[-300:]}"
            return None
        self.starts += 1
        return server

    def exited(self) -> bool:
        if self.pidfd is None:
            return True
        return bool(select.select([self.pidfd], [], [], 0)[0])

    def stop(self) -> None:
        """End the server; returns once no process of the sandbox is left."""
        server, self.server = self.server, None
        if server is not None:
            server.close()  # SIGKILL to the init: the kernel empties the namespace
        if self.pidfd is not None:
            try:
                select.select([self.pidfd], [], [], 10.0)
            finally:
                os.close(self.pidfd)
                self.pidfd = None
