"""The sandbox contract every backend implements (bubblewrap by default, docker CLI at scale).

Lifecycle: ``create(spec)`` → ``exec``/``put``/``get`` any number of times → ``snapshot()`` at
any point → ``close()``. ``restore(snapshot)`` creates a *fresh* sandbox whose writable
directories hold exactly the snapshot's contents.

Every sandbox has writable directories (by default ``/app`` as the work directory, plus
``/logs``, ``/tests``, ``/solution`` and a private ``/tmp``); everything else is read-only.
A snapshot captures all writable directories except ``/tmp``.

The hermetic contract (every backend follows it; ``tasks/verifier.py`` and ``security/grade.py``
rely on it):

1. **The agent sees only what it should** (``view="hermetic"``, the default): a read-only system
   root with the tools tasks need, the writable dirs, a fresh HOME and /tmp; nothing else of the
   host (no /home, /root, /work, project checkouts, the agentpost package tree, any suite's
   solution/tests/wrong/reference folders). ``sandbox/hermetic.py`` lists what is visible and why.
   Backends with images (docker) get this from the image; they must not bind host dirs beyond the
   writable ones.
2. **Nothing outlives an exec**: when ``exec`` returns, every process it started is dead. A
   backend whose processes can outlive a call (a long-lived container) must kill them all before
   ``reset_private`` returns. Exception, asked for: ``SandboxSpec.keep_processes`` (Harbor's
   container semantics) lets what an exec leaves running stay; the verifier then keeps only the
   servers among them (``verifier_sandbox``), outside the tests' namespace.
3. **``reset_private()``** gives the sandbox a fresh, empty /tmp and home and returns only when no
   process the sandbox ran is alive: the verifier calls it after the agent's last turn, so nothing
   the agent planted there (``.pth`` files, ``usercustomize``, shell rc files) reaches grading.
4. **Host-side file access never follows a sandbox symlink** out of the writable dirs
   (``put``/``get`` resolve links in the sandbox's namespace), so a link the agent planted where
   the verifier writes or reads cannot reach a host file.
5. **Limits hold for the sandbox as a whole**: ``Limits.disk_bytes`` on the writable dirs and
   ``Limits.sandbox_memory_bytes`` on all its processes together; an exec that hits one says so
   in ``ExecResult.killed`` ("memory limit", "disk quota", "output cap", "timeout"); an exec
   ended by ``cancel`` (or a close from another thread) says "cancelled".

Layer: model (types and protocols only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every exec."""

    output_bytes: int = 10 * MiB  # per stream; past it output is cut and ``truncated`` set
    processes: int = 256  # tasks (threads count) alive at once in one exec
    memory_bytes: int = 2048 * MiB  # address space per process (bwrap), per container (docker)
    file_bytes: int = 512 * MiB  # largest file a command may write
    disk_bytes: int = 1024 * MiB  # writable dirs, /tmp and home together (0: no quota)
    sandbox_memory_bytes: int = 4096 * MiB  # all processes of one exec together (0: no cgroup)
    cpus: float | None = None  # CPUs a sandbox may use (docker only; bwrap does not bound CPU)


@dataclass(frozen=True)
class Service:
    """A container that runs beside a docker sandbox in its network namespace (a compose
    service, or the image's own ENTRYPOINT): reachable as ``name`` on localhost, never a network
    of its own. ``entrypoint``/``command`` None: the image's. ``shared`` are writable dirs of the
    sandbox mounted into it (the ENTRYPOINT's server serves the work dir); ``healthcheck`` is an
    argv run inside it until it exits 0."""

    name: str
    image: str
    entrypoint: tuple[str, ...] | None = None
    command: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()
    shared: tuple[str, ...] = ()
    healthcheck: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox looks like when it is created."""

    workdir: str = "/app"
    writable_dirs: tuple[str, ...] = ("/app", "/logs", "/tests", "/solution")
    network: bool = False
    rootfs: str | None = None  # None: the host root, read-only
    view: str = "hermetic"  # "hermetic": only system dirs of the root; "mirror": every entry
    hide: tuple[str, ...] = ()  # more paths to cover with an empty dir (e.g. a suite's tree)
    uid: int = 0  # the user inside; non-root lets a nested user namespace map it (grading jail)
    image: str | None = None  # docker backend only
    user: str | None = None  # image user every exec runs as (docker only; None: root)
    env: dict[str, str] = field(default_factory=dict)
    # Harbor's container semantics: processes an exec leaves running (``server &``) survive it
    # (rule 2 then holds per exec session only; see ``exec_server.py``)
    keep_processes: bool = False
    limits: Limits = field(default_factory=Limits)
    default_timeout_s: float = 60.0
    # docker only: the image root writable (a container layer of this sandbox's own, discarded
    # with it, as Harbor gives every task container), not read-only
    writable_root: bool = False
    # docker only: containers started beside this one, in its network namespace, removed with it
    services: tuple[Service, ...] = ()


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None  # None when killed by the timeout
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    truncated: bool  # either stream hit the output cap
    # why the sandbox ended the command: "timeout", "output cap", "memory limit", "disk quota"
    killed: str | None = None
    # processes still alive when the command's first process exited (then killed); docker's
    # keeper fallback counts them at its sweep just after; bwrap's per-exec fallback reports 0
    # (the verifier's own namespace always has the executor there)
    strays: int = 0
    stopped: bool = False  # the command's first process was stopped by a signal on the way

    def to_json(self) -> dict:
        return {
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 6),
            "truncated": self.truncated,
            "killed": self.killed,
            **({"strays": self.strays} if self.strays else {}),
            **({"stopped": True} if self.stopped else {}),
        }


@dataclass(frozen=True)
class Snapshot:
    """An archive of a sandbox's writable directories (a tar file on the host)."""

    path: str
    spec: SandboxSpec


@runtime_checkable
class Sandbox(Protocol):
    spec: SandboxSpec

    def exec(
        self,
        command: str | list[str],
        *,
        timeout_s: float | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run ``command`` (a string goes to ``bash -c``; a list is executed as is) inside the
        sandbox. The whole process tree is killed at the timeout; nothing started by the command
        outlives the call. Not a login shell: /etc/profile would reset a PATH set in spec.env."""
        ...

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Write a file at an absolute sandbox path inside a writable directory (or the private
        /tmp and home). Symlinks resolve inside the sandbox; a path that ends outside those
        directories raises PermissionError, so a hostile symlink never reaches a host file."""
        ...

    def put_dir(self, host_dir: str, path: str) -> None:
        """Copy a host directory's contents into a writable sandbox directory."""
        ...

    def get(self, path: str, max_bytes: int | None = None) -> bytes:
        """Read a regular file from the sandbox (raises FileNotFoundError; PermissionError for a
        path outside the writable directories, private /tmp and home, or a non-regular file;
        ``ingress.keys.TooLarge`` past ``max_bytes``, apparent size)."""
        ...

    def snapshot(self, dest: str | None = None) -> Snapshot: ...

    def reset_private(self) -> None:
        """Replace /tmp and the home with fresh empty dirs (contract rule 3)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(self, *exc: object) -> None: ...


class Backend(Protocol):
    name: str

    def create(self, spec: SandboxSpec | None = None) -> Sandbox: ...

    def restore(self, snapshot: Snapshot) -> Sandbox: ...

    def available(self) -> bool: ...
