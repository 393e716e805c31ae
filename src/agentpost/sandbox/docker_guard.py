"""The disk quota between commands, for a docker sandbox whose processes outlive their command.

Docker has no kernel quota for the container layer or volumes, so ``DockerSandbox`` polls their
size *while a command runs* (``docker_volumes.DiskWatch``) and kills it past the quota. With
``SandboxSpec.keep_processes`` (Harbor's container semantics) what a command leaves running
goes on writing after it returned, when no poll runs: through the agent's thinking time, the
grading and the control, until the host disk is full (then the control fails too, and the
agent's 0 escapes as ``infra_error``, and every other sandbox on the host fails with it).

``DiskGuard`` closes that gap: a daemon thread that, every ``DISK_POLL_S`` between commands,
looks whether the container holds any process besides its init (one read of its cgroup's
``cgroup.procs``; the size walk runs only then) and, once the sandbox has written more than its
quota, ends every process in it but init (``S``, as ``reset_private`` does). Past the quota the
sandbox stays over it, so each later command is killed at its first poll ("disk quota"): the
agent's own doing, as on bubblewrap, where a full quota tmpfs refuses the writes.

Layer: io.
"""

from __future__ import annotations

import threading

from agentpost.sandbox.docker_volumes import DISK_POLL_S


class DiskGuard:
    def __init__(self, sandbox) -> None:
        self.sandbox = sandbox
        self.procs_file = _procs_file(sandbox)
        self.swept = 0  # how many times the quota ended the sandbox's processes
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="agentpost-disk-guard", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _busy(self) -> bool:
        """Whether the container may hold a process besides its init (unknown: yes)."""
        if self.procs_file is None:
            return True
        try:
            with open(self.procs_file) as f:
                return len(f.read().split()) > 1
        except OSError:
            return True

    def _run(self) -> None:
        box = self.sandbox
        while not self._stop.wait(DISK_POLL_S):
            if box.closed:
                return
            try:
                over = self._busy() and box._disk.over()
            except OSError:
                continue
            if not over:
                continue
            with box._lock:  # after a running command (its own poll kills it past the quota)
                server = box.executor.server if box.executor is not None else None
                if box.closed or server is None or not server.alive():
                    continue
                server.sweep()
                self.swept += 1


def _procs_file(sandbox) -> str | None:
    """The host path of the container's ``cgroup.procs`` (cgroup v2), or None."""
    pid = sandbox.backend.cli(
        "inspect", "--format", "{{.State.Pid}}", sandbox.name, timeout_s=60, check=False
    ).strip()
    if not pid.isdigit() or pid == "0":
        return None
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            return f"/sys/fs/cgroup{line[3:]}/cgroup.procs"
    return None
