"""Host-side access to a sandbox's writable directories, safe against hostile symlinks.

A sandbox command can leave ``/app/link -> /etc/passwd`` behind. Opening the host path of
``/app/link`` would follow it to the *host's* file, so paths are resolved here component by
component in the sandbox's namespace: every symlink is read (never followed by the kernel) and its
target resolved against the sandbox mount table. A path that ends outside the host-backed mounts
(the writable directories, private ``/tmp`` and home) is refused with ``PermissionError``; reading
the read-only root would need a trip through the sandbox, and nothing in agentpost needs it.

Sandbox processes may run while we walk (``SandboxSpec.keep_processes``: servers kept between
execs, Harbor's semantics), so nothing is ever opened by host path: each component is opened
relative to the fd of the dir before it (``openat``, ``O_NOFOLLOW``), and the file itself
relative to its parent's fd (``MountTable``). A swap of a dir for a link, at any moment, is
either resolved inside the sandbox or refused; it never reaches a host file.

Layer: io.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from agentpost.ingress.hostdir import (
    DIR_FLAGS,
    descend,
    open_regular,
    open_root,
    read_fd,
    read_file,
    walk,
)
from agentpost.ingress.keys import Bounds, LinkRefused, split_key
from agentpost.ingress.tarball import extract, pack
from agentpost.sandbox.base import SandboxSpec, Snapshot
from agentpost.sandbox.limits import mount_quota, unmount

_MAX_HOPS = 40


class MountTable:
    """Sandbox mount points (absolute paths) → host directories, plus the owner of new files.

    Every access walks the sandbox path from the mount's host dir by descent (``openat`` with
    ``O_NOFOLLOW`` on each component, the fd of each dir held while the next is opened): a
    symlink met on the way is read (``readlinkat``) and its target resolved in the sandbox's
    namespace, never followed by the kernel; the file itself is opened relative to its parent's
    fd. A dir swapped for a link after it was opened changes nothing (we hold the real one), one
    swapped before is a link we resolve inside the sandbox. A mount at ``/`` (a container's whole
    root, ``docker_volumes``) makes every path of the sandbox reachable, still by descent."""

    def __init__(self, mounts: dict[str, str], owner: tuple[int, int] | None = None):
        self.mounts = {posixpath.normpath(k): v for k, v in mounts.items()}
        self.owner = owner  # (uid, gid) to chown new files to, None to leave them

    def host_path(self, spath: str) -> str | None:
        """Host path of sandbox path ``spath`` (normalised), or None outside every mount. For
        messages only: what it names is never opened (a path is followed by the kernel)."""
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

    @contextmanager
    def at(self, path: str, *, make_parents: bool = False) -> Iterator[tuple[int, str]]:
        """``(fd of the parent dir, final name)`` of sandbox path ``path``, a link as its last
        component resolved in the sandbox (the final name may be missing: for writes).
        ``PermissionError`` when the path leads outside the mounts, ``FileNotFoundError`` when a
        parent is missing (made, mode 0o755, with ``make_parents``)."""
        fd, name = self._resolve(path, make_parents, want_dir=False)
        try:
            yield fd, name
        finally:
            os.close(fd)

    @contextmanager
    def dir_at(self, path: str, *, create: bool = False) -> Iterator[int]:
        """An fd of sandbox directory ``path`` (made with its parents when ``create``)."""
        fd, _ = self._resolve(path, create, want_dir=True)
        try:
            yield fd
        finally:
            os.close(fd)

    def _resolve(self, path: str, make: bool, want_dir: bool) -> tuple[int, str]:
        if not path.startswith("/"):
            raise PermissionError(f"{path}: sandbox paths must be absolute")
        parts = [p for p in path.split("/") if p not in ("", ".")]
        # resolved dirs: (name, fd; None above mounts); a root mount ("/": a container's whole
        # layer) is the bottom of the stack, named "", and ".." never pops it
        stack: list[tuple[str, int | None]] = self._bottom()
        hops = 0
        try:
            while True:
                if not parts:  # the path names a directory
                    fd = stack[-1][1] if stack else None
                    if not want_dir:
                        raise IsADirectoryError(errno.EISDIR, "a directory in sandbox", path)
                    if fd is None:
                        raise PermissionError(f"{path}: outside the sandbox's writable directories")
                    return os.dup(fd), ""
                name = parts.pop(0)
                if name == "..":
                    if stack and stack[-1][0]:
                        _close(stack.pop()[1])
                    continue
                spath = "/" + "/".join([n for n, _ in stack if n] + [name])
                parent = stack[-1][1] if stack else None
                last = not parts
                if spath in self.mounts:  # the mount hides what its parent holds
                    if last and not want_dir:
                        raise IsADirectoryError(errno.EISDIR, "a directory in sandbox", path)
                    stack.append((name, open_root(self.mounts[spath])))
                    continue
                if parent is None:  # above every mount: the read-only root
                    if self.is_ancestor(spath) and parts:
                        stack.append((name, None))
                        continue
                    raise PermissionError(f"{path}: outside the sandbox's writable directories")
                if last and not want_dir:
                    target = _link_at(parent, name)
                    if target is None:  # absent or not a link: the caller opens it, O_NOFOLLOW
                        return os.dup(parent), name
                else:
                    got = self._open_dir(parent, name, make, path)
                    if isinstance(got, int):
                        stack.append((name, got))
                        continue
                    target = got
                hops += 1
                if hops > _MAX_HOPS:
                    raise OSError(errno.ELOOP, "too many symlinks in sandbox path", path)
                if target.startswith("/"):
                    for _, fd in stack:
                        _close(fd)
                    stack = self._bottom()
                parts = [p for p in target.split("/") if p not in ("", ".")] + parts
        finally:
            for _, fd in stack:
                _close(fd)

    def _bottom(self) -> list[tuple[str, int | None]]:
        root = self.mounts.get("/")
        return [("", open_root(root))] if root else []

    def _open_dir(self, parent: int, name: str, make: bool, path: str) -> int | str:
        """An fd of dir ``name`` in ``parent`` (made when missing and ``make``), or the target
        of the link found there instead."""
        for _ in range(_MAX_HOPS):  # a name swapped back and forth: looked at again, bounded
            try:
                return os.open(name, DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not make:
                    raise FileNotFoundError(errno.ENOENT, "no such file in sandbox", path) from None
                with suppress(FileExistsError):  # made meanwhile: opened next round
                    os.mkdir(name, 0o755, dir_fd=parent)
                    self._chown_at(parent, name)
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                target = _link_at(parent, name)
                if target is not None:
                    return target
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(
                        errno.ENOTDIR, "not a directory in sandbox", path
                    ) from None
        raise OSError(errno.ELOOP, "replaced again and again while being resolved", path)

    def _chown_at(self, dir_fd: int, name: str) -> None:
        if self.owner is not None:
            os.chown(name, *self.owner, dir_fd=dir_fd, follow_symlinks=False)

    def stat(self, path: str) -> os.stat_result:
        """The sandbox file's ``lstat`` (a link as the last component resolved in the sandbox)."""
        with self.at(path) as (d, name):
            return os.stat(name, dir_fd=d, follow_symlinks=False)

    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """A regular file's bytes; past ``max_bytes`` (apparent size) ``ingress.TooLarge``."""
        with self.at(path) as (d, name):
            fd = _open_regular(d, name, os.O_RDONLY, path)
        try:
            if max_bytes is not None:
                return read_fd(fd, max_bytes, path)
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read()
        finally:
            os.close(fd)

    def write(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Write a regular file: a hard link the sandbox made there is replaced, not written
        through; a FIFO, socket or device is ``PermissionError``."""
        with self.at(path, make_parents=True) as (d, name):
            fd = _create_regular(d, name, mode, path)
        with os.fdopen(fd, "wb") as f:
            f.truncate(0)
            os.fchmod(f.fileno(), mode)
            if self.owner is not None:
                os.fchown(f.fileno(), *self.owner)
            f.write(data)

    def write_tree(self, host_dir: str, path: str, bounds: Bounds = Bounds()) -> None:
        """Copy ``host_dir``'s contents under sandbox dir ``path``, reading ``host_dir`` by
        descent too (``ingress.hostdir.walk``). Host symlinks are kept as links; sockets, FIFOs
        and device nodes are skipped (opening a FIFO would block, and none of them has contents
        to copy); past ``bounds`` ``ingress.TooLarge``."""
        rfd = open_root(host_dir)
        try:
            self._mkdirs(path)
            for key, st in walk(rfd, bounds=bounds, skip=()):
                dest = posixpath.join(path, key)
                if stat.S_ISDIR(st.st_mode):
                    self._mkdirs(dest)
                elif stat.S_ISLNK(st.st_mode):
                    parts = split_key(key)
                    with descend(rfd, parts[:-1], where=key) as d:
                        target = os.readlink(parts[-1], dir_fd=d)
                    self._symlink(target, dest)
                elif stat.S_ISREG(st.st_mode):
                    data = read_file(rfd, key, limit=bounds.max_bytes, hardlinks=True)
                    self.write(dest, data, stat.S_IMODE(st.st_mode))
        finally:
            os.close(rfd)

    def _mkdirs(self, path: str) -> None:
        with self.dir_at(path, create=True):
            pass

    def _symlink(self, target: str, path: str) -> None:
        parent, name = posixpath.split(posixpath.normpath(path))
        with self.dir_at(parent, create=True) as d:
            with suppress(FileNotFoundError):
                if not stat.S_ISDIR(os.stat(name, dir_fd=d, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=d)
            os.symlink(target, name, dir_fd=d)
            self._chown_at(d, name)


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _link_at(dir_fd: int, name: str) -> str | None:
    """The target of symlink ``name`` in ``dir_fd``; None when it is absent or not a link."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.EINVAL:
            return None
        raise


def _open_regular(dir_fd: int, name: str, flags: int, path: str, mode: int = 0o644) -> int:
    """Open a regular file only, never following a link: a FIFO left by a sandbox command would
    block a plain open forever, and a device node is none of our business."""
    try:
        return open_regular(dir_fd, name, flags, hardlinks=True, where=path, mode=mode)
    except LinkRefused:
        raise PermissionError(f"{path}: not a regular file") from None


def _create_regular(dir_fd: int, name: str, mode: int, path: str) -> int:
    """A writable fd of regular file ``name`` (made when absent). A file with other hard links
    is unlinked first and made anew (the sandbox may have linked it to a file we must not
    write); a directory is ``IsADirectoryError``, a FIFO, socket or device ``PermissionError``."""
    for _ in range(_MAX_HOPS):
        try:
            return _open_regular(dir_fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, path, mode)
        except FileExistsError:
            pass
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a directory in sandbox", path)
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
            raise PermissionError(f"{path}: not a regular file")
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            with suppress(FileNotFoundError):
                fd = _open_regular(dir_fd, name, os.O_WRONLY, path)
                if os.fstat(fd).st_nlink == 1:
                    return fd
                os.close(fd)
        with suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)  # a hard link, or a link planted meanwhile
    raise PermissionError(f"{path}: replaced again and again while being written")


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
