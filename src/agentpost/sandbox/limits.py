"""Whole-sandbox limits for the bubblewrap backend: a memory cgroup and a disk quota.

Memory: one cgroup per sandbox under the cgroup agentpost itself runs in; every exec's bwrap
joins it before it starts (``/bin/sh`` writes its own pid to ``cgroup.procs``, then execs), so the
limit holds for all processes of the sandbox together, and an OOM kill shows in the cgroup's
counters ("killed: memory limit"). cgroup v2 is used when our cgroup can enable the memory
controller for a child; otherwise cgroup v1's memory hierarchy (this host: a v1/v2 hybrid whose
v2 part has no controllers). Fallback, stated: with neither writable (an unprivileged user without
delegation), only the per-process ``RLIMIT_AS`` of ``Limits.memory_bytes`` holds.

Disk: when agentpost runs as root, each sandbox's host directory is its own tmpfs mounted with
``size=Limits.disk_bytes``, so the kernel refuses writes past the quota (ENOSPC) for the writable
dirs, /tmp and home together; an exec that leaves it full reports "disk quota". tmpfs is RAM, but
only what is written uses it, and the memory cgroup does not see it once the exec ends. Fallback,
stated: without mount rights the exec polls the directory's usage (``over_quota``) and kills the
sandbox when it passes the quota; it can overshoot by what is written in one poll interval, and
the per-file ``RLIMIT_FSIZE`` still holds.

Layer: io.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat

_MNT_DETACH, _MS_NOSUID, _MS_NODEV = 2, 2, 4
JOIN = 'echo $$ > "$0" && exec "$@"'  # run by /bin/sh: join the cgroup, then become bwrap


def _own_cgroups() -> dict[str, str]:
    """{controller or "" for v2: path} for this process."""
    out = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _hid, ctrls, path = line.rstrip("\n").split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                out[c] = path
    return out


def _mounts() -> list[tuple[str, str, str]]:
    with open("/proc/self/mounts") as f:
        return [tuple(line.split()[1:4]) for line in f]  # (mountpoint, fstype, options)


def _v2_parent(cg: dict[str, str], mounts) -> str | None:
    for point, fstype, _ in mounts:
        if fstype == "cgroup2" and "" in cg:
            d = point + cg[""]
            try:
                with open(os.path.join(d, "cgroup.controllers")) as f:
                    if "memory" not in f.read().split():
                        return None
                with open(os.path.join(d, "cgroup.subtree_control")) as f:
                    if "memory" not in f.read().split():
                        with open(os.path.join(d, "cgroup.subtree_control"), "w") as w:
                            w.write("+memory")
                return d
            except OSError:
                return None
    return None


def _v1_parent(cg: dict[str, str], mounts) -> str | None:
    for point, fstype, opts in mounts:
        if fstype == "cgroup" and "memory" in opts.split(",") and "memory" in cg:
            d = point + cg["memory"]
            return d if os.access(d, os.W_OK) else None
    return None


class MemoryCgroup:
    """A memory cgroup for one sandbox (create with ``MemoryCgroup.make``)."""

    def __init__(self, path: str, version: int):
        self.path, self.version = path, version
        self.procs = os.path.join(path, "cgroup.procs")

    @classmethod
    def make(cls, limit_bytes: int) -> MemoryCgroup | None:
        """A new cgroup capped at ``limit_bytes``, or None where none can be made."""
        try:
            cg, mounts = _own_cgroups(), _mounts()
        except OSError:
            return None
        for version, parent in ((2, _v2_parent(cg, mounts)), (1, _v1_parent(cg, mounts))):
            if parent is None:
                continue
            _prune(parent)
            path = os.path.join(parent, f"agentpost-{os.getpid()}-{secrets.token_hex(4)}")
            knob = "memory.max" if version == 2 else "memory.limit_in_bytes"
            try:
                os.mkdir(path)
                with open(os.path.join(path, knob), "w") as f:
                    f.write(str(limit_bytes))
                if version == 2:  # no swap, or the limit is soft
                    _try_write(os.path.join(path, "memory.swap.max"), "0")
                return cls(path, version)
            except OSError:
                _try_rmdir(path)
        return None

    def oom_kills(self) -> int:
        """The cgroup's OOM kills so far (v1: failed charges when the kernel has no counter)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            with open(os.path.join(self.path, name)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            return 0
        return 0

    def remove(self) -> None:
        _try_rmdir(self.path)


def _prune(parent: str) -> None:
    """Remove empty cgroups left by agentpost processes that were killed before ``close``."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "agentpost" and parts[1].isdigit():
            if not os.path.exists(f"/proc/{parts[1]}"):
                _try_rmdir(os.path.join(parent, name))


def _try_write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass


def _try_rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def mount_quota(path: str, size_bytes: int, owner: tuple[int, int] | None) -> bool:
    """Mount a tmpfs of ``size_bytes`` on ``path`` (root only); False where that fails."""
    if os.geteuid() != 0:
        return False
    opts = f"size={size_bytes},mode=0700,nr_inodes=1m"
    if owner:
        opts += f",uid={owner[0]},gid={owner[1]}"
    libc = ctypes.CDLL(None, use_errno=True)
    flags = _MS_NOSUID | _MS_NODEV
    return libc.mount(b"agentpost-sandbox", os.fsencode(path), b"tmpfs", flags, opts.encode()) == 0


def unmount(path: str) -> None:
    """Detach a quota mount (lazily: a process that still holds a file there cannot pin it)."""
    if os.path.ismount(path):
        ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(path), _MNT_DETACH)


def quota_full(path: str, margin: int = 1 << 20) -> bool:
    """Whether the quota mount at ``path`` has less than ``margin`` bytes left."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < margin


BLOCK = 4096  # what an entry counts at least: an empty file or a link still takes an inode


UNMEASURED = 1 << 62  # what a tree too deep to walk counts as: more than any quota
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)  # removed or swapped meanwhile: not there


def usage_bytes(path: str) -> int:
    """Bytes allocated under ``path`` (the fallback's poll; hard links counted once), each
    entry counted as at least ``BLOCK``: empty files take no block but an inode each of the
    host's filesystem, so millions of them would otherwise pass any quota. The walk goes by
    descent (``openat``, one fd per level, never a host path: a dir nested past ``PATH_MAX``
    was skipped silently by ``os.walk``, and what lay below never counted); a tree deeper than
    this process may hold fds for counts as ``UNMEASURED``. A dir it may not read (not root,
    mode 000) is still skipped."""
    seen, total = set(), 0
    stack: list[tuple[int, list[str] | None]] = [(os.open(path, _DIR), None)]
    try:
        while stack:
            fd, todo = stack[-1]
            if todo is None:
                todo = []
                stack[-1] = (fd, todo)
                try:
                    entries = list(os.scandir(fd))
                except PermissionError:
                    entries = []
                for e in entries:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    if (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        total += max(st.st_blocks * 512, BLOCK)
                    if stat.S_ISDIR(st.st_mode):
                        todo.append(e.name)
            if not todo:
                os.close(stack.pop()[0])
                continue
            try:
                stack.append((os.open(todo.pop(), _DIR, dir_fd=fd), None))
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE):
                    return UNMEASURED
                if e.errno not in (*_GONE, errno.EACCES):
                    raise
    finally:
        for fd, _ in stack:
            os.close(fd)
    return total
