"""One writer per output directory: an advisory lock on ``DIR/.agentpost.lock``.

``DirLock(out)`` takes ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the lock file and writes its pid
and command there. A second writer gets an ``InputError`` naming the directory and the pid
holding it, at once (it never waits). The kernel drops a flock when its holder exits, however
it exits, so a run killed with SIGKILL leaves no stale lock: the file stays, the lock does not.
A holder that finishes (or is interrupted: Ctrl-C unwinds through ``release``) removes the file
while it still holds the lock; ``acquire`` checks that the file it locked is still the one at the
path, so a process that opened it just before the removal retries instead of holding a ghost.
The lock file is opened as every output is (``documents.write.open_output``): a link, hard link
or FIFO planted under its name in a shared folder is an ``InputError``, never opened and truncated.
The lock is advisory and needs a filesystem with flock (local disks; NFS v4 emulates it).
Re-entrant within one thread (the CLI takes it before its progress bar, the runner again), so
nested holders share one flock; another thread of the same process is refused like a process.

Layer: io.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from pathlib import Path

from agentpost.documents.write import open_output
from agentpost.errors import InputError

LOCK_NAME = ".agentpost.lock"
_held: dict[str, list[int]] = {}  # "thread:realpath" of a lock this thread holds -> [fd, depth]


class DirLock:
    """Hold the writer lock of ``folder`` for a ``with`` block (creates ``folder``)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._key: str | None = None

    def acquire(self) -> DirLock:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            key = f"{threading.get_ident()}:{os.path.realpath(self.path)}"
            if key in _held:
                _held[key][1] += 1
                self._key = key
                return self
        except OSError as e:
            raise InputError(self.folder, None, f"cannot write here: {e.strerror}") from None
        for _ in range(100):  # a holder that just released unlinked the file we opened: retry
            fd = self._lock()
            if _same_file(fd, self.path):
                break
            os.close(fd)
        else:
            raise InputError(self.path, None, "cannot lock: the lock file keeps being replaced")
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}: {' '.join(sys.argv)[:200]}\n".encode())
        _held[key] = [fd, 1]
        self._key = key
        return self

    def _lock(self) -> int:
        """An open descriptor of the lock file, flocked; ``InputError`` when another holds it."""
        fd = open_output(self.path, os.O_RDWR | os.O_CREAT)  # never through a planted link
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise InputError(
                self.folder,
                None,
                f"another agentpost process ({holder}) is writing to this directory; wait for "
                "it to finish or choose another output directory",
            ) from None
        except OSError as e:  # a filesystem without flock
            os.close(fd)
            raise InputError(self.path, None, f"cannot lock: {e.strerror}") from None
        return fd

    def release(self) -> None:
        key, self._key = self._key, None
        entry = _held.get(key) if key else None
        if entry is not None:
            entry[1] -= 1
            if entry[1] == 0:
                del _held[key]
                try:  # no lock file left behind: removed while still held (see acquire)
                    os.unlink(self.path)
                except OSError:
                    pass
                os.close(entry[0])  # closing the last descriptor drops the flock

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a releasing holder unlinks it)."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 256, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text.split(":", 1)[0] if text else "unknown pid"
