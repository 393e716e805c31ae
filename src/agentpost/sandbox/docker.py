"""The Docker backend: the bubblewrap contract on task images, through the docker CLI.

One long-lived container per sandbox whose entrypoint is the persistent executor
(``docker_server.py``): an exec is a frame each way over one attached ``docker run -i``, not a
``docker exec``. Fallback (an image without python3, or ``AGENTPOST_SANDBOX_EXEC=fresh``): a
keeper container (``docker run -d --init ... <keeper loop>``) and one ``docker exec`` per exec,
plus one to sweep. What a sandbox sees:
- the image root, read-only (``--read-only``): the task's tools, never writable by the agent, so
  nothing the agent does can change the interpreter or libraries the verifier runs later; or,
  with ``spec.writable_root`` (Harbor's container semantics, for task images), writable: the
  sandbox's own container layer, discarded with it, so a solution may install packages or write
  ``/etc`` as it would in Harbor;
- its writable directories (``/app`` … from the spec), ``/tmp`` and the home ``/root`` as
  anonymous volumes. Docker fills a fresh volume with the image's contents at that path (files,
  owners, modes), so what the Dockerfile put in ``/app`` or ``/root`` is there, while everything
  is still private to this container and gone with it. With ``writable_root`` they are no
  volumes but dirs of the container layer (made if the image lacks them), so that all of them
  are one filesystem, as in Harbor (a rename from ``/app`` to ``/tmp`` works). File access
  (put/get, snapshot, restore) goes through the volumes' host directories, or the layer's merged
  directory, with the same symlink-safe code as bwrap (``docker_volumes.py``; it needs the daemon
  on this host: a remote daemon is not supported);
- no network, ever: ``--network none``. A spec asking for the network is refused (the daemon
  here runs without a bridge; image *builds* may use the host network, running tasks never).
- ``/run`` is a small tmpfs (a writable root keeps the image's). ``/logs/agent`` is created world-writable so an agent running as
  another user can write its logs there, as Harbor does.

Users: ``spec.user`` (Harbor's ``[agent].user``) runs every exec as that image user unless
``exec(user=...)`` names another (the verifier runs as root by default).

Limits are container-wide: ``--pids-limit``, ``--memory`` (swap included; the smaller of
``memory_bytes`` and ``sandbox_memory_bytes``), ``--cpus`` (at most the host's count: docker
refuses more), ``--ulimit fsize``. Not enforced
here as a kernel quota: ``disk_bytes`` (overlay2 and volumes have none without xfs project
quotas); instead, while a command runs, the size of the container layer and the volumes is
polled every ``DISK_POLL_S`` and the command is killed past the quota ("disk quota"; it can
overshoot by what is written in one interval); with ``keep_processes`` also between commands
while the container holds a kept process, and then every process but init ends
(``docker_guard.py``). And
``ExecResult.killed`` says only "timeout" and "output cap" (an OOM kill of a command reads as
exit 137; one that takes the executor with it reads as "memory limit").
The hermetic contract of ``sandbox.base``: the view is the image (no host dir is mounted beyond
the writable volumes); nothing outlives an exec (the sweep); ``reset_private`` sweeps and
empties /tmp and the home; host file access resolves links inside the sandbox. The executor kills what a command leaves behind before it answers. In the fallback,
``docker exec`` does not kill what a command leaves behind, and killing the CLI
does not stop the command, so after every exec (and at its timeout) a sweep kills every process
in the container except init and the keeper, and counts them (``ExecResult.strays``); nothing
can hide from it in one PID namespace.

No leaks (``docker_reaper``): every container is labelled with its owning process; a watchdog
removes them when that process dies (even by SIGKILL), and a new backend removes those of owners
that are gone.

Layer: io.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import subprocess
import threading
import uuid

from agentpost.errors import InfraError
from agentpost.sandbox import docker_services
from agentpost.sandbox.base import ExecResult, SandboxSpec, Snapshot
from agentpost.sandbox.bwrap_server import wanted
from agentpost.sandbox.capture import argv_of, kill_group, run_capped, runaway_bytes
from agentpost.sandbox.docker_guard import DiskGuard
from agentpost.sandbox.docker_reaper import LABEL, ensure_watchdog, owner_of, prune_stale
from agentpost.sandbox.docker_server import NO_PYTHON, DockerServer
from agentpost.sandbox.docker_volumes import DISK_POLL_S, DiskWatch, VolumeLayout, layer_state
from agentpost.sandbox.exec_client import ServerDied, StartFailed

__all__ = ["LABEL", "DockerBackend", "DockerSandbox"]

DEFAULT_IMAGE = "agentpost-base-python:latest"
# Keeps the container up; any sleep works, and the sweep killing its current sleep is harmless.
_KEEPER = ["sh", "-c", "while :; do sleep 3600; done"]
# Kill everything but init (pid 1), the keeper (init's first child) and this shell, and print
# "swept N": N counts what was neither a zombie nor the keeper's sleep, i.e. what a command left
# running (ExecResult.strays). No fork inside the loop (a subshell would count itself).
_SWEEP = (
    'keep=$(cut -d" " -f1 /proc/1/task/1/children 2>/dev/null); n=0; '
    "for d in /proc/[0-9]*; do p=${d#/proc/}; "
    'case "$p" in 1|"$$"|"$keep") continue ;; esac; st=; pp=; '
    'while read -r k v _; do case "$k" in State:) st=$v ;; PPid:) pp=$v ;; esac; done '
    '2>/dev/null < "$d/status"; '
    'if kill -9 "$p" 2>/dev/null && [ -n "$st" ] && [ "$st" != Z ] && [ "$pp" != "$keep" ]; '
    "then n=$((n+1)); fi; done; echo swept $n"
)


VERIFIER = {
    "verifier": "agentpost.sandbox.docker_verifier:DockerVerifier"
}  # the tests' own namespace


class DockerSandbox:
    def __init__(self, backend: DockerBackend, spec: SandboxSpec):
        if spec.network:
            raise InfraError("the docker backend never gives a running sandbox a network")
        self.spec = spec
        self.backend = backend
        self.closed = False
        self.name = f"agentpost-{uuid.uuid4().hex[:12]}"
        self._lock = threading.Lock()  # execs on one sandbox are serialised
        self.executor: DockerServer | None = None
        self._services: list[str] = []
        self._guard: DiskGuard | None = None
        self.pause_error = ""  # why the last paused() could not freeze it ("" if it did)
        args = ["--name", self.name, "--label", f"{LABEL}={backend.owner}"]
        if not spec.writable_root:
            args += ["--read-only", "--tmpfs", self._run_tmpfs()]
        args += [*self._network_args(), "-w", spec.workdir]
        args += [*self._limit_args(), *self._volume_args()]
        for key, value in spec.env.items():
            args += ["-e", f"{key}={value}"]
        image = spec.image or DEFAULT_IMAGE
        try:
            if wanted():
                self._start_executor(args, image)
            if self.executor is None:
                keeper = ["--entrypoint", _KEEPER[0], image, *_KEEPER[1:]]
                backend.cli("run", "-d", "--init", *args, *keeper, timeout_s=300)
            self.layout = VolumeLayout(backend, self.name, spec.writable_dirs,
                                       spec.limits.disk_bytes, layer=spec.writable_root)  # fmt: skip
            self._disk = DiskWatch(backend, self.name, self.layout, spec.limits.disk_bytes)
            self.fs = self.layout.fs
            if spec.writable_root:  # the layer's dirs (volumes were made by docker)
                self._setup_exec(f"mkdir -p {' '.join(map(shlex.quote, spec.writable_dirs))}")
            self._root_exec("mkdir -p /logs/agent /logs/verifier && chmod 777 /logs/agent")
            if spec.services:
                self._services = docker_services.start(
                    backend, self.name, backend.owner, spec.services
                )
                self._setup_exec(docker_services.hosts_script(spec.services))
                docker_services.wait_healthy(backend, self.name, spec.services)
            if spec.keep_processes and self.executor is not None and self._disk.active:
                self._guard = DiskGuard(self)  # the quota between commands (docker_guard.py)
            # what set-up left in the layer: the verifier commits it only when it changed
            self.layer_base = layer_state(backend, self.name) if spec.writable_root else None
        except BaseException:
            self.close()
            raise

    def _run_tmpfs(self) -> str:
        return "/run:size=1m"

    def _network_args(self) -> list[str]:
        return ["--network", "none", "--hostname", "sandbox"]

    def _volume_args(self) -> list[str]:
        """A fresh anonymous volume for each writable dir, /tmp and the home (none for a
        writable root: they are the container layer's)."""
        if self.spec.writable_root:
            return []
        args = []
        for path in sorted({*self.spec.writable_dirs, "/tmp", "/root"}):
            args += ["-v", path]
        return args

    def verifier_sandbox(self):
        """The tests' own container (``docker_verifier.py``); every process of this sandbox is
        ended first but, with ``keep_processes``, the servers, which stay outside it."""
        from agentpost.components import resolve

        # by name: the verifier's module builds on this one (no import circle)
        verifier = resolve(VERIFIER, "verifier", "verifier sandbox")
        with self._lock:
            if self.closed:
                raise InfraError("verifier_sandbox on a closed sandbox")
            kept = 0
            server = self.executor.server if self.executor is not None else None
            if server is not None and server.alive():
                kept = server.prune() if self.spec.keep_processes else (server.sweep() or 0)
            elif self.executor is None:
                self._sweep()  # the fallback keeps no servers (a keeper container)
        return verifier(self, kept)

    def _start_executor(self, args: list[str], image: str) -> None:
        """Start the container with the executor as its entrypoint; on an image without
        python3, remove it again (the caller makes a keeper container instead)."""
        self.executor = DockerServer(self.backend, self.name, args, image)
        try:
            self.executor.up()
        except StartFailed as e:
            self.executor = None
            self.backend.cli("rm", "-f", "-v", self.name, timeout_s=60, check=False)
            if NO_PYTHON not in e.detail:
                raise InfraError(f"docker could not start the sandbox: {e.detail[-500:]}") from e

    def _limit_args(self) -> list[str]:
        lim = self.spec.limits
        memory = min(m for m in (lim.memory_bytes, getattr(lim, "sandbox_memory_bytes", 0)) if m)
        args = ["--pids-limit", str(lim.processes), "--memory", str(memory)]
        args += ["--memory-swap", str(memory)]
        args += ["--ulimit", f"fsize={lim.file_bytes}:{lim.file_bytes}"]
        if getattr(lim, "cpus", None):  # docker refuses more than the host has: that is no bound
            args += ["--cpus", str(min(lim.cpus, float(os.cpu_count() or 1)))]
        return args

    def _root_exec(self, script: str) -> None:
        if "/logs" not in self.spec.writable_dirs:
            return
        self._setup_exec(script)

    def _setup_exec(self, script: str) -> None:
        """Run ``script`` as root in the container (sandbox set-up)."""
        if self.executor is not None:
            r = self.exec(["sh", "-c", script], user="0", timeout_s=60)
            if r.exit_code != 0:
                raise InfraError(f"docker sandbox set-up failed: {r.stderr[-300:]}")
        else:
            self.backend.cli("exec", "-u", "0", self.name, "sh", "-c", script, timeout_s=60)

    def exec(
        self,
        command: str | list[str],
        *,
        timeout_s: float | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
        user: str | None = None,
    ) -> ExecResult:
        if self.closed:
            raise InfraError("exec on a closed sandbox")
        if not command:
            raise ValueError("exec needs a command")
        run_as = user or self.spec.user or str(getattr(self.spec, "uid", 0) or 0)
        if self.executor is not None:
            with self._lock:  # (no docker exec here: a setup fault comes in the executor's
                # answer, so a command printing docker's error text is just its output)
                return self._exec_server(command, timeout_s, cwd, env, stdin, run_as)
        argv = [self.backend.binary, "exec", "-w", cwd or self.spec.workdir]
        argv += ["-u", run_as]
        if stdin:
            argv.append("-i")
        for key, value in (env or {}).items():
            argv += ["-e", f"{key}={value}"]
        cmd = argv_of(command)
        proc = subprocess.Popen(
            [*argv, self.name, *cmd],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        lim = self.spec.limits
        try:
            result = run_capped(
                proc,
                stdin=stdin,
                timeout_s=self.spec.default_timeout_s if timeout_s is None else timeout_s,
                cap=lim.output_bytes,
                kill_after=runaway_bytes(lim.output_bytes),
                kill=self._kill,
                **self._watch(),
            )
        finally:
            strays = self._sweep()
        if result.exit_code in (125, 126, 127) and _exec_failed(result):
            raise InfraError(f"docker exec failed: {(result.stderr or result.stdout)[-300:]}")
        # what the command left running (as the executor counts it when its first process
        # exits; here at the sweep just after): a test tree's stray is no clean verdict
        return dataclasses.replace(result, strays=strays) if strays else result

    def _exec_server(self, command, timeout_s, cwd, env, stdin, run_as: str) -> ExecResult:
        if self.closed:
            raise InfraError("exec on a closed sandbox")
        try:
            server = self.executor.up()
        except StartFailed as e:
            raise InfraError(f"docker could not restart the sandbox: {e.detail[-500:]}") from e
        env = env or {}
        cmd = argv_of(command)
        req = {"argv": cmd, "cwd": cwd or self.spec.workdir, "env": env}
        req["user"] = None if run_as in ("0", "root", "0:0") else run_as
        req["keep_home"] = "HOME" in env or "HOME" in self.spec.env
        req["keep"] = self.spec.keep_processes
        lim = self.spec.limits
        try:
            return server.run(
                req,
                stdin=stdin,
                timeout_s=self.spec.default_timeout_s if timeout_s is None else timeout_s,
                cap=lim.output_bytes,
                kill_after=runaway_bytes(lim.output_bytes),
                **self._watch(),
            )
        except ServerDied as e:
            self.executor.stop()
            if self.executor.oom_killed():  # the command took the executor with it
                return ExecResult(137, "", "", False, 0.0, False, killed="memory limit")
            raise InfraError(f"{e} (the container restarts on the next exec)") from e
        finally:
            if server.dead:
                self.executor.stop()

    def _watch(self) -> dict:
        """The disk-quota poll for a running command (none without a quota)."""
        if not self._disk.active:
            return {}
        return {"watch": self._disk.over, "watch_every_s": DISK_POLL_S}

    def cancel(self) -> None:
        """Kill the command running in this sandbox now (from any thread)."""
        executor = self.executor
        server = executor.server if executor is not None else None
        if server is not None:
            server.kill()

    def _kill(self, proc: subprocess.Popen) -> None:
        self._sweep()
        kill_group(proc)

    def _sweep(self) -> int:
        """Kill every process but init and the keeper (the fallback's rule 2); how many it
        found running (0 when the sweep could not say)."""
        out = self.backend.cli(
            "exec", "-u", "0", self.name, "sh", "-c", _SWEEP, timeout_s=60, check=False
        )
        words = out.split()
        return int(words[-1]) if words[-2:-1] == ["swept"] and words[-1].isdigit() else 0

    def reset_private(self) -> None:
        """Contract rule 3: kill every process the sandbox ran (all but init and the keeper),
        then empty /tmp and the home through their volumes' host dirs."""
        if self.closed:
            raise InfraError("reset_private on a closed sandbox")
        if self.executor is None:
            self._sweep()
        else:
            with self._lock:
                if self.executor.server is not None and self.executor.server.alive():
                    self.executor.server.sweep()
        self.layout.reset_private()

    @contextlib.contextmanager
    def paused(self):
        """Freeze what this sandbox left running (``docker pause``, the cgroup freezer) for the
        block: with ``keep_processes`` its kept processes get no CPU, write nothing and answer
        nothing while a control is graded beside it (``tasks.evaluate``), so they cannot slow
        or starve it into a timeout. Without kept processes nothing runs: nothing to do."""
        if not self.spec.keep_processes or self.closed:
            yield
            return
        with self._lock:  # not while a command runs (nor the disk guard's sweep)
            try:
                self.backend.cli("pause", self.name, timeout_s=60)
            except InfraError as e:  # (then the control runs beside it as before)
                self.pause_error, paused = str(e), False
            else:
                self.pause_error, paused = "", True
            try:
                yield
            finally:
                if paused and not self.closed:
                    self.backend.cli("unpause", self.name, timeout_s=60, check=False)

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self.fs.write(path, data, mode)

    def put_dir(self, host_dir: str, path: str) -> None:
        self.fs.write_tree(host_dir, path)

    def get(self, path: str, max_bytes: int | None = None) -> bytes:
        return self.fs.read(path, max_bytes)

    def snapshot(self, dest: str | None = None) -> Snapshot:
        return Snapshot(path=self.layout.snapshot(dest), spec=self.spec)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._guard is not None:
                self._guard.stop()
            self.cancel()  # an exec in another thread returns as cancelled, not as a fault
            docker_services.stop(self.backend, self._services)
            self.backend.cli("rm", "-f", "-v", self.name, timeout_s=60, check=False)
            server = self.executor.server if self.executor is not None else None
            if server is not None:
                server.dead = True  # the container is gone: nothing left to kill
                server.close()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _exec_failed(result: ExecResult) -> bool:
    """docker's own errors (container gone, unknown user), not the command's exit status; the
    CLI prints some of them on stdout."""
    for text in (result.stderr, result.stdout):
        first = text.strip().splitlines()[:1]
        if first and (
            first[0].startswith(("Error response from daemon", "OCI runtime exec failed"))
            or first[0].startswith("unable to find user")
        ):
            return True
    return False


class DockerBackend:
    """``binary``: ``docker`` or ``podman`` (default: whichever is on PATH, docker first)."""

    name = "docker"

    def __init__(self, binary: str | None = None):
        self.binary = binary or shutil.which("docker") or shutil.which("podman") or "docker"
        self._pruned = False

    @property
    def owner(self) -> str:
        """This process, as container labels name it (a backend pickled to a Ray worker labels
        its containers with the worker, whose watchdog then cleans up after it)."""
        return owner_of(os.getpid())

    def cli(self, *args: str, timeout_s: float, check: bool = True, stdin=None) -> str:
        try:
            out = subprocess.run(
                [self.binary, *args],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
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

    def prune_stale(self) -> int:
        """Remove containers whose owning agentpost process is gone; returns how many."""
        return prune_stale(self)

    def create(self, spec: SandboxSpec | None = None) -> DockerSandbox:
        if not self._pruned:
            self._pruned = True
            prune_stale(self)
        ensure_watchdog(self.binary, self.owner)
        return DockerSandbox(self, spec or SandboxSpec())

    def restore(self, snapshot: Snapshot) -> DockerSandbox:
        box = self.create(snapshot.spec)
        try:
            box.layout.restore(snapshot.path)
        except BaseException:
            box.close()
            raise
        return box
