"""Read and write canonical trajectories as JSONL (one trajectory per line).

Layer: io. orjson for speed; pydantic validates each line so a bad line names its line number.
Every failure to read or write (a missing file, a folder, a FIFO or device, a truncated or
binary line, a record that is not canonical) is an ``InputError`` naming the file and the place,
never a traceback. Only regular files are read, so memory stays bounded by the file's size (a
FIFO would block and ``/dev/zero`` never ends a line). A file that repeats an id (two runs that
once wrote one directory) is de-duplicated on reading: the first line of each id is kept and one
warning names the repeated ids, so no count silently doubles.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agentpost.documents.write import atomic_write, open_output
from agentpost.errors import InputError
from agentpost.ingress.hostdir import HeldFile
from agentpost.ingress.keys import Refused
from agentpost.trajectory.model import FORMAT, Trajectory

log = logging.getLogger("agentpost")


def dumps(traj: Trajectory) -> bytes:
    """One canonical JSON line (no trailing newline), keys in model order."""
    return orjson.dumps(traj.model_dump(mode="json", exclude_none=False))


def validate(data: Any, path: str | Path, where: str) -> Trajectory:
    """``data`` (one parsed record) as a ``Trajectory``; else an ``InputError`` at ``where``
    naming the first bad field as a JSON path. A record without ``format`` is most likely a
    scaffold log given where canonical JSONL was expected, so the message says how to convert."""
    try:
        return Trajectory.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        hint = ""
        if not (isinstance(data, dict) and "format" in data):
            hint = f" (not an {FORMAT} record; convert logs with `agentpost import`)"
        raise InputError(path, f"{where}: ${loc}", err["msg"] + hint) from None


def write_jsonl(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Write atomically (``documents.write.atomic_write``: temp file, fsync, rename, fsync the
    folder; a non-regular target is refused), streaming. Returns the count. If writing fails
    (or ``trajectories`` raises) ``path`` is untouched."""
    n = 0

    def lines():
        nonlocal n
        for traj in trajectories:
            yield dumps(traj) + b"\n"
            n += 1

    atomic_write(path, lines())
    return n


def append_jsonl(path: str | Path, traj: Trajectory) -> None:
    """Append one trajectory line and fsync it (for resumable runs). A kill mid-append can
    leave a torn last line; the resuming reader cuts it (``agent.run.finished_ids``). The file
    is opened as every output is (``documents.write.open_output``): a link or hard link planted
    under its name is an ``InputError``, never appended to."""
    fd = open_output(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "wb") as f:
        f.write(dumps(traj) + b"\n")
        f.flush()
        os.fsync(f.fileno())


def _bad_json(path: Path, lineno: int, line: bytes, e: orjson.JSONDecodeError) -> InputError:
    nul = line.find(b"\x00")
    if nul >= 0:
        return InputError(path, f"line {lineno} column {nul + 1}", "binary data, not JSON")
    hint = ""
    if lineno == 1 and line.strip() in (b"{", b"["):  # a pretty-printed document, e.g. a raw log
        hint = (
            f" (a multi-line JSON document, not {FORMAT} JSONL;"
            " convert logs with `agentpost import`)"
        )
    return InputError(path, f"line {lineno} column {e.colno}", f"invalid JSON: {e.msg}{hint}")


_ONE_READ = 0x7FFFF000  # the most one read(2) returns on Linux


def _regular_fd(path: str | Path | HeldFile, what: str) -> tuple[int, int]:
    """A read-only descriptor of a regular file and its size; a directory, FIFO, socket or
    device (which could block or never end) is an ``InputError``, as is any failure to open.
    A ``HeldFile`` (a file a run folder's walk found) is reopened by descent from the folder's
    fd, never by path: a link on the way is an ``InputError`` too."""
    if isinstance(path, HeldFile):
        try:
            fd = path.open_fd()
        except Refused as e:
            why = f"cannot {what}: {e} (a run folder's files are read without a link on the way)"
            raise InputError(str(path), None, why) from None
        except OSError as e:
            raise InputError(str(path), None, f"cannot {what}: {e.strerror}") from None
        return fd, os.fstat(fd).st_size
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block
    except OSError as e:
        raise InputError(path, None, f"cannot {what}: {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = (
            "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO or device)"
        )
        raise InputError(path, None, f"cannot {what}: {kind}")
    return fd, st.st_size


def open_regular(path: str | Path | HeldFile, what: str = "read"):
    """``open(path, "rb")`` for a regular file; a directory, FIFO, socket or device (which could
    block or never end) is an ``InputError``, as is any failure to open."""
    fd, _ = _regular_fd(path if isinstance(path, HeldFile) else Path(path), what)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_regular(path: str | Path | HeldFile) -> bytes:
    """The bytes of a regular file (``open_regular``'s checks), or an ``InputError``.

    One ``read`` of the size ``fstat`` gave, plus one byte: a short read of a regular file is
    its end, so a file read whole costs one system call (an import reads thousands of small
    files; a buffered file object doubled the cost of reading them). A file that grew since,
    or one past what Linux reads in one call (2 GiB), is read on to its end. ``path`` goes to
    ``os.open`` as given: a new ``Path`` per call re-parsed it and rebuilt its string, which
    cost about as much as the read itself."""
    fd, size = _regular_fd(path, "read")
    try:
        data = os.read(fd, size + 1)
        if len(data) != size or size >= _ONE_READ:
            parts = [data]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            data = b"".join(parts)
        return data
    except OSError as e:
        raise InputError(str(path), None, f"cannot read: {e.strerror}") from None
    finally:
        os.close(fd)


def iter_jsonl(
    path: str | Path | HeldFile, progress: Callable[[int], object] | None = None
) -> Iterator[Trajectory]:
    """Yield trajectories from a canonical JSONL file; a file that cannot be read or a bad line
    raises ``InputError`` naming the file and the line (and column or JSON path). A repeated id
    is skipped (the first line wins) and reported once, at the end, as a warning. ``progress``
    is called with the bytes of each line read (a progress bar over the file's size)."""
    for traj, _ in iter_lines(path, progress):
        yield traj


def iter_lines(
    path: str | Path | HeldFile, progress: Callable[[int], object] | None = None
) -> Iterator[tuple[Trajectory, bytes]]:
    """``iter_jsonl``, each trajectory with the line it was read from (``path`` may be a
    ``HeldFile``: read by descent, see ``_regular_fd``)."""
    src = path if isinstance(path, HeldFile) else Path(path)
    name: str | Path = str(path) if isinstance(path, HeldFile) else Path(path)  # for messages
    seen: set[str] = set()
    repeated: list[str] = []
    with open_regular(src) as f:
        try:
            for lineno, line in enumerate(f, start=1):
                if progress is not None:
                    progress(len(line))
                if not line.strip():
                    continue
                try:
                    data = orjson.loads(line)
                except orjson.JSONDecodeError as e:
                    raise _bad_json(Path(name), lineno, line, e) from None
                traj = validate(data, name, f"line {lineno}")
                if traj.id in seen:
                    repeated.append(traj.id)
                    continue
                seen.add(traj.id)
                yield traj, line
        except OSError as e:
            raise InputError(name, None, f"cannot read: {e.strerror}") from None
    if repeated:
        warn_repeated(name, repeated)


def warn_repeated(path: str | Path, ids: list[str]) -> None:
    """One warning naming (up to five of) the ids ``path`` repeats."""
    names = sorted(set(ids))
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    log.warning(
        f"warning: {path}: {len(ids)} lines repeat an earlier id and were skipped "
        f"(the first of each kept): {shown}"
    )


def read_jsonl(path: str | Path) -> list[Trajectory]:
    return list(iter_jsonl(path))
