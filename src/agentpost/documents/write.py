"""The one way agentpost writes an output file: ``atomic_write``.

Temp file in the same folder (hidden, unique: concurrent writers never share it and folder walks
skip it), fsync, rename over the target, fsync the folder; a crash leaves the old file or the
whole new one, never a torn one. A target that is not a regular file (``/dev/null``, a FIFO, a
socket, a directory) is refused by ``check_target``: a rename would replace the device. If
writing fails (or the data iterator raises) the temp file is removed and the target untouched;
an ``OSError`` becomes an ``InputError`` naming the file.

Layer: io.
"""

from __future__ import annotations

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


def fsync_dir(folder: Path) -> None:
    """Make a rename durable: the directory entry itself must reach the disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str | Path, data: bytes | str | Iterable[bytes]) -> Path:
    """Write ``data`` (bytes, text as UTF-8, or an iterable of byte chunks, streamed) to
    ``path`` atomically; creates the folder. Returns ``path``."""
    path = Path(path)
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
