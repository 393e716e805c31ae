"""The persistent executor for the docker backend: the container's entrypoint, no ``docker exec``.

The container runs ``python3 -I -S -B -c <exec_server.py>`` as PID 1 (no ``--init``, no keeper
loop), attached with ``docker run -i``: the protocol of ``exec_client`` travels over the attached
stdin and stdout of that one CLI process, so an exec is a frame each way through the daemon's
attach stream instead of a ``docker exec`` (and a second one to sweep) per command. The server
kills everything a command left behind before it answers (``kill(-1)`` spares only PID 1), so
the sweep needs no exec either; ``reset_private`` asks the server to sweep once more.

A command cannot end it: the container's PID 1 ignores every signal it has no handler for when
it comes from inside the container (``kill -9 -1`` as root included), it is not dumpable, and its
protocol fds never reach a command. If it dies anyway (the kernel's OOM killer within
``--memory``, ``docker kill``), the container stops; the next exec restarts it with
``docker start -ai`` (same volumes, same container), and the exec that was running reports
"memory limit" when Docker says the container was OOM-killed, else an infrastructure error.

The image's own ``ENTRYPOINT`` is replaced (``--entrypoint python3``), so an entrypoint that
ignores its command (Harbor's ``hello-healthcheck``: a server, then ``sleep infinity``) cannot
keep the executor from starting; an executor that does not answer within ``START_TIMEOUT_S`` is
a start failure that says so.

Needs ``python3`` (3.8+) in the image; an image without it (the ``minimal`` base) falls back to
a keeper container and one ``docker exec`` per command (``docker.py``), as does
``AGENTPOST_SANDBOX_EXEC=fresh``.

Users: ``exec(user=...)`` / ``spec.user`` run the command as that image user (name or uid,
optionally ``:group``), with its groups and, unless the environment sets ``HOME``, its home
from the image's passwd file, as ``docker exec -u`` does.

Layer: io.
"""

from __future__ import annotations

import os
import signal

from agentpost.sandbox.exec_client import Server, StartFailed, server_argv

NO_PYTHON = "executable file not found"  # docker's words when the image has no python3
START_TIMEOUT_S = 30.0  # `docker run` of a local image answers in a second or two


class DockerServer:
    """One container's executor. ``run_args`` are ``docker run`` arguments up to the image."""

    def __init__(self, backend, name: str, run_args: list[str], image: str):
        self.backend, self.name = backend, name
        self.run_args, self.image = run_args, image
        self.server: Server | None = None
        self.created = False
        self.starts = 0

    def up(self) -> Server:
        """The running server; starts the container (first time) or restarts it. Raises
        ``StartFailed`` (its ``detail`` contains ``NO_PYTHON`` for an image without python3)."""
        if self.server is not None and self.server.alive():
            return self.server
        self.stop()
        if self.created:
            argv = [self.backend.binary, "start", "-a", "-i", self.name]
        else:
            python, *rest = server_argv("python3")
            argv = [self.backend.binary, "run", "-i", "--sig-proxy=false", *self.run_args]
            argv += ["--entrypoint", python, self.image, *rest]
        server = Server(hard_kill=lambda: self._hard_kill(server))
        self.server = server
        self.created = True  # even a failed run may have created the container (close removes it)
        try:
            server.start(argv, env=dict(os.environ), timeout_s=START_TIMEOUT_S)
        except StartFailed:
            self.server = None
            raise
        self.starts += 1
        return server

    def _hard_kill(self, server: Server) -> None:
        """SIGKILL the container's PID 1 from outside (the container stops), then the CLI."""
        self.backend.cli("kill", self.name, timeout_s=60, check=False)
        if server.proc is not None:
            try:
                os.killpg(server.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def oom_killed(self) -> bool:
        out = self.backend.cli(
            "inspect", "--format", "{{.State.OOMKilled}}", self.name, timeout_s=60, check=False
        )
        return out.strip() == "true"

    def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()
