"""The one way agentpost writes an output file: ``atomic_write``.

Temp file in the same folder (hidden, unique: concurrent writers never share it and folder walks
skip it), fsync, rename over the target, fsync the folder; a crash leaves the old file or the
whole new one, never a torn one. A target that is not a regular file (``/dev/null``, a FIFO, a
socket, a directory) is refused by ``check_target``: a rename would replace the device; a
symbolic link is written through (its target replaced, the link kept). If
writing fails (or the data iterator raises) the temp file is removed and the target untouched;
an ``OSError`` becomes an ``InputError`` naming the file.

Layer: io.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentpost.errors import InputError


def check_target(path: str | Path) -> None:
    """An output path must be absent or a regular file: an atomic replace would otherwise put
    a file in place of a device (``-o /dev/null`` as root), a FIFO or a socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # absent, or unreachable: the write itself says why
        return
    if stat.S_ISDIR(mode):
        raise InputError(path, None, "cannot write: Is a directory")
    if not stat.S_ISREG(mode):
        raise InputError(path, None, "cannot write: not a regular file (a device, FIFO or socket)")


# a folder that cannot be opened or synced here (a filesystem without folder fsync, a folder
# without read permission): the file is written, only the rename's durability is not assured
_NO_FOLDER_SYNC = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES, errno.EPERM}


def fsync_dir(folder: Path) -> None:
    """Make a rename durable: the directory entry itself must reach the disk. Where the folder
    cannot be synced (``_NO_FOLDER_SYNC``) that is skipped; another failure (an I/O error) is an
    ``InputError`` naming the folder, not a traceback."""
    try:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno in _NO_FOLDER_SYNC:
            return
        raise InputError(folder, None, f"wrote into it but cannot sync it: {e.strerror}") from None


def atomic_write(path: str | Path, data: bytes | str | Iterable[bytes]) -> Path:
    """Write ``data`` (bytes, text as UTF-8, or an iterable of byte chunks, streamed) to
    ``path`` atomically; creates the folder. Returns ``path``."""
    path = Path(path)
    if path.is_symlink():  # write through a link, as a shell redirect does (not over it)
        path = Path(os.path.realpath(path))
    check_target(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(tmp, "xb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror}") from None
    chunks = (
        [data.encode() if isinstance(data, str) else data]
        if isinstance(data, str | bytes)
        else data
    )
    try:
        with f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise InputError(path, None, f"cannot write: {e.strerror}") from None
        raise
    fsync_dir(path.parent)
    return path


def write_json(path: str | Path, doc: Any, indent: int | None = 2, default=None) -> Path:
    """``doc`` as JSON, atomically, ending in a newline (``default`` as in ``json.dumps``)."""
    return atomic_write(path, json.dumps(doc, indent=indent, default=default) + "\n")


def write_lines(path: str | Path, rows: Iterable[Any], default=None) -> Path:
    """One JSON object per line (JSONL), atomically."""
    return atomic_write(path, (json.dumps(r, default=default).encode() + b"\n" for r in rows))
