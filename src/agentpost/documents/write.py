"""The one way agentpost writes an output file: ``atomic_write`` (and ``open_output`` for the
few outputs that are appended to or locked in place).

Temp file in the same folder (hidden, unique: concurrent writers never share it and folder walks
skip it), fsync, rename over the target, fsync the folder; a crash leaves the old file or the
whole new one, never a torn one. If writing fails (or the data iterator raises) the temp file is
removed and the target untouched; an ``OSError`` becomes an ``InputError`` naming the file.

Links (a run folder may be shared: docs/threat-model.md, "Run folders (writes)"): the folder
the user named (``root``; by default the output's own folder) is followed as the system follows
any path the user typed; every folder below it is reached by descent from its fd
(``ingress.hostdir.descend``: ``openat`` with ``O_NOFOLLOW``, made with ``mkdirat`` when
missing), so a link planted there is an ``InputError``, never followed. The output's own name is
never written through: a symbolic link, a directory, a device, FIFO or socket there is refused
(``/dev/null`` as root would otherwise be replaced by a file; a link could make us replace the
file it points to), and the temp file is made ``O_EXCL|O_NOFOLLOW`` and renamed within the
folder we hold, so a link planted after the check is replaced, not followed.

Layer: io.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.ingress.hostdir import FILE_FLAGS, descend
from agentpost.ingress.keys import LinkRefused

LINK_REFUSED = ("a symbolic link: agentpost writes no output through a link, nor over one "
                "(docs/threat-model.md)")  # fmt: skip


def _refusal(mode: int) -> str | None:
    """Why an existing output name of ``mode`` (its ``lstat``) may not be written, or None."""
    if stat.S_ISLNK(mode):
        return LINK_REFUSED
    if stat.S_ISDIR(mode):
        return "Is a directory"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, FIFO or socket)"
    return None


def check_target(path: str | Path) -> None:
    """An output path must be absent or a regular file (not a link: ``lstat``): an atomic
    replace would otherwise put a file in place of a device (``-o /dev/null`` as root), a FIFO,
    a socket, or a link the user may have meant to write through."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # absent, or unreachable: the write itself says why
        return
    why = _refusal(mode)
    if why is not None:
        raise InputError(path, None, f"cannot write: {why}")


# a folder that cannot be opened or synced here (a filesystem without folder fsync, a folder
# without read permission): the file is written, only the rename's durability is not assured
_NO_FOLDER_SYNC = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES, errno.EPERM}


def fsync_dir(folder: Path | int, name: Path | None = None) -> None:
    """Make a rename durable: the directory entry itself must reach the disk (``folder``: a
    path, or an open fd named ``name``). Where the folder cannot be synced (``_NO_FOLDER_SYNC``)
    that is skipped; another failure (an I/O error) is an ``InputError`` naming the folder."""
    try:
        fd = os.dup(folder) if isinstance(folder, int) else os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno in _NO_FOLDER_SYNC:
            return
        where = name if isinstance(folder, int) else folder
        raise InputError(where, None, f"wrote into it but cannot sync it: {e.strerror}") from None


@contextmanager
def output_folder(path: str | Path, root: str | Path | None = None) -> Iterator[int]:
    """An fd of the folder of output ``path``: ``root`` (default: that folder itself) made when
    missing and opened as the user named it; each folder between ``root`` and ``path`` reached
    by descent (made when missing; a link or non-folder there is an ``InputError``)."""
    path = Path(path)
    top = Path(root) if root is not None else path.parent
    parts = list(path.parent.relative_to(top).parts)  # ValueError: a caller's mistake
    try:
        top.mkdir(parents=True, exist_ok=True)
        rfd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror}") from None
    try:
        with descend(rfd, parts, create=True, where=str(path.parent)) as d:
            yield d
    except LinkRefused as e:
        raise InputError(path, None, f"cannot write: {e}: agentpost makes no folder of its "
                         "output through a link (docs/threat-model.md)") from None  # fmt: skip
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror}") from None
    finally:
        os.close(rfd)


def atomic_write(path: str | Path, data: bytes | str | Iterable[bytes], *,
                 root: str | Path | None = None, mode: int | None = None) -> Path:  # fmt: skip
    """Write ``data`` (bytes, text as UTF-8, or an iterable of byte chunks, streamed) to
    ``path`` atomically; creates the folders (below ``root`` by descent: module docstring).
    ``mode`` (e.g. ``0o755``) is set on the new file's own fd before it takes the name (a
    ``chmod`` by path afterwards could follow a link put there meanwhile). Returns ``path``."""
    path = Path(path)
    chunks = (
        [data.encode() if isinstance(data, str) else data]
        if isinstance(data, str | bytes)
        else data
    )
    with output_folder(path, root) as d:
        _write_in(d, path, chunks, mode)
    return path


def _write_in(d: int, path: Path, chunks: Iterable[bytes], mode: int | None) -> None:
    name = path.name
    try:
        why = _refusal(os.stat(name, dir_fd=d, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        why = None
    if why is not None:
        raise InputError(path, None, f"cannot write: {why}")
    tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o666, dir_fd=d)
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
    except BaseException as e:
        try:
            os.unlink(tmp, dir_fd=d)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            raise InputError(path, None, f"cannot write: {e.strerror}") from None
        raise
    fsync_dir(d, path.parent)


def refuse_links_below(folder: str | Path) -> None:
    """An output folder resumed in place whose writers go by path (the lab's torch and
    transformers checkpoints, pyarrow and JSONL data) must hold no symbolic link below it: a
    planted ``OUT/corpus -> /host/dir`` would be followed. The folder itself is the user's
    (followed, like any path on a command line); every entry below is checked by ``lstat``
    without following, and the first link is an ``InputError`` naming it. A link planted after
    this check, while the run goes on, is outside it (docs/threat-model.md)."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            if p.is_symlink():
                raise InputError(p, None, f"cannot write: {LINK_REFUSED}")


def open_output(path: str | Path, flags: int, *, root: str | Path | None = None,
                mode: int = 0o644) -> int:  # fmt: skip
    """An fd of output ``path`` opened in place with ``flags`` (``os.O_APPEND | os.O_CREAT``
    to append, ``os.O_RDWR`` to cut a torn line, a lock file), reached as ``atomic_write``
    reaches its folder; the file itself must be absent (with ``O_CREAT``) or a regular file with
    no other hard link: a link, hard link, device, FIFO or socket is an ``InputError``."""
    path = Path(path)
    with output_folder(path, root) as d:
        try:
            fd = os.open(path.name, flags | FILE_FLAGS, mode, dir_fd=d)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError(path, None, f"cannot write: {LINK_REFUSED}") from None
            if e.errno == errno.ENXIO:
                raise InputError(path, None, "cannot write: not a regular file (a FIFO)") from None
            raise InputError(path, None, f"cannot write: {e.strerror}") from None
    st = os.fstat(fd)
    why = _refusal(st.st_mode) or ("a hard link: another name shares this file"
                                   if st.st_nlink > 1 else None)  # fmt: skip
    if why is not None:
        os.close(fd)
        raise InputError(path, None, f"cannot write: {why}")
    os.set_blocking(fd, True)
    return fd


def write_json(path: str | Path, doc: Any, indent: int | None = 2, default=None, *,
               root: str | Path | None = None) -> Path:  # fmt: skip
    """``doc`` as JSON, atomically, ending in a newline (``default`` as in ``json.dumps``)."""
    return atomic_write(path, json.dumps(doc, indent=indent, default=default) + "\n", root=root)


def write_lines(path: str | Path, rows: Iterable[Any], default=None, *,
                root: str | Path | None = None) -> Path:  # fmt: skip
    """One JSON object per line (JSONL), atomically."""
    lines = (json.dumps(r, default=default).encode() + b"\n" for r in rows)
    return atomic_write(path, lines, root=root)
