"""A content-addressed result store: every stage resumable, nothing computed twice.

A result is keyed by a hash of the inputs that determine it (``key(kind, inputs)``), so a rerun
with the same inputs finds it and skips the work. Each ``put`` is one SQLite transaction (WAL
journal, ``synchronous=FULL``): an entry is either fully committed or absent, never half-written,
even if the process is killed mid-write, and a committed entry survives a power cut. Safe for
several threads (one connection per thread) and several processes (SQLite locking); two workers
that ask for the same missing key at the same moment may both compute it (the last write wins).
WAL needs a local file system (not NFS), so keep the store on local disk. A store that cannot be
opened (a folder, no permission, not a SQLite file) is an ``InputError``, and so is a store whose
file is a link or a hard link (a shared run folder may hold one planted: ``_connect``).

Layer: io.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agentpost.documents.write import LINK_REFUSED, open_output
from agentpost.errors import InputError

_ABSENT = object()
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value BLOB NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_kind ON results(kind);
"""


def key(kind: str, inputs: Any) -> str:
    """A stable key for ``inputs`` (any JSON-serialisable value; dict keys are sorted), prefixed
    with ``kind:`` so results can be counted and listed by kind."""
    if ":" in kind:
        raise ValueError(f"a result kind may not contain ':' ({kind!r})")
    blob = orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY)
    return kind + ":" + hashlib.sha256(blob).hexdigest()


class Store:
    """Results by key. ``get_or_compute`` is the usual entry point."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn().executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as e:  # a folder, no permission, not a SQLite file
            raise InputError(self.path, None, f"cannot open the result store: {e}") from None

    def _own_file(self) -> tuple[int, int]:
        """(device, inode) of the database file, checked as every output is
        (``documents.write.open_output``): a link, hard link or FIFO there is an InputError.

        An existing file is checked by ``lstat``, never opened: closing any fd of the database
        file drops every POSIX lock this process holds on it, the locks of the SQLite
        connections other threads have open included; another process's connection then
        believes itself the last one, checkpoints and deletes the WAL, and what those threads
        write afterwards goes to an unlinked WAL and is lost (tests/test_store.py). Only a file
        that does not exist yet, which no connection can be holding, is made through
        ``open_output``."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            try:
                fd = open_output(self.path, os.O_RDWR | os.O_CREAT)
            except InputError as e:
                why = e.message.removeprefix("cannot write: ")
                raise InputError(self.path, None, f"cannot open the result store: {why}") from None
            try:
                st = os.fstat(fd)
            finally:
                os.close(fd)
            return st.st_dev, st.st_ino
        except OSError as e:
            raise InputError(
                self.path, None, f"cannot open the result store: {e.strerror}"
            ) from None
        if stat.S_ISLNK(st.st_mode):
            why = LINK_REFUSED
        elif not stat.S_ISREG(st.st_mode):
            why = "not a regular file"
        elif st.st_nlink > 1:
            why = "a hard link: another name shares this file"
        else:
            return st.st_dev, st.st_ino
        raise InputError(self.path, None, f"cannot open the result store: {why}")

    def _connect(self) -> sqlite3.Connection:
        """SQLite follows a link at the database's name (its ``-wal``, ``-shm`` and
        ``-journal`` it opens ``O_NOFOLLOW``): the file is checked first, and the file SQLite
        opened (``PRAGMA database_list``) must be that very file, else nothing is written."""
        ident = self._own_file()
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            opened = [r[2] for r in conn.execute("PRAGMA database_list") if r[1] == "main"]
            st = os.stat(opened[0]) if opened and opened[0] else None
            same = st is not None and (st.st_dev, st.st_ino) == ident
        except (OSError, sqlite3.Error):
            same = False
        if not same or os.path.islink(self.path):
            conn.close()
            raise InputError(self.path, None, "cannot open the result store: it was replaced "
                             "(by a link?) while being opened")  # fmt: skip
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            self._local.conn = conn
        return conn

    def get(self, k: str, default: Any = None) -> Any:
        """The stored value, or ``default`` when ``k`` is absent (a stored ``None`` is found)."""
        row = self._conn().execute("SELECT value FROM results WHERE key = ?", (k,)).fetchone()
        return orjson.loads(row[0]) if row else default

    def __contains__(self, k: str) -> bool:
        return (
            self._conn().execute("SELECT 1 FROM results WHERE key = ?", (k,)).fetchone() is not None
        )

    def put(self, k: str, value: Any) -> None:
        """Store ``value`` (JSON-serialisable) under ``k`` in one transaction: whole or absent."""
        kind = k.split(":", 1)[0]
        blob = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
        self._conn().execute(
            "INSERT OR REPLACE INTO results (key, kind, value, created) VALUES (?, ?, ?, ?)",
            (k, kind, blob, time.time()),
        )

    def get_or_compute(self, kind: str, inputs: Any, compute: Callable[[], Any]) -> Any:
        """Return the stored result for ``(kind, inputs)``, computing and storing it if absent."""
        k = key(kind, inputs)
        found = self.get(k, _ABSENT)
        if found is not _ABSENT:  # a stored None counts as done
            return found
        value = compute()
        self.put(k, value)
        return value

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self._conn().execute("SELECT COUNT(*) FROM results").fetchone()[0]
        return (
            self._conn()
            .execute("SELECT COUNT(*) FROM results WHERE kind = ?", (kind,))
            .fetchone()[0]
        )

    def items(self, kind: str) -> Iterator[tuple[str, Any]]:
        for k, v in self._conn().execute("SELECT key, value FROM results WHERE kind = ?", (kind,)):
            yield k, orjson.loads(v)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
