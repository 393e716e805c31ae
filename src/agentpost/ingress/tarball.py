"""Snapshot archives: packed from a sandbox's host dirs and unpacked into fresh ones, with no
host powers.

``pack`` walks each dir by descent (``hostdir.walk``): symlinks are stored as links, a second
name of an inode as a hard-link member, FIFOs as nodes, sockets are left out; before a byte is
written, the apparent size of the tree is checked against the bound (a sparse file counts at its
full length, so a sandbox whose disk quota reads 0 cannot make a 600 MB archive).

``extract`` never lets the archive name a host path: each member name is a key
(``keys.normalise_key``: no ``..``, not absolute), every parent dir is reached by ``openat``
descent with ``O_NOFOLLOW`` (a symlink the archive planted earlier is refused, not followed),
a symlink or FIFO member is created as a leaf node and never followed or opened, a hard-link
member becomes a copy of the data of the member it names *inside the archive* (never a link to
anything on disk), and devices are dropped (counted). Modes lose set-uid and set-gid bits; owners are kept
only as root, on the fds of files this function created. The total apparent size and the number
of members are bounded. Where Python's ``tarfile`` filters check paths with ``realpath``
(CVE-2025-4517 showed a path-length trick past it), nothing here resolves a path at all.

Layer: io.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO

from agentpost.ingress.hostdir import FILE_FLAGS, descend, open_regular, open_root, walk
from agentpost.ingress.keys import (
    Bounds,
    LinkRefused,
    Refused,
    TooLarge,
    normalise_key,
    split_key,
    under,
)

_CHUNK = 1 << 20
_MODE_MASK = 0o1777  # no set-uid / set-gid bits from an archive


@dataclass
class Extracted:
    """What ``extract`` did: members written, members dropped (devices) by name."""

    written: int = 0
    dropped: list[str] = field(default_factory=list)


def tree_size(dirs: Mapping[str, str], bounds: Bounds) -> int:
    """Apparent bytes of the regular files below ``dirs`` (each inode once); ``TooLarge`` past
    ``bounds``."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for name, host in dirs.items():
        rfd = open_root(host)
        try:
            for key, st in walk(rfd, bounds=bounds):
                if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_size
                    if total > bounds.max_bytes:
                        raise TooLarge(f"{name}: the files below it hold more than {bounds.max_bytes} "
                                       f"bytes (apparent size; {key} reached it)")  # fmt: skip
        finally:
            os.close(rfd)
    return total


def _info(name: str, st: os.stat_result, kind: bytes) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode = kind, stat.S_IMODE(st.st_mode)
    ti.uid, ti.gid, ti.mtime = st.st_uid, st.st_gid, int(st.st_mtime)
    return ti


def pack(dest: str, dirs: Mapping[str, str], bounds: Bounds = Bounds()) -> None:
    """Tar ``{sandbox dir: host dir}`` into ``dest`` (members named by sandbox path, without
    the leading ``/``), after checking the apparent size (``TooLarge``)."""
    tree_size(dirs, bounds)
    links: dict[tuple[int, int], str] = {}
    with tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tar:
        for spath, host in dirs.items():
            top = normalise_key(spath.strip("/"))
            rfd = open_root(host)
            try:
                tar.addfile(_info(top, os.fstat(rfd), tarfile.DIRTYPE))
                for key, st in walk(rfd, bounds=bounds, prefix=""):
                    _add(tar, rfd, key, f"{top}/{key}", st, links)
            finally:
                os.close(rfd)


def _add(tar: tarfile.TarFile, rfd: int, key: str, name: str, st: os.stat_result,
         links: dict[tuple[int, int], str]) -> None:  # fmt: skip
    parts = split_key(key)
    if stat.S_ISDIR(st.st_mode):
        tar.addfile(_info(name, st, tarfile.DIRTYPE))
    elif stat.S_ISLNK(st.st_mode):
        ti = _info(name, st, tarfile.SYMTYPE)
        with descend(rfd, parts[:-1], where=key) as d:
            ti.linkname = os.readlink(parts[-1], dir_fd=d)
        tar.addfile(ti)
    elif stat.S_ISREG(st.st_mode):
        first = links.get((st.st_dev, st.st_ino))
        if first is not None:
            ti = _info(name, st, tarfile.LNKTYPE)
            ti.linkname = first
            tar.addfile(ti)
            return
        if st.st_nlink > 1:
            links[(st.st_dev, st.st_ino)] = name
        with descend(rfd, parts[:-1], where=key) as d:
            fd = open_regular(d, parts[-1], where=key)
        with os.fdopen(fd, "rb") as f:
            now = os.fstat(fd)
            ti = _info(name, now, tarfile.REGTYPE)
            ti.size = now.st_size
            tar.addfile(ti, f)
    elif stat.S_ISFIFO(st.st_mode):  # part of the state (no contents): kept as a node
        tar.addfile(_info(name, st, tarfile.FIFOTYPE))
    # sockets and devices: left out (a socket is a live endpoint; a sandbox makes no devices)


def extract(src: str | int, dest: str, allowed: list[str] | None = None, *,
            skip: tuple[str, ...] = (), bounds: Bounds = Bounds(),
            keep_owner: bool | None = None) -> Extracted:  # fmt: skip
    """Unpack archive ``src`` (a path or an open fd) under existing host dir ``dest``, only the
    members under the ``allowed`` sandbox dirs (all when None) and not under ``skip``. Refuses
    the whole archive (``UnsafeKey`` / ``LinkRefused`` / ``TooLarge``, all ``Refused``) at the
    first member it cannot place safely; what was already written stays under ``dest`` only.

    Each ``allowed`` dir is made a real directory under ``dest`` before the first member, and
    a member that would replace it (a link ``app -> /home``) is refused: a caller may then use
    ``dest/<allowed dir>`` by path (copy it into a sandbox, remove a part of it) and reach only
    what the archive unpacked, never a host dir a link names."""
    prefixes = [normalise_key(a.strip("/")) for a in allowed] if allowed is not None else None
    skipped = [normalise_key(k.strip("/")) for k in skip]
    keep_owner = os.geteuid() == 0 if keep_owner is None else keep_owner
    out, total = Extracted(), 0
    regular: dict[str, tarfile.TarInfo] = {}  # hard links name these, never the disk
    dir_modes: dict[str, tarfile.TarInfo] = {}
    rfd = open_root(dest)
    try:
        for top in prefixes or ():
            with descend(rfd, split_key(top), create=True, where=top):
                pass
        with _open_tar(src) as tar:
            for i, m in enumerate(tar):
                if i >= bounds.max_entries:
                    raise TooLarge(f"archive: over {bounds.max_entries} members")
                key = normalise_key(m.name, where=f"archive member {m.name[:200]!r}")
                source = m
                if m.islnk():
                    want = normalise_key(m.linkname, where=f"hard link {key[:200]!r}")
                    source = regular.get(want)
                    if source is None:
                        raise LinkRefused(f"hard link {key[:200]!r} names no file before it")
                if m.isreg():
                    regular[key] = m
                if (prefixes is not None and not under(key, prefixes)) or under(key, skipped):
                    continue
                if m.isreg() or m.islnk():
                    total += source.size
                    if total > bounds.max_bytes:
                        raise TooLarge(f"archive: over {bounds.max_bytes} bytes (apparent size)")
                if m.isdir():
                    with descend(rfd, split_key(key), create=True, where=key):
                        dir_modes[key] = m
                elif m.isreg() or m.islnk() or m.issym() or m.isfifo():
                    _place(tar, rfd, key, m, source, keep_owner)
                else:  # devices: a sandbox cannot make them, a forged archive can
                    out.dropped.append(key)
                    continue
                out.written += 1
        for key in sorted(dir_modes, key=lambda k: -k.count("/")):  # deepest first
            m = dir_modes[key]
            with descend(rfd, split_key(key), where=key) as d:
                if keep_owner:
                    os.fchown(d, m.uid, m.gid)
                os.fchmod(d, m.mode & _MODE_MASK)
    finally:
        os.close(rfd)
    return out


def _open_tar(src: str | int) -> tarfile.TarFile:
    try:
        if isinstance(src, int):
            os.lseek(src, 0, os.SEEK_SET)
            return tarfile.open(fileobj=os.fdopen(os.dup(src), "rb"), mode="r:")
        return tarfile.open(src, "r:")
    except tarfile.TarError as e:
        raise Refused(f"archive: not a readable tar file ({e})") from None


def _place(tar: tarfile.TarFile, rfd: int, key: str, m: tarfile.TarInfo,
           source: tarfile.TarInfo, keep_owner: bool) -> None:  # fmt: skip
    parts = split_key(key)
    with descend(rfd, parts[:-1], create=True, where=key) as d:
        _clear(d, parts[-1], key)
        if m.issym():
            os.symlink(m.linkname, parts[-1], dir_fd=d)  # a leaf: never followed here
            if keep_owner:
                os.chown(parts[-1], m.uid, m.gid, dir_fd=d, follow_symlinks=False)
            return
        if m.isfifo():  # a leaf node: created, never opened here
            os.mkfifo(parts[-1], m.mode & 0o777, dir_fd=d)
            if keep_owner:
                os.chown(parts[-1], m.uid, m.gid, dir_fd=d, follow_symlinks=False)
            return
        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o600, dir_fd=d)
    with os.fdopen(fd, "wb") as f:
        data = tar.extractfile(source)
        if data is not None:
            _copy(data, f, source.size, key)
        if keep_owner:
            os.fchown(fd, m.uid, m.gid)
        os.fchmod(fd, m.mode & _MODE_MASK)
        os.utime(fd, (m.mtime, m.mtime))


def _clear(d: int, name: str, key: str) -> None:
    """Remove an earlier member of the same name (tar's rule: the later one wins); a directory
    in the way is refused rather than emptied."""
    try:
        st = os.stat(name, dir_fd=d, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise LinkRefused(f"archive member {key!r} would replace a directory")
    os.unlink(name, dir_fd=d)


def _copy(src, dst, limit: int | None, key: str) -> None:
    written = 0
    while block := src.read(_CHUNK):
        written += len(block)
        if limit is not None and written > limit:
            raise TooLarge(f"archive member {key!r}: more data than its header says")
        dst.write(block)


def iter_members(src: str | int, *, bounds: Bounds = Bounds()
                 ) -> Iterator[tuple[str, tarfile.TarInfo, IO[bytes] | None]]:  # fmt: skip
    """``(key, member, reader of its bytes or None)`` for each member of an archive, read
    without touching the disk (manifests, comparisons); names are checked as keys and the
    apparent size and member count are bounded (``Refused``)."""
    total = 0
    with _open_tar(src) as tar:
        for i, m in enumerate(tar):
            if i >= bounds.max_entries:
                raise TooLarge(f"archive: over {bounds.max_entries} members")
            key = normalise_key(m.name, where=f"archive member {m.name[:200]!r}")
            if m.isreg():
                total += m.size
                if total > bounds.max_bytes:
                    raise TooLarge(f"archive: over {bounds.max_bytes} bytes (apparent size)")
            yield key, m, tar.extractfile(m) if m.isreg() else None


def read_members(
    src: str | int, *, bounds: Bounds = Bounds()
) -> dict[str, tuple[tarfile.TarInfo, bytes | None]]:
    """``{key: (member, bytes for regular files)}`` of an archive (small ones: all in memory)."""
    return {
        k: (m, f.read() if f is not None else None) for k, m, f in iter_members(src, bounds=bounds)
    }
