"""The bubblewrap backend (the default): about a plain process per exec, no daemon, no image.

A sandbox starts one ``bwrap`` with its own user, PID, network, IPC and UTS namespaces, and in
it a persistent executor that runs each exec as a fresh process (``bwrap_server.py``; the
per-exec bwrap described below stays as the fallback, ``AGENTPOST_SANDBOX_EXEC=fresh``). The
root is a tmpfs holding read-only bind mounts of the host's system dirs only (the hermetic view:
``hermetic.py`` says what is visible and why; ``view="mirror"`` binds every host entry, as before),
so mount points for writable directories such as ``/app`` can be created on it; it is then
remounted read-only. Writable directories are host temp dirs under one per-sandbox directory that
persist between execs; ``/tmp`` and ``/root`` (the home) are private per-sandbox dirs that persist
too but are not part of snapshots, and ``reset_private`` replaces them (the verifier's fresh HOME
and TMP). ``/run`` is an empty tmpfs so host sockets (e.g. a Docker
socket) are out of reach: a pathname Unix socket ignores network namespaces. Every tmpfs is
RAM, so each is bounded (``/dev/shm`` by the memory limit, up to 512 MiB) and bwrap's ``/dev``
(half the host's RAM by default) is remounted read-only: device nodes still work.
Whole-sandbox limits (a memory cgroup, a disk quota on the sandbox's host dir) are in
``limits.py``, with their fallbacks.

Containment:
- Nothing outlives an exec: the executor, the init of the sandbox's PID namespace, kills every
  other process in it when the command exits (``exec_server.py``); at the timeout it kills them
  too and still answers. Ending the executor (SIGKILL through a pidfd) empties the namespace at
  once: ``cancel``, ``reset_private``, ``close``, and agentpost's own exit (its stdin closes).
  The per-exec fallback does the same with one namespace per exec (``bwrap_fresh.py``).
- Limits (processes, address space, file size) are set *inside* the new user namespace (by the
  executor on itself, inherited by every command; ``prlimit`` in the fallback). The kernel exempts host root from RLIMIT_NPROC, so when agentpost runs as root,
  bwrap runs under ``setpriv`` as an unprivileged uid (``sandbox_uid``, 65534 by default) mapped
  to uid 0 inside; the process count is then charged per sandbox user namespace, so a fork bomb
  in one sandbox stops at ``limits.processes`` without starving other sandboxes. Sandbox files
  on the host belong to that uid.
- Cost: with the executor, an exec is one ``posix_spawn`` in the sandbox plus a frame each way
  (``bench/sandbox.py``, section ``executor``); the namespaces and ~30 mounts are paid once per
  sandbox (and after ``reset_private``). The fallback pays them per exec.
- Known limit: a pathname Unix socket that is world-writable and lies in a visible host dir
  (the hermetic view shows only /usr, /etc and the like; the mirror view all of the host root
  outside ``/run``, ``/tmp`` and ``/dev``) can still be connected to (connect() needs write
  permission on the socket, not a writable mount). Closing that needs seccomp or Landlock; use a
  ``rootfs`` (or the docker backend) on hosts that keep such sockets.
- Departure from a container: memory is bounded per sandbox only where a memory cgroup can be
  made (``limits.py``), else per process (RLIMIT_AS, always set as well); a string command runs under ``bash -c``, not a login shell,
  because Debian's /etc/profile would reset a PATH given in ``spec.env``.

Layer: io.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
import threading

from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult, SandboxSpec, Snapshot
from agentpost.sandbox.bwrap_fresh import exec_fresh
from agentpost.sandbox.bwrap_launch import ancestors, base_env, kill_tree, mirror_args
from agentpost.sandbox.bwrap_server import BwrapServer, find_python, wanted
from agentpost.sandbox.capture import argv_of, runaway_bytes
from agentpost.sandbox.exec_client import ServerDied, StartFailed
from agentpost.sandbox.hermetic import VISIBLE, covers, hidden_entries
from agentpost.sandbox.hostfs import HostDirFiles, Layout, prune_stale
from agentpost.sandbox.limits import JOIN, MemoryCgroup, quota_full, usage_bytes

_NOT_MIRRORED = {"/proc", "/dev", "/tmp", "/run", "/root"}


VERIFIER = {
    "verifier": "agentpost.sandbox.bwrap_verifier:BwrapVerifier"
}  # the tests' own namespace


class BwrapSandbox(HostDirFiles):
    """One sandbox: a host directory holding its writable dirs, and a bwrap command line."""

    def __init__(self, backend: BwrapBackend, spec: SandboxSpec):
        self.spec = spec
        self.backend = backend
        self.closed = False
        self._running: tuple[subprocess.Popen, int | None] | None = None
        self._cancel_lock = threading.Lock()  # cancel never signals a pidfd being closed
        self._cancelled = False  # the per-exec path's running command was cancelled
        self._exec_lock = threading.Lock()  # execs on one sandbox are serialised
        self.executor: BwrapServer | None = None
        self._ooms: tuple[int | None, int] | None = (
            None  # (executor start, OOM kills) after an exec
        )
        lim = spec.limits
        self.layout = Layout(
            backend.ensure_base_dir(), spec.writable_dirs, self._owner(), lim.disk_bytes
        )
        self.root = self.layout.root
        self.fs = self.layout.fs
        try:
            self.writable = self._mount_points()
            mem = lim.sandbox_memory_bytes
            self.cgroup = MemoryCgroup.make(mem) if mem else None  # 0: no cgroup (bench)
            self._args = self._fixed_args()
            python = find_python(spec.rootfs or "/")
            if (wanted() or self._needs_executor) and python:
                lim = spec.limits
                rlimits = {"NPROC": lim.processes, "AS": lim.memory_bytes, "FSIZE": lim.file_bytes}
                self.executor = BwrapServer(
                    self._args, base_env(spec), python, rlimits, self.pass_fds
                )
        except BaseException:
            self._abandon()
            raise

    _needs_executor = False  # the verifier's namespace uses it even with AGENTPOST_SANDBOX_EXEC

    def _owner(self) -> tuple[int, int] | None:
        return self.backend.owner()

    def _mount_points(self) -> list[str]:
        """Every writable sandbox dir bound from the host (their parents must exist)."""
        return self.layout.writable

    def _abandon(self) -> None:
        """Undo a half-made sandbox."""
        self.layout.remove()

    pass_fds: tuple[int, ...] = ()  # fds the command line names (the verifier's namespaces)

    def _fixed_args(self) -> list[str]:
        join = ["/bin/sh", "-c", JOIN, self.cgroup.procs] if self.cgroup else []
        args = [*join, *self._prefix(), self.backend.bwrap, *self._mount_args()]
        return args + self._ns_args()

    def _prefix(self) -> list[str]:
        """What runs before bwrap (the drop to the unprivileged uid)."""
        return self.backend.drop_prefix()

    def _binds(self) -> dict[str, str]:
        """{sandbox path: host dir} bound read-write."""
        return {**self.layout.private, **self.layout.mounts}

    def _mount_args(self) -> list[str]:
        rootfs = self.spec.rootfs or "/"
        keep = set(self.writable) | ancestors(self.writable)
        skip = _NOT_MIRRORED | set(self.writable) | hidden_entries(rootfs, self.spec.view, keep)
        args = mirror_args(rootfs, "/", skip, ancestors(self.writable))
        visible = ["/" + n for n in VISIBLE] if self.spec.view == "hermetic" else ["/"]
        for path in covers(rootfs, visible, self.spec.hide):
            args += ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
        shm = str(min(self.spec.limits.memory_bytes, 512 << 20))  # tmpfs is RAM: bound it
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", shm]
        args += ["--tmpfs", "/dev/shm", "--remount-ro", "/dev"]  # /dev's tmpfs is unbounded
        args += ["--size", str(1 << 20), "--tmpfs", "/run"]
        resolv = os.path.realpath("/etc/resolv.conf")
        if self.spec.network and rootfs == "/" and resolv.startswith("/run/"):
            args += ["--ro-bind", resolv, resolv]
        base = self.backend.ensure_base_dir()
        if rootfs == "/" and self.spec.view == "mirror" and not base.startswith("/tmp/"):
            args += ["--tmpfs", base]  # other sandboxes' files are not this one's business
        for spath, host in self._binds().items():
            args += ["--bind", host, spath]
        return args

    def _ns_args(self) -> list[str]:
        uid = str(self.spec.uid)
        args = ["--remount-ro", "/", "--unshare-all", "--unshare-user", "--uid", uid]
        args += ["--gid", uid, "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if self.spec.network:
            args.append("--share-net")
        return args

    def exec(
        self,
        command: str | list[str],
        *,
        timeout_s: float | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        if self.closed:
            raise InfraError("exec on a closed sandbox")
        if not command:
            raise ValueError("exec needs a command")
        with self._exec_lock:
            if self.closed:
                raise InfraError("exec on a closed sandbox")
            ooms = self._oom_count()
            lim = self.spec.limits
            timeout = self.spec.default_timeout_s if timeout_s is None else timeout_s
            server = self._server()
            if server is None:
                return self._why_killed(exec_fresh(self, command, timeout, cwd, env, stdin), ooms)
            cmd = argv_of(command)
            req = {"argv": cmd, "cwd": cwd or self.spec.workdir, "user": None, "env": env or {}}
            req["keep"] = self.spec.keep_processes
            try:
                result = server.run(
                    req,
                    stdin=stdin,
                    timeout_s=timeout,
                    cap=lim.output_bytes,
                    kill_after=runaway_bytes(lim.output_bytes),
                    watch=None if self.layout.quota else self._over_quota,
                )
            except ServerDied as e:
                self.executor.stop()
                if self.cgroup and self.cgroup.oom_kills() > ooms:  # the command's own doing
                    return ExecResult(137, "", "", False, 0.0, False, killed="memory limit")
                raise InfraError(f"{e} (a new one starts on the next exec)") from e
            finally:
                if self.executor.server is not None and self.executor.server.dead:
                    self.executor.stop()  # killed (cancel, no answer): nothing may outlive exec
            return self._why_killed(result, ooms)

    def _server(self):
        """The running executor, started if need be; None: this sandbox execs the old way."""
        if self.executor is None or self.executor.fallback:
            return None
        try:
            return self.executor.up()
        except StartFailed as e:
            raise InfraError(f"bwrap could not set up the sandbox: {e.detail}") from e

    def _over_quota(self) -> str | None:
        """The disk-quota fallback without a quota mount (``limits.py``)."""
        over = usage_bytes(self.root) > self.spec.limits.disk_bytes
        return "disk quota" if over else None

    def _oom_count(self) -> int:
        """The cgroup's OOM kills before an exec: the count read after the last exec while
        the same executor runs (nothing of the sandbox runs between execs), else read now."""
        if not self.cgroup:
            return 0
        starts = self.executor.starts if self.executor else None
        if self._ooms is None or self._ooms[0] != starts or starts is None:
            return self.cgroup.oom_kills()
        return self._ooms[1]

    def _why_killed(self, result: ExecResult, ooms_before: int) -> ExecResult:
        """Name the whole-sandbox limit an exec ran into (the command's own exit code stays)."""
        self._ooms = None
        if result.killed in (None, "timeout") and self.cgroup:
            now = self.cgroup.oom_kills()
            self._ooms = (self.executor.starts if self.executor else None, now)
            if now > ooms_before:
                return dataclasses.replace(result, killed="memory limit")
        if result.killed is None and self.layout.quota and quota_full(self.root):
            return dataclasses.replace(result, killed="disk quota")
        return result

    def cancel(self) -> None:
        """Kill the command running in this sandbox now (from any thread); its ``exec`` returns
        as killed. The runner calls it on Ctrl-C so a stop never waits for a long command."""
        with self._cancel_lock:
            running = self._running
            if running is not None and running[0].returncode is None:
                self._cancelled = True  # the exec says why it ended (killed="cancelled")
                kill_tree(*running)
        executor = self.executor
        server = executor.server if executor is not None else None
        if server is not None:
            server.kill()  # the exec returns as killed; the next one starts a new executor

    def verifier_sandbox(self):
        """The tests' own namespace (``bwrap_verifier.py``); every process of this sandbox is
        ended first but, with ``keep_processes``, the servers, which stay outside it."""
        from agentpost.components import resolve

        # by name: the verifier's module builds on this one (no import circle)
        verifier = resolve(VERIFIER, "verifier", "verifier sandbox")
        with self._exec_lock:
            if self.closed:
                raise InfraError("verifier_sandbox on a closed sandbox")
            server = self.executor.server if self.executor is not None else None
            kept = 0
            if server is not None and server.alive():
                kept = server.prune() if self.spec.keep_processes else (server.sweep() or 0)
            return verifier(self, kept)

    def reset_private(self) -> None:
        """Fresh /tmp and home (contract rule 3). The executor's binds point at the old dirs, so
        it is ended first (which also ends every process) and the next exec starts a new one."""
        with self._exec_lock:
            if self.executor is not None:
                self.executor.stop()
            self.layout.reset_private()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.executor is not None:
                self.cancel()  # an exec in another thread returns at once
                with self._exec_lock:
                    self.executor.stop()
            self.layout.remove()
            if self.cgroup:
                self.cgroup.remove()

    def __enter__(self) -> BwrapSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BwrapBackend:
    """Creates bubblewrap sandboxes. ``base_dir`` holds one host dir per sandbox."""

    name = "bwrap"

    def __init__(
        self, base_dir: str | None = None, sandbox_uid: int = 65534, verifier_uid: int = 65533
    ):
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.setpriv = shutil.which("setpriv") or "setpriv"
        uid = os.geteuid()
        name = "agentpost-sandboxes" + ("" if uid == 0 else f"-{uid}")
        self.base_dir = base_dir or os.path.join(tempfile.gettempdir(), name)
        self.sandbox_uid = sandbox_uid
        self.verifier_uid = verifier_uid  # the tests' root, on the host (bwrap_verifier.py)
        self._available: bool | None = None
        self._pruned = False

    def ensure_base_dir(self) -> str:
        """The base dir, made traversable (not listable) for the unprivileged bwrap uid."""
        os.makedirs(self.base_dir, mode=0o711, exist_ok=True)
        st = os.stat(self.base_dir)
        if os.geteuid() == 0 and st.st_uid == 0 and not st.st_mode & 0o001:
            os.chmod(self.base_dir, (st.st_mode & 0o7777) | 0o111)
        if not self._pruned:
            self._pruned = True
            prune_stale(self.base_dir)
        return os.path.realpath(self.base_dir)

    def owner(self) -> tuple[int, int] | None:
        """Host (uid, gid) that owns sandbox files: the unprivileged uid when we are root."""
        return (self.sandbox_uid, self.sandbox_uid) if os.geteuid() == 0 else None

    def drop_prefix(self) -> list[str]:
        """``setpriv`` to the unprivileged uid when we are root. Not Popen(user=...): that
        forbids vfork, and forking a process with a 1.5 GB heap costs ~100 ms, setpriv ~1 ms."""
        if os.geteuid() != 0:
            return []
        uid = str(self.sandbox_uid)
        return [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]

    def create(self, spec: SandboxSpec | None = None) -> BwrapSandbox:
        return BwrapSandbox(self, spec or SandboxSpec())

    def restore(self, snapshot: Snapshot) -> BwrapSandbox:
        box = self.create(snapshot.spec)
        try:
            if box.executor is not None:
                box.executor.stop()  # none runs yet; the restored dirs are bound at its start
            box.layout.restore(snapshot.path)
        except BaseException:
            box.close()
            raise
        return box

    def available(self) -> bool:
        """Whether bwrap, prlimit and setpriv exist and a trivial sandbox runs (checked once)."""
        if self._available is None:
            ok = all(shutil.which(t) for t in ("bwrap", "prlimit", "setpriv"))
            if ok:
                try:
                    with self.create(SandboxSpec(writable_dirs=("/app",))) as box:
                        ok = box.exec(["true"], timeout_s=20).exit_code == 0
                except (OSError, InfraError):
                    ok = False
            self._available = ok
        return self._available
