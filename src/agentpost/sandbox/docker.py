"""The Docker/Podman backend: the same contract as bubblewrap, with task images, via the CLI.

One long-lived container per sandbox (``docker run -d --init ... <keeper loop>``), one
``docker exec`` per exec. The image root is read-only (``--read-only``), as in the bwrap
backend; the writable dirs, ``/tmp`` and ``/root`` are host dirs bind-mounted in, so put/get,
snapshot and restore are the same host-side code as bwrap's (which needs the daemon on this
host; a remote daemon is not supported). Limits are container-wide: ``--pids-limit``,
``--memory``, ``--ulimit fsize``.

``docker exec`` does not kill what a command leaves behind, and killing the CLI does not stop
the command, so after every exec (and at its timeout) a sweep kills every process in the
container except init and the keeper. A process that dies on its own between the sweep's listing
and its kill is harmless; nothing can hide from the sweep inside one PID namespace.

Layer: io.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid

from agentpost.errors import InfraError
from agentpost.sandbox.base import ExecResult, SandboxSpec, Snapshot
from agentpost.sandbox.capture import kill_group, run_capped
from agentpost.sandbox.hostfs import HostDirFiles, Layout

DEFAULT_IMAGE = "python:3.11-slim"
# Keeps the container up; any sleep works (busybox has no `sleep infinity`), and the sweep
# killing its current sleep is harmless.
_KEEPER = ["sh", "-c", "while :; do sleep 3600; done"]
# Kill everything but init (pid 1), the keeper (init's first child) and this shell.
_SWEEP = (
    'keep=$(cut -d" " -f1 /proc/1/task/1/children 2>/dev/null); '
    "for d in /proc/[0-9]*; do p=${d#/proc/}; "
    'case "$p" in 1|"$$"|"$keep") ;; *) kill -9 "$p" 2>/dev/null ;; esac; done; true'
)


class DockerSandbox(HostDirFiles):
    def __init__(self, backend: DockerBackend, spec: SandboxSpec):
        self.spec = spec
        self.backend = backend
        self.closed = False
        self.layout = Layout(backend.base_dir(), spec.writable_dirs, None)
        self.root = self.layout.root
        self.fs = self.layout.fs
        self.name = f"agentpost-{uuid.uuid4().hex[:12]}"
        lim = spec.limits
        args = ["run", "-d", "--init", "--name", self.name, "--read-only"]
        args += ["--network", "bridge" if spec.network else "none", "-w", spec.workdir]
        args += ["--tmpfs", "/run"]
        args += ["--pids-limit", str(lim.processes), "--memory", str(lim.memory_bytes)]
        args += ["--ulimit", f"fsize={lim.file_bytes}:{lim.file_bytes}"]
        for spath, host in {**self.layout.private, **self.layout.mounts}.items():
            args += ["-v", f"{host}:{spath}"]
        for key, value in spec.env.items():
            args += ["-e", f"{key}={value}"]
        args += [spec.image or DEFAULT_IMAGE, *_KEEPER]
        try:
            backend.cli(*args, timeout_s=300)
        except BaseException:
            self.layout.remove()
            raise

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
        argv = [self.backend.binary, "exec", "-w", cwd or self.spec.workdir]
        if stdin:
            argv.append("-i")
        for key, value in (env or {}).items():
            argv += ["-e", f"{key}={value}"]
        cmd = ["bash", "-c", command] if isinstance(command, str) else list(command)
        proc = subprocess.Popen(
            [*argv, self.name, *cmd],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        lim = self.spec.limits
        try:
            return run_capped(
                proc,
                stdin=stdin,
                timeout_s=self.spec.default_timeout_s if timeout_s is None else timeout_s,
                cap=lim.output_bytes,
                kill_after=max(8 * lim.output_bytes, 64 << 20),
                kill=self._kill,
            )
        finally:
            self._sweep()

    def _kill(self, proc: subprocess.Popen) -> None:
        self._sweep()
        kill_group(proc)

    def _sweep(self) -> None:
        self.backend.cli("exec", self.name, "sh", "-c", _SWEEP, timeout_s=60, check=False)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.backend.cli("rm", "-f", self.name, timeout_s=60, check=False)
            self.layout.remove()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DockerBackend:
    """``binary``: ``docker`` or ``podman`` (default: whichever is on PATH, docker first)."""

    name = "docker"

    def __init__(self, binary: str | None = None):
        self.binary = binary or shutil.which("docker") or shutil.which("podman") or "docker"

    def base_dir(self) -> str:
        base = os.path.join(tempfile.gettempdir(), "agentpost-docker")
        os.makedirs(base, mode=0o711, exist_ok=True)
        return base

    def cli(self, *args: str, timeout_s: float, check: bool = True) -> str:
        try:
            out = subprocess.run(
                [self.binary, *args], capture_output=True, text=True, timeout=timeout_s
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InfraError(f"{self.binary} {args[0]}: {e}") from e
        if check and out.returncode != 0:
            raise InfraError(f"{self.binary} {args[0]} failed: {out.stderr.strip()[-500:]}")
        return out.stdout

    def available(self) -> bool:
        """Whether a daemon answers (``docker info``) within a few seconds."""
        try:
            self.cli("info", "--format", "{{.ServerVersion}}", timeout_s=10)
        except InfraError:
            return False
        return True

    def create(self, spec: SandboxSpec | None = None) -> DockerSandbox:
        return DockerSandbox(self, spec or SandboxSpec())

    def restore(self, snapshot: Snapshot) -> DockerSandbox:
        box = self.create(snapshot.spec)
        try:
            box.layout.restore(snapshot.path)
        except BaseException:
            box.close()
            raise
        return box
