"""The verifier's own container on the docker backend (``DockerSandbox.verifier_sandbox``).

The tests run in a second container of the task's image beside the agent's, never in it:

- **its own PID, mount, IPC and UTS namespaces** (a container of its own): no agent process can
  see, signal or ptrace a test process; its init is agentpost's executor, so the tests have ended
  when the container's processes have, and one left when ``test.sh`` exits is a stray
  (``ExecResult.strays``). Where the image has no python3 (the keeper fallback) the sweep after
  ``test.sh`` counts and kills them before the result is read;
- **its own volumes**: ``/tests``, ``/logs``, ``/tmp`` and the home are fresh anonymous volumes
  (Docker fills them from the image, as for the agent); the agent's other writable dirs are the
  agent container's own volumes, mounted by name, or fresh volumes holding a *copy* of them when
  the agent's servers were kept (``keep_processes``: a live server cannot change what the tests
  read or plant a link meanwhile). The copy is made by a one-off container of the same image
  that sees the agent's volumes read-only. With ``writable_root`` the agent's dirs, ``/tmp`` and
  the home are its container layer's (one filesystem, as in Harbor), so they come in the
  committed image below, a copy already, and the agent's ``/tmp`` is the tests' ``/tmp`` as in
  Harbor's one container; ``/tests`` and ``/logs`` are still fresh volumes, and empty ones
  (``volume-nocopy``) when the image is the agent's commit: what the agent wrote there in its
  layer is never the tests' (a planted ``/logs/verifier/reward.txt``, a ``/tests/conftest.py``);
- **the network**: none, or, when servers were kept or the task has compose services, the agent
  container's network namespace (``--network container:<agent>``): the tests reach them on
  loopback (and the services by name) and share nothing else;
- **the root**: the task's image, read-only, as the agent's; with ``writable_root`` (Harbor's
  semantics for tasks that install software) the agent's root as it left it, through
  ``docker commit`` of its container when its layer holds a change (the image is removed with the
  verifier; an unchanged root is the task's image itself). Then the image's
  ``python3``, shell and tools are the agent's state: the executor and ``as-agent`` run from them,
  so the guarantees that rest on them (strays, as-agent) hold only as far as the agent left
  those tools alone; the separate container, the host's ``docker kill`` of it before the result
  is read (``end``), the host-side read, and the outcome rules still hold
  (``docs/threat-model.md``).

The tests run as ``[verifier].user`` (root by default) and code they run through ``as-agent``
as the agent's user (``agent_user``: the agent sandbox's image user; None when that is root, then
``as-agent`` drops every capability instead). Docker gives volumes no quota, so "their own space"
here means separate volumes, not a separate size limit (``docker.py`` states the same for the
agent's).

Layer: io.
"""

from __future__ import annotations

import dataclasses
import os
import shlex

from agentpost.errors import InfraError
from agentpost.ingress.hostdir import descend, open_root
from agentpost.ingress.keys import LinkRefused
from agentpost.sandbox.docker import DEFAULT_IMAGE, DockerSandbox
from agentpost.sandbox.docker_volumes import layer_state

VERIFIER_DIRS = ("/tests", "/logs")
HARNESS_DIR = "/run/agentpost"  # where the tests' as-agent is installed (tasks/verifier.py)
COPY_FROM = "/.agentpost-agent"


class DockerVerifier(DockerSandbox):
    def __init__(self, agent: DockerSandbox, kept: int):
        self.agent = agent
        self.kept = kept
        self.layer = agent.spec.writable_root  # the agent's dirs come with its committed layer
        self.agent_dirs = tuple(p for p in agent.layout.mounts if p not in VERIFIER_DIRS)
        # the agent's dirs in volumes: all of them, or, in a writable root, those the image
        # declares a VOLUME for (docker makes one all the same, and a commit leaves it out)
        names = agent.layout.names
        self.volume_dirs = (
            tuple(p for p in (*self.agent_dirs, "/tmp", "/root") if names.get(p))
            if self.layer
            else self.agent_dirs
        )
        self.copied = kept > 0 and bool(self.volume_dirs)
        self.shares_net = kept > 0 or bool(agent.spec.services)
        user = agent.spec.user
        self.agent_user = None if user in (None, "", "0", "root", "0:0") else user
        changed = agent.spec.writable_root and _root_changed(agent)
        self.committed = _commit(agent) if changed else None
        spec = dataclasses.replace(
            agent.spec,
            writable_dirs=(*VERIFIER_DIRS, *self.agent_dirs),
            keep_processes=False,
            user=None,
            services=(),
            image=self.committed or agent.spec.image,
        )
        try:
            super().__init__(agent.backend, spec)
        except BaseException:
            self._remove_image()
            raise
        try:
            if self.committed:  # (an unchanged root is the task's image: not the agent's)
                self._check_own_dirs()
            if self.copied:
                self._copy_in()
        except BaseException:
            self.close()
            raise

    def _check_own_dirs(self) -> None:
        """With the agent's committed root, every name on the way to ``/tests``, ``/logs`` and
        the harness's ``/run/agentpost`` is the agent's: docker mounts a volume (or tmpfs)
        where a link there leads, e.g. the verifier's ``/logs`` inside the agent's ``/app``
        for ``/logs -> /app/L``, where code run through as-agent may write the reward. So each
        must be a real directory (read on the host, in this container's own layer, which no
        agent process can change); otherwise the verifier refuses that root (the outcome rules
        then give the agent its 0: a control in a fresh sandbox grades cleanly)."""
        root = open_root(self.layout.merged)
        try:
            for path in (*VERIFIER_DIRS, HARNESS_DIR):
                try:
                    with descend(root, path.strip("/").split("/"), where=path):
                        pass
                except LinkRefused as e:
                    raise InfraError(f"the agent's root: {e}: the verifier's {path} cannot be "
                                     "mounted there") from None  # fmt: skip
                except FileNotFoundError:
                    pass  # (made by docker or the harness in this container's own layer)
        finally:
            os.close(root)

    @property
    def swept_dirs(self) -> tuple[str, ...]:
        """Where the link sweep looks (``tasks.verifier.run_tests``): the agent's dirs, and,
        from a writable root, its ``/tmp`` and home, which are the tests' here."""
        return (*self.agent_dirs, *(("/tmp", "/root") if self.layer else ()))

    def _run_tmpfs(self) -> str:
        return "/run:size=1m,exec"  # as-agent is installed there (docker's default: noexec)

    def _network_args(self) -> list[str]:
        if self.shares_net:
            return ["--network", f"container:{self.agent.name}"]
        return super()._network_args()

    def end(self) -> None:
        """Before the result is read: with the agent's own root (a committed image), its
        python3 runs the executor, so what the executor says about its processes cannot be
        trusted; the container is killed from the host instead (then nothing runs in it)."""
        if self.committed and not self.closed:
            self.backend.cli("kill", self.name, timeout_s=120, check=False)
            server = self.executor.server if self.executor is not None else None
            if server is not None:
                server.dead = True

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._remove_image()

    def _remove_image(self) -> None:
        if self.committed:
            self.backend.cli("rmi", "-f", self.committed, timeout_s=120, check=False)
            self.committed = None

    def _volume_args(self) -> list[str]:
        args = []
        if self.layer:  # an empty volume each: not filled from the agent's commit
            for path in VERIFIER_DIRS:
                nocopy = ",volume-nocopy=true" if self.committed else ""
                args += ["--mount", f"type=volume,destination={path}{nocopy}"]
            # the harness's own dir, fresh (a writable root has no fresh /run): an as-agent
            # the agent planted there, or a link in its place, is not what the tests run
            args += ["--tmpfs", f"{HARNESS_DIR}:size=1m,exec"]
        else:
            for path in sorted({*VERIFIER_DIRS, "/tmp", "/root"}):
                args += ["-v", path]
        for path in self.volume_dirs:
            name = self.agent.layout.names.get(path)
            if self.copied:  # empty: the copy is exactly the agent's (no file it removed)
                args += ["--mount", f"type=volume,destination={path},volume-nocopy=true"]
            elif not name:
                raise InfraError(f"docker named no volume for the agent's {path}")
            else:
                args += ["-v", f"{name}:{path}"]
        return args

    def _copy_in(self) -> None:
        """Copy the agent's dirs into this container's own volumes, in a one-off container."""
        mounts = []
        for path in self.volume_dirs:
            name = self.agent.layout.names.get(path)
            if not name:
                raise InfraError(f"docker named no volume for the agent's {path}")
            mounts += ["-v", f"{name}:{COPY_FROM}{path}:ro"]
        q = shlex.quote
        script = " && ".join(f"cp -a {q(COPY_FROM + p)}/. {q(p)}/" for p in self.volume_dirs)
        self.backend.cli(
            "run", "--rm", "--network", "none", "--read-only", "-u", "0",
            "--label", f"{_label(self)}", "--volumes-from", f"{self.name}:rw", *mounts,
            "--entrypoint", "/bin/sh", self.spec.image or DEFAULT_IMAGE, "-c", script or "true",
            timeout_s=600,
        )  # fmt: skip


def _root_changed(agent: DockerSandbox) -> bool:
    """Whether the agent's container layer differs from what set-up left in it (read on the
    host, ``docker_volumes.layer_state``; unknown counts as changed). Unchanged, the task's own
    image is the agent's root, and no commit is needed. (Names alone were compared once: an
    ``/app`` emptied by ``rm -rf /app && mkdir /app``, re-moded, or replaced by a link looked
    unchanged, and the tests got the image's ``/app``.)"""
    base = getattr(agent, "layer_base", None)
    now = layer_state(agent.backend, agent.name)
    return base is None or now is None or now != base


def _commit(agent: DockerSandbox) -> str:
    """An image of the agent container's root as it is now (paused while it is taken)."""
    out = agent.backend.cli(
        "commit", "--change", f"LABEL {_label(agent)}", agent.name, timeout_s=1800
    )
    image = out.strip()
    if not image:
        raise InfraError(f"docker commit of {agent.name} gave no image")
    return image


def _label(box: DockerSandbox) -> str:
    from agentpost.sandbox.docker_reaper import LABEL

    return f"{LABEL}={box.backend.owner}"
