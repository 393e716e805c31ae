"""Host directories read and written by descent from a root's fd, never by path.

Every component is opened with ``openat(dir_fd, name, O_NOFOLLOW)``: a symlink anywhere on the
way is refused (``ELOOP``), never followed, so a directory named by hostile data cannot lead
outside its root, however long or odd its path (there is no ``realpath`` to trick, as in
CVE-2025-4517). A file is opened ``O_NONBLOCK`` (a FIFO cannot hang us) and checked to be a
regular file on its own fd (``fstat``) before a byte is read; its size is bounded before reading.

Two kinds of root, one difference: a sandbox's own host dir may hold hard links its agent made
between its own files (``hardlinks=True``); a run folder or saved state may not (another local
user could have linked a file there that is not theirs to hand us).

Layer: io.
"""

from __future__ import annotations

import errno
import os
import stat
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from agentpost.ingress.keys import (
    Bounds,
    LinkRefused,
    TooLarge,
    UnsafeKey,
    normalise_key,
    split_key,
)

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


def open_root(path: str | os.PathLike) -> int:
    """An fd of directory ``path`` (the trust anchor: named by agentpost or its user, not by the
    data); its last component may not be a symlink."""
    try:
        return os.open(path, DIR_FLAGS)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkRefused(f"{path}: not a directory (a symlink or a file)") from None
        raise


@contextmanager
def descend(
    root_fd: int, parts: list[str], *, create: bool = False, where: str = ""
) -> Iterator[int]:
    """An fd of directory ``root/parts...`` reached without following anything; missing dirs
    are made (mode 0o755) when ``create``. Raises ``LinkRefused`` at a symlink or non-dir."""
    fd = os.dup(root_fd)
    try:
        for i, name in enumerate(parts):
            try:
                nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise FileNotFoundError(
                        errno.ENOENT, "no such directory", "/".join(parts[: i + 1])
                    ) from None
                os.mkdir(name, 0o755, dir_fd=fd)
                nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkRefused(f"{where or '/'.join(parts)}: {'/'.join(parts[: i + 1])!r} is a "
                                      "symlink or not a directory") from None  # fmt: skip
                raise
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def open_regular(dir_fd: int, name: str, flags: int = os.O_RDONLY, *, hardlinks: bool = True,
                 where: str = "", mode: int = 0o644) -> int:  # fmt: skip
    """Open ``name`` in ``dir_fd`` as a regular file only (a symlink, FIFO, device, socket or,
    without ``hardlinks``, a file with more than one link is ``LinkRefused``). An existing file
    is looked at through an ``O_PATH`` fd first and opened through that very fd
    (``/proc/self/fd/N``): a device node a sandbox made (a root agent may ``mknod``) is never
    opened with our rights, not even for the time of a check (a watchdog's open arms it)."""
    try:
        if flags & os.O_CREAT:
            try:  # a new file: nothing there to open
                fd = os.open(name, flags | os.O_EXCL | FILE_FLAGS, mode, dir_fd=dir_fd)
            except FileExistsError:
                if flags & os.O_EXCL:
                    raise
                fd = _reopen_regular(dir_fd, name, flags & ~os.O_CREAT, where)
        else:
            fd = _reopen_regular(dir_fd, name, flags, where)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise LinkRefused(f"{where or name}: not a regular file") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (not hardlinks and st.st_nlink > 1):
        os.close(fd)
        what = "a hard link" if stat.S_ISREG(st.st_mode) else "not a regular file"
        raise LinkRefused(f"{where or name}: {what}")
    os.set_blocking(fd, True)
    return fd


def _reopen_regular(dir_fd: int, name: str, flags: int, where: str) -> int:
    path = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(path).st_mode):
            raise LinkRefused(f"{where or name}: not a regular file")
        return os.open(f"/proc/self/fd/{path}", (flags | FILE_FLAGS) & ~os.O_NOFOLLOW)
    finally:
        os.close(path)


def read_fd(fd: int, limit: int, where: str) -> bytes:
    """All of ``fd`` (a regular file), refusing past ``limit`` bytes (apparent size first)."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise TooLarge(f"{where}: {size} bytes, over the bound of {limit}")
    chunks, total = [], 0
    while block := os.read(fd, min(_CHUNK, limit + 1 - total)):
        chunks.append(block)
        total += len(block)
        if total > limit:
            raise TooLarge(f"{where}: over the bound of {limit} bytes")
    return b"".join(chunks)


def read_file(root_fd: int, key: str, *, limit: int, hardlinks: bool = True) -> bytes:
    """The bytes of regular file ``key`` under ``root_fd`` (see the module docstring)."""
    parts = split_key(normalise_key(key))
    with descend(root_fd, parts[:-1], where=key) as d:
        fd = open_regular(d, parts[-1], hardlinks=hardlinks, where=key)
    try:
        return read_fd(fd, limit, key)
    finally:
        os.close(fd)


def walk(root_fd: int, *, bounds: Bounds, skip: tuple[str, ...] = (), prefix: str = "",
         max_depth: int | None = None) -> Iterator[tuple[str, os.stat_result]]:  # fmt: skip
    """(key, lstat) of every entry below ``root_fd``, depth first in name order, dirs before
    their contents; directories named in ``skip`` are not entered or listed, nor are dirs at
    ``max_depth`` (0: the root's own entries only) entered. Symlinks are listed, never entered.
    More than ``bounds.max_entries`` entries is ``TooLarge``."""
    count = 0
    base_depth = prefix.count("/") + 1 if prefix else 0
    stack: list[tuple[int, str]] = [(os.dup(root_fd), prefix)]
    try:
        while stack:
            fd, base = stack.pop()
            try:
                names = sorted(os.listdir(fd))
                subdirs = []
                for name in names:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and name in skip:
                        continue
                    count += 1
                    if count > bounds.max_entries:
                        raise TooLarge(f"over {bounds.max_entries} entries")
                    key = f"{base}/{name}" if base else name
                    yield key, st
                    deep = max_depth is not None and key.count("/") - base_depth >= max_depth
                    if stat.S_ISDIR(st.st_mode) and not deep:
                        subdirs.append((name, key))
                for name, key in reversed(subdirs):
                    try:
                        stack.append((os.open(name, DIR_FLAGS, dir_fd=fd), key))
                    except OSError as e:  # replaced under us: refuse rather than guess
                        raise LinkRefused(f"{key}: cannot be entered ({e.strerror})") from None
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)


def read_tree(root: str | os.PathLike, *, bounds: Bounds = Bounds(), hardlinks: bool = False,
              skip: tuple[str, ...] = ("__pycache__",)) -> dict[str, bytes]:  # fmt: skip
    """``{key: bytes}`` of every regular file below host dir ``root`` (a saved state in a run
    folder): a symlink, device, FIFO or socket is ``LinkRefused``, and so is a hard link unless
    ``hardlinks``; more than ``bounds`` is ``TooLarge``."""
    rfd = open_root(root)
    out: dict[str, bytes] = {}
    total = 0
    try:
        for key, st in walk(rfd, bounds=bounds, skip=skip):
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise LinkRefused(f"{root}/{key}: not a regular file or directory")
            total += st.st_size
            if total > bounds.max_bytes:
                raise TooLarge(f"{root}: over {bounds.max_bytes} bytes in all")
            out[key] = read_file(rfd, key, limit=bounds.max_bytes, hardlinks=hardlinks)
    finally:
        os.close(rfd)
    return out


def write_tree(root: str | os.PathLike, files: Mapping[str, bytes | str], *,
               bounds: Bounds = Bounds()) -> None:  # fmt: skip
    """Write ``files`` ({key: bytes or text}) below the existing host dir ``root``, each key
    checked (``UnsafeKey``) and every dir reached by descent; text is written as UTF-8. Two
    keys that collide (``a`` a file and ``a/b``) are ``UnsafeKey``."""
    keys = {normalise_key(k, where=f"file {k!r}"): v for k, v in files.items()}
    if len(keys) != len(files):
        raise UnsafeKey("two keys name the same file")
    total = sum(
        len(v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v)
        for v in keys.values()
    )
    if total > bounds.max_bytes or len(keys) > bounds.max_entries:
        raise TooLarge(f"{len(keys)} files of {total} bytes: over {bounds}")
    rfd = open_root(root)
    try:
        for key, data in sorted(keys.items()):
            parts = split_key(key)
            blob = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
            try:
                with descend(rfd, parts[:-1], create=True, where=key) as d:
                    fd = os.open(
                        parts[-1],
                        os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS,
                        0o644,
                        dir_fd=d,
                    )
            except (LinkRefused, FileExistsError, IsADirectoryError, NotADirectoryError):
                raise UnsafeKey(f"file {key!r} collides with another key") from None
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
    finally:
        os.close(rfd)


def open_under(root: str | os.PathLike, key: str, *, hardlinks: bool = False) -> int:
    """An fd of regular file ``key`` below ``root``, reached by descent (a reference from a run
    folder: ``snapshots/<hash>.tar``); ``UnsafeKey`` / ``LinkRefused`` / ``FileNotFoundError``."""
    parts = split_key(normalise_key(key, where="reference"))
    rfd = open_root(root)
    try:
        with descend(rfd, parts[:-1], where=key) as d:
            return open_regular(d, parts[-1], hardlinks=hardlinks, where=key)
    finally:
        os.close(rfd)


class OpenDir:
    """An open fd of directory ``path`` (``open_root``: a run folder the user named), closed when
    the last ``HeldFile`` of it is gone. ``path`` is for messages only."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.fd = open_root(path)
        weakref.finalize(self, os.close, self.fd)


class HeldFile:
    """A regular file below an ``OpenDir``, named by its key and reopened by descent from the
    dir's fd (``openat`` with ``O_NOFOLLOW``, component by component) each time it is read,
    never by path: a folder swapped for a link after the walk that found the file, or a link
    or hard link put in the file's place, is ``LinkRefused``. ``str()`` is its path, for
    messages; there is deliberately no ``__fspath__`` (nothing may open it by path)."""

    __slots__ = ("dir", "key", "size")

    def __init__(self, dir: OpenDir, key: str, size: int) -> None:
        self.dir, self.key, self.size = dir, normalise_key(key), size

    def __str__(self) -> str:
        return f"{self.dir.path.rstrip('/')}/{self.key}"

    __repr__ = __str__

    def open_fd(self) -> int:
        """A read-only fd of the file (blocking reads; a FIFO or device was refused)."""
        parts = split_key(self.key)
        with descend(self.dir.fd, parts[:-1], where=self.key) as d:
            return open_regular(d, parts[-1], hardlinks=False, where=self.key)

    def stat(self) -> os.stat_result:
        fd = self.open_fd()
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def read(self, limit: int) -> bytes:
        """All of the file, ``TooLarge`` past ``limit`` bytes."""
        fd = self.open_fd()
        try:
            return read_fd(fd, limit, str(self))
        finally:
            os.close(fd)
