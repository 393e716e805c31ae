"""The verifier's own namespace on the bubblewrap backend (``BwrapSandbox.verifier_sandbox``).

The tests of a task run in a second bwrap beside the agent's, never inside it:

- **its own PID, mount, IPC and UTS namespaces**, entered by none of the agent's processes: they
  cannot see, signal or ptrace a test process, and the test tree is the whole of this PID
  namespace (its init is agentpost's executor, so "the tests have ended" means "the namespace is
  empty", and a process still there when ``test.sh`` exits is a stray: ``ExecResult.strays``);
- **its own dirs**: ``/tests``, ``/logs`` (so ``/logs/verifier``), ``/tmp`` and the home are fresh
  host dirs of this sandbox, in its own quota tmpfs (a full agent quota cannot stop the verifier
  from writing its reward); the agent's other writable dirs (``/app``, ``/solution``, the work
  dir) are bound from the agent's sandbox, or *copied* when servers of the agent are still running
  (``keep_processes``), so a live server cannot change what the tests read or plant a link;
- **two users**: with root rights the namespace is a user namespace made here that maps uid 0 to
  the verifier's own unprivileged host uid (``BwrapBackend.verifier_uid``) and ``AGENT_UID`` to the
  uid that owns the agent's files (``sandbox_uid``): the test tree runs as that root, and code the
  tests run through ``as-agent`` runs as ``AGENT_UID`` (it can write the agent's files and nothing
  of the verifier's). bwrap joins it with ``--userns``; its processes get every capability in it
  (``--cap-add ALL``), none outside. Without root rights, one uid only (0, our own): ``as-agent``
  then drops capabilities and relies on Landlock;
- **the network**: its own loopback; when the agent's servers were kept, the agent sandbox's
  network namespace (joined with ``nsenter`` before the drop), so the tests reach them on
  loopback and share nothing else with them.

After the tests, files the verifier's root made in the agent's bound dirs are given back to the
agent's uid, so a multi-step task's next step can change them.

Layer: io.
"""

from __future__ import annotations

import dataclasses
import os
import select
import shlex
import subprocess

from agentpost.errors import InfraError
from agentpost.sandbox.bwrap import BwrapSandbox

VERIFIER_DIRS = ("/tests", "/logs")
AGENT_UID = 65534  # the agent's files' owner inside the verifier's namespace ("nobody")
COPY_FROM = "/.agentpost-agent"  # where the agent's dirs are seen while they are copied


def user_namespace(creator: int, maps: list[tuple[int, int]]) -> int:
    """A new user namespace owned by host uid ``creator`` whose uids and gids map ``(inside,
    outside)`` pairs; returns an fd on it (needs root: only root writes such maps)."""
    drop = ["setpriv", f"--reuid={creator}", f"--regid={creator}", "--clear-groups", "--"]
    proc = subprocess.Popen(
        [*drop, "unshare", "--user", "--", "/bin/sh", "-c", "echo up; read x"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
    )
    try:
        if proc.stdout.readline() != b"up\n":
            raise InfraError(f"cannot make a user namespace: {proc.stderr.read()[-300:]!r}")
        text = "".join(f"{inside} {outside} 1\n" for inside, outside in maps)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{proc.pid}/{name}", "w") as f:
                f.write(text)
        return os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise InfraError(f"cannot make the verifier's user namespace: {e}") from e
    finally:
        proc.stdin.close()
        proc.wait()


def _netns_of(agent: BwrapSandbox) -> int:
    """An fd on the agent sandbox's network namespace (its executor must be running)."""
    ex = agent.executor
    if ex is None or ex.host_pid is None or ex.pidfd is None:
        raise InfraError("the agent's servers were kept but its sandbox has no running init")
    fd = os.open(f"/proc/{ex.host_pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    if select.select([ex.pidfd], [], [], 0)[0]:  # it ended (its pid may be another's now)
        os.close(fd)
        raise InfraError("the agent sandbox's init ended while the verifier joined its network")
    return fd


class BwrapVerifier(BwrapSandbox):
    """The tests' sandbox; ``agent_user`` is the uid:gid of the agent's files in it (None: the
    agent's uid is root's here, so ``as-agent`` drops capabilities instead)."""

    _needs_executor = True

    def __init__(self, agent: BwrapSandbox, kept: int):
        self.agent = agent
        self.kept = kept
        self.copied = kept > 0
        b = agent.backend
        self.privileged = os.geteuid() == 0
        self.agent_user = f"{AGENT_UID}:{AGENT_UID}" if self.privileged else None
        self.foreign = {
            p: h for p, h in agent.layout.mounts.items() if p not in VERIFIER_DIRS
        }  # the agent's dirs, as seen by the tests
        self.agent_dirs = tuple(self.foreign)
        own = VERIFIER_DIRS + (tuple(self.foreign) if self.copied else ())
        spec = dataclasses.replace(agent.spec, writable_dirs=own, keep_processes=False)
        fds = []
        try:
            if self.privileged:
                fds.append(
                    user_namespace(b.verifier_uid, [(0, b.verifier_uid), *self._agent_map()])
                )
            if self.copied:
                fds.append(_netns_of(agent))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        self.userns = fds[0] if self.privileged else None
        self.netns = fds[-1] if self.copied else None
        self.pass_fds = tuple(fds)
        self._copying = self.copied
        super().__init__(b, spec)
        try:
            if self.copied:
                self._copy_in()
        except BaseException:
            self.close()
            raise

    def _agent_map(self) -> list[tuple[int, int]]:
        owner = self.agent.backend.owner()
        return [(AGENT_UID, owner[0])] if owner else []

    def _owner(self) -> tuple[int, int] | None:
        if not self.privileged:
            return None
        uid = self.agent.backend.verifier_uid
        return (uid, uid)

    def _mount_points(self) -> list[str]:
        return sorted({*self.layout.writable, *self.foreign})

    def _binds(self) -> dict[str, str]:
        binds = dict(super()._binds())
        if not self.copied:
            binds.update(self.foreign)
        elif self._copying:  # seen read-only, elsewhere, while the copy is made
            binds.update({COPY_FROM + p: h for p, h in self.foreign.items()})
        return binds

    def _mount_args(self) -> list[str]:
        args = super()._mount_args()
        if self._copying:
            for p in self.foreign:
                args += ["--remount-ro", COPY_FROM + p]
        return args

    def _prefix(self) -> list[str]:
        join = ["nsenter", f"--net=/proc/self/fd/{self.netns}", "--"] if self.netns else []
        if not self.privileged:
            return join
        uid = str(self.backend.verifier_uid)
        return [*join, "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]

    def _ns_args(self) -> list[str]:
        net = "--share-net" if self.netns is not None or self.spec.network else "--unshare-net"
        ns = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", net]
        if self.privileged:
            ns += ["--userns", str(self.userns), "--uid", "0", "--gid", "0", "--cap-add", "ALL"]
        else:
            ns += ["--unshare-user", "--uid", "0", "--gid", "0"]
        return ["--remount-ro", "/", *ns, "--hostname", "sandbox", "--new-session"]

    def _copy_in(self) -> None:
        """Copy the agent's dirs into this sandbox's own (inside the namespace: a live server
        swapping a dir for a link mid-copy changes only what is copied), then restart the
        executor without the agent's dirs in view."""
        q = shlex.quote
        script = " && ".join(f"cp -a {q(COPY_FROM + p)}/. {q(p)}/" for p in self.foreign)
        res = self.exec(["/bin/sh", "-c", script or "true"], timeout_s=300)
        if res.exit_code != 0:
            raise InfraError(f"copying the agent's dirs for the tests failed: {res.stderr[-300:]}")
        self._copying = False
        with self._exec_lock:
            self.executor.stop()
            self._args = self._fixed_args()
            self.executor.bwrap_args = self._args

    def give_back(self) -> None:
        """Files the verifier's root made in the agent's bound dirs go back to the agent."""
        if self.copied or not self.privileged or not self.foreign or self.closed:
            return
        dirs = " ".join(shlex.quote(p) for p in self.foreign)
        u = AGENT_UID
        self.exec(
            f"find {dirs} -xdev \\( -uid 0 -o -gid 0 \\) -exec chown -h {u}:{u} {{}} + ; true",
            timeout_s=120,
        )

    def _abandon(self) -> None:
        super()._abandon()
        self._close_fds()

    def _close_fds(self) -> None:
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.pass_fds = ()

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._close_fds()
