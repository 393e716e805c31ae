"""Host-side access to a sandbox's writable directories, safe against hostile symlinks.

A sandbox command can leave ``/app/link -> /etc/passwd`` behind. Opening the host path of
``/app/link`` would follow it to the *host's* file, so paths are resolved here component by
component in the sandbox's namespace: every symlink is read (never followed by the kernel) and its
target resolved against the sandbox mount table. A path that ends outside the host-backed mounts
(the writable directories, private ``/tmp`` and home) is refused with ``PermissionError``; reading
the read-only root would need a trip through the sandbox, and nothing in agentpost needs it.

This is race-free only because no sandbox process runs between execs (every backend kills the
whole process tree when an exec returns; the persistent executor that stays, ``exec_server.py``,
is agentpost's own and idle), so nothing can swap a directory for a symlink while we walk it. Writes also pass ``O_NOFOLLOW`` as a second guard.

Layer: io.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat
import tempfile

from agentpost.ingress.hostdir import read_fd
from agentpost.ingress.keys import Bounds
from agentpost.ingress.tarball import extract, pack
from agentpost.sandbox.base import SandboxSpec, Snapshot
from agentpost.sandbox.limits import mount_quota, unmount

_MAX_HOPS = 40


class MountTable:
    """Sandbox mount points (absolute paths) → host directories, plus the owner of new files."""

    def __init__(self, mounts: dict[str, str], owner: tuple[int, int] | None = None):
        self.mounts = {posixpath.normpath(k): v for k, v in mounts.items()}
        self.owner = owner  # (uid, gid) to chown new files to, None to leave them

    def host_path(self, spath: str) -> str | None:
        """Host path of sandbox path ``spath`` (normalised), or None outside every mount."""
        best = None
        for mount in self.mounts:
            if spath == mount or spath.startswith(mount.rstrip("/") + "/"):
                if best is None or len(mount) > len(best):
                    best = mount
        if best is None:
            return None
        rest = spath[len(best) :].lstrip("/")
        return os.path.join(self.mounts[best], rest) if rest else self.mounts[best]

    def is_ancestor(self, spath: str) -> bool:
        """Whether ``spath`` is a directory above some mount (it exists in the sandbox)."""
        prefix = spath.rstrip("/") + "/"
        return any(m.startswith(prefix) for m in self.mounts)

    def resolve(self, path: str, *, make_parents: bool = False) -> str:
        """The host path a sandbox path names, following symlinks inside the sandbox only.

        The final component may be missing (for writes). Raises PermissionError when the path
        resolves outside the mounts, FileNotFoundError when a parent is missing.
        """
        if not path.startswith("/"):
            raise PermissionError(f"{path}: sandbox paths must be absolute")
        parts = [p for p in path.split("/") if p]
        stack: list[str] = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == ".":
                continue
            if name == "..":
                if stack:
                    stack.pop()
                continue
            stack.append(name)
            spath = "/" + "/".join(stack)
            host = self.host_path(spath)
            if host is None:
                if self.is_ancestor(spath) and parts:
                    continue
                raise PermissionError(f"{path}: outside the sandbox's writable directories")
            try:
                st = os.lstat(host)
            except FileNotFoundError:
                if not parts:
                    break
                if not make_parents:
                    raise FileNotFoundError(errno.ENOENT, "no such file in sandbox", path) from None
                os.mkdir(host, 0o755)
                self._chown(host)
                continue
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > _MAX_HOPS:
                    raise OSError(errno.ELOOP, "too many symlinks in sandbox path", path)
                target = os.readlink(host)
                stack.pop()
                if target.startswith("/"):
                    stack = []
                parts = [p for p in target.split("/") if p] + parts
            elif parts and not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory in sandbox", path)
        host = self.host_path("/" + "/".join(stack))
        if host is None:
            raise PermissionError(f"{path}: outside the sandbox's writable directories")
        return host

    def _chown(self, host: str) -> None:
        if self.owner is not None:
            os.chown(host, *self.owner, follow_symlinks=False)

    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """A regular file's bytes; past ``max_bytes`` (apparent size) ``ingress.TooLarge``."""
        fd = _open_regular(self.resolve(path), os.O_RDONLY, path)
        try:
            if max_bytes is not None:
                return read_fd(fd, max_bytes, path)
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read()
        finally:
            os.close(fd)

    def write(self, path: str, data: bytes, mode: int = 0o644) -> None:
        host = self.resolve(path, make_parents=True)
        fd = _open_regular(host, os.O_WRONLY | os.O_CREAT, path, mode)
        with os.fdopen(fd, "wb") as f:
            f.truncate(0)
            os.fchmod(f.fileno(), mode)
            if self.owner is not None:
                os.fchown(f.fileno(), *self.owner)
            f.write(data)

    def write_tree(self, host_dir: str, path: str) -> None:
        """Copy ``host_dir``'s contents under sandbox dir ``path``. Host symlinks are kept as
        links; sockets, FIFOs and device nodes are skipped (opening a FIFO would block, and
        none of them has contents to copy)."""
        for root, dirs, files in os.walk(host_dir):
            rel = os.path.relpath(root, host_dir)
            base = path if rel == "." else posixpath.join(path, rel)
            self._mkdirs(base)
            for name in files:
                src = os.path.join(root, name)
                dest = posixpath.join(base, name)
                st = os.lstat(src)
                if stat.S_ISLNK(st.st_mode):
                    self._symlink(os.readlink(src), dest)
                elif stat.S_ISREG(st.st_mode):
                    with open(src, "rb") as f:
                        self.write(dest, f.read(), stat.S_IMODE(st.st_mode))
            for name in [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                self._symlink(os.readlink(os.path.join(root, name)), posixpath.join(base, name))

    def _mkdirs(self, path: str) -> None:
        host = self.resolve(path, make_parents=True)
        if not os.path.lexists(host):
            os.mkdir(host, 0o755)
            self._chown(host)

    def _symlink(self, target: str, path: str) -> None:
        parent, name = posixpath.split(posixpath.normpath(path))
        host = os.path.join(self.resolve(parent, make_parents=True), name)
        if os.path.lexists(host) and not os.path.isdir(host):
            os.unlink(host)
        os.symlink(target, host)
        self._chown(host)


def _open_regular(host: str, flags: int, path: str, mode: int = 0o644) -> int:
    """Open a regular file only: a FIFO left by a sandbox command would block a plain open
    forever, and a device node is none of our business."""
    try:
        fd = os.open(host, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO without a reader, opened for writing
            raise PermissionError(f"{path}: not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PermissionError(f"{path}: not a regular file")
    os.set_blocking(fd, True)
    return fd


def archive(dest: str, dirs: dict[str, str], bounds: Bounds = Bounds()) -> None:
    """Tar ``{sandbox dir: host dir}`` into ``dest`` (``ingress.tarball.pack``: never follows a
    link, ``ingress.TooLarge`` past ``bounds`` on apparent size)."""
    pack(dest, dirs, bounds)


def unarchive(src: str | int, root: str, allowed: list[str], bounds: Bounds = Bounds(),
              skip: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Extract a snapshot under ``root`` (the host dir that mirrors sandbox ``/``), keeping only
    members under the ``allowed`` sandbox dirs and not under ``skip``, by
    ``ingress.tarball.extract``: no member name, symlink or hard link in the archive can reach
    outside ``root``, and each allowed dir is a real directory afterwards (``ingress.Refused``
    otherwise)."""
    extract(src, root, allowed, skip=skip, bounds=bounds)


def bounds_for(disk_bytes: int | None) -> Bounds:
    """A snapshot's bound: the sandbox's disk quota (apparent size), else the default."""
    return Bounds(max_bytes=disk_bytes) if disk_bytes else Bounds()


class Layout:
    """One sandbox's host directory: ``fs/<dir>`` per writable dir, plus private ``tmp`` and
    ``root`` (home) dirs that persist between execs but stay out of snapshots. With
    ``disk_bytes`` (and root rights) the whole directory is a tmpfs of that size: the disk quota
    (``limits.py``); ``self.quota`` says whether it is mounted."""

    def __init__(
        self,
        base_dir: str,
        writable_dirs: tuple[str, ...],
        owner: tuple[int, int] | None,
        disk_bytes: int | None = None,
    ):
        writable = [posixpath.normpath(w) for w in writable_dirs]
        if not writable or any(not w.startswith("/") or w == "/" for w in writable):
            raise ValueError(f"writable_dirs must be absolute and not '/': {writable_dirs}")
        self.writable = writable
        self.root = tempfile.mkdtemp(prefix=f"sbx-{os.getpid()}-", dir=base_dir)
        self.bounds = bounds_for(disk_bytes)
        self.quota = bool(disk_bytes) and mount_quota(self.root, disk_bytes, owner)
        self.owner = owner
        self.mounts = {w: os.path.join(self.root, "fs", w.strip("/")) for w in writable}
        private = {p: os.path.join(self.root, p.strip("/")) for p in ("/tmp", "/root")}
        self.private = {p: h for p, h in private.items() if p not in self.mounts}
        for host in [*self.mounts.values(), *self.private.values()]:
            os.makedirs(host, mode=0o755)
        if owner:
            for dirpath, _dirs, _files in os.walk(self.root):
                os.chown(dirpath, *owner)
            os.chmod(self.root, 0o700)
        if "/tmp" in self.private:
            os.chmod(self.private["/tmp"], 0o1777)
        self.fs = MountTable({**self.mounts, **self.private}, owner=owner)

    def snapshot(self, dest: str | None) -> str:
        if dest is None:
            fd, dest = tempfile.mkstemp(prefix="agentpost-snap-", suffix=".tar")
            os.close(fd)
        try:
            archive(dest, self.mounts, self.bounds)
        except BaseException:
            os.unlink(dest)
            raise
        return dest

    def restore(self, src: str) -> None:
        unarchive(src, os.path.join(self.root, "fs"), self.writable, self.bounds)

    def reset_private(self) -> None:
        """Fresh, empty private /tmp and home (no sandbox process may be running)."""
        for spath, host in self.private.items():
            shutil.rmtree(host, onerror=_force_remove_under(self.root))
            os.mkdir(host, 0o1777 if spath == "/tmp" else 0o755)
            os.chmod(host, 0o1777 if spath == "/tmp" else 0o755)  # mkdir honours the umask
            if self.owner:
                os.chown(host, *self.owner)

    def remove(self) -> None:
        unmount(self.root)
        shutil.rmtree(self.root, onerror=_force_remove_under(self.root))


def prune_stale(base_dir: str) -> int:
    """Remove sandbox dirs whose creating process is gone (it was killed before ``close``).
    A dir whose pid is alive, even if reused by another process, is left alone."""
    removed = 0
    for name in os.listdir(base_dir):
        parts = name.split("-")
        if len(parts) < 3 or parts[0] != "sbx" or not parts[1].isdigit():
            continue
        if not os.path.exists(f"/proc/{parts[1]}"):
            root = os.path.join(base_dir, name)
            unmount(root)
            shutil.rmtree(root, onerror=_force_remove_under(root))
            removed += 1
    return removed


def _force_remove_under(root: str):
    """An rmtree error handler for one sandbox dir: makes dirs a sandbox command left unwritable
    removable again (matters when not root). It never touches anything above ``root`` (the shared
    base dir must stay traversable for other sandboxes), and a path another process removed
    first (two pruners racing) is simply gone."""

    def handler(func, path, exc_info) -> None:
        if isinstance(exc_info[1], FileNotFoundError):
            return
        parent = os.path.dirname(path)
        if path != root and parent.startswith(root):
            os.chmod(parent, 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, ignore_errors=True)
        else:
            func(path)

    return handler


class HostDirFiles:
    """put/put_dir/get/snapshot for a backend whose writable dirs live in a host ``Layout``
    (bwrap binds them, docker mounts them): file access never goes through the sandbox."""

    layout: Layout
    spec: SandboxSpec

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self.layout.fs.write(path, data, mode)

    def put_dir(self, host_dir: str, path: str) -> None:
        self.layout.fs.write_tree(host_dir, path)

    def get(self, path: str, max_bytes: int | None = None) -> bytes:
        return self.layout.fs.read(path, max_bytes)

    def snapshot(self, dest: str | None = None) -> Snapshot:
        return Snapshot(path=self.layout.snapshot(dest), spec=self.spec)

    def reset_private(self) -> None:
        self.layout.reset_private()
