"""How a bubblewrap sandbox is launched and stopped: the clean environment, the read-only root
mirror's arguments, owned pipes, the info it reports, and watching and killing its PID-namespace init.

Layer: io.
"""

from __future__ import annotations

import json
import os
import posixpath
import select
import signal
import stat
import subprocess
import time

from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.capture import kill_group

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def base_env(spec: SandboxSpec) -> dict[str, str]:
    """The clean environment every exec starts from: nothing leaks from the host."""
    env = {
        "PATH": DEFAULT_PATH,
        "HOME": "/root",
        "USER": "root",
        "LANG": "C.UTF-8",
        "TERM": "xterm",
    }
    env.update(spec.env)
    return env


def mirror_args(host_dir: str, spath: str, skip: set[str], ancestors: set[str]) -> list[str]:
    """bwrap arguments that rebuild ``host_dir`` at sandbox path ``spath`` read-only, entry by
    entry, leaving out ``skip`` and descending into ``ancestors`` (parents of mounts to come).

    An empty directory (``/srv``, ``/media``, ``lost+found`` ...) becomes a plain directory with
    the same permissions on the sandbox root instead of a bind mount: it looks the same (and is
    as read-only once the root is remounted), and every mount saved is time saved per exec."""
    args: list[str] = []
    for name in sorted(os.listdir(host_dir)):
        sp = posixpath.join(spath, name)
        hp = os.path.join(host_dir, name)
        if sp in skip:
            continue
        if os.path.islink(hp):
            args += ["--symlink", os.readlink(hp), sp]
        elif sp in ancestors and os.path.isdir(hp):
            args += ["--dir", sp, *mirror_args(hp, sp, skip, ancestors)]
        elif (mode := _empty_dir_mode(hp)) is not None:
            args += ["--perms", f"{mode:o}", "--dir", sp]
        else:
            # -try: an entry another process removes between this listing and bwrap's start
            # (a test's scratch dir at /) is left out instead of failing the sandbox.
            args += ["--ro-bind-try", hp, sp]
    return args


def _empty_dir_mode(path: str) -> int | None:
    """The permission bits of an empty directory; None for anything else (or if it vanished)."""
    try:
        if os.path.isdir(path) and not os.listdir(path):
            return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:  # unreadable or gone: bind it (or skip it) and let bwrap decide
        pass
    return None


def ancestors(paths: list[str]) -> set[str]:
    out = set()
    for p in paths:
        parent = posixpath.dirname(p)
        while parent not in ("/", ""):
            out.add(parent)
            parent = posixpath.dirname(parent)
    return out


def owned_pipes(stdin: bool, owner: tuple[int, int] | None) -> tuple[list[int], list[int]]:
    """Pipes for a command's stdin (when ``stdin``), stdout and stderr, in that order, as
    (our ends, the command's ends), owned by ``owner`` when given.

    ``echo x > /dev/stderr`` re-opens the pipe through /proc/self/fd, which checks the pipe's
    owner and mode (0600): a pipe owned by host root is closed to the sandbox's unprivileged uid,
    so it must belong to that uid before the command can run."""
    ours, theirs = [], []
    for is_input in [True] * stdin + [False, False]:
        r, w = os.pipe()
        if owner is not None:
            os.fchown(w, *owner)  # one inode behind both ends
        ours.append(w if is_input else r)
        theirs.append(r if is_input else w)
    return ours, theirs


def read_info(fd: int, timeout_s: float = 30.0) -> dict:
    """bwrap's ``--info-fd`` JSON (written right after it clones the sandbox init), or {}."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            break
        data += chunk
        try:
            return json.loads(data)
        except ValueError:
            continue
    return {}


def wait_exit(pidfd: int | None, timeout_s: float = 10.0) -> None:
    """Block until the process behind ``pidfd`` has exited (then its namespace is empty)."""
    if pidfd is None:
        return
    try:
        select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)


def kill_tree(proc: subprocess.Popen, pidfd: int | None) -> None:
    """SIGKILL bwrap's PID-namespace init through its pidfd (no pid-reuse race; the kernel
    then kills the whole namespace), and bwrap's own process group."""
    if pidfd is not None:
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    kill_group(proc)
