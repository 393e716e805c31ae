"""Where the trajectory viewer's data goes: embedded in the page, or in a folder beside it.

``Shards`` receives one viewer entry per trajectory as the run streams past and packs them into
shards of about ``SHARD_BYTES`` of JSON. While the shards stay under ``EMBED_BYTES`` in all they
are kept in memory and embedded in the page (one offline file, as before); past it they are
written to a temporary folder beside the page, which ``install`` renames to ``<page>_data/``
(``index.js``, ``s-000000.js``, ...) once the run has been read, so memory stays bounded by one
shard whatever the run's size. A shard is a script that hands its entries to the viewer,
``window.__apShard(n, digest, [...])``; the page admits scripts of its own folder ('self': the
file: scheme, never the network) and the viewer refuses a shard whose digest is not the one its
index records (a folder left by another build of the report).

The data folder is replaced only when it is one this module wrote (its ``index.js`` starts with
``MARK``): a link, a file or someone else's folder of that name is an ``InputError``, never
followed or removed.

Layer: io.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import orjson

from agentpost.errors import InputError

SHARD_BYTES = 1_000_000  # JSON bytes per shard: one is read when one of its trajectories opens
EMBED_BYTES = 8_000_000  # up to this much trajectory JSON the page holds the data itself
MARK = b"/* agentpost report data (the trajectory viewer's index and shards) */\n"


def dumps(value: Any) -> bytes:
    """Compact JSON; text with unpaired surrogates (which orjson refuses) is \\u-escaped."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, default=str, separators=(",", ":")).encode()


def _inert(payload: bytes) -> bytes:
    """JSON that cannot close a ``<script>`` element or read as markup (``<``, ``>`` and ``&``
    only occur inside strings, where their escapes mean the same)."""
    return payload.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def data_dir_name(out: Path) -> str:
    return f"{out.stem}_data"


def _ours(target: Path) -> bool:
    """Whether ``target`` is absent (False) or a data folder this module wrote (True); anything
    else named so is an ``InputError``."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return False
    index = target / "index.js"
    if stat.S_ISDIR(st.st_mode):
        try:
            fd = os.open(index, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(MARK)) == MARK:
                    return True
            finally:
                os.close(fd)
        except OSError:
            pass
    raise InputError(target, None, "exists and is not a report data folder agentpost wrote: "
                     "not replaced (move it, or write the report elsewhere with -o)")  # fmt: skip


class Shards:
    """The viewer's shards of one report page ``out`` (see the module docstring)."""

    def __init__(self, out: Path, shard_bytes: int = SHARD_BYTES, embed_bytes: int = EMBED_BYTES):
        self.out = Path(out)
        self.name = data_dir_name(self.out)
        self.shard_bytes, self.embed_bytes = shard_bytes, embed_bytes
        self.places: list[tuple[int, int]] = []  # per trajectory: (shard, position)
        self.digests: list[str] = []
        self._open: list[bytes] = []
        self._size = self._total = 0
        self._kept: list[bytes] = []  # finished shards while the data is embedded
        self._tmp: Path | None = None
        self._indexed = False

    @property
    def external(self) -> bool:
        return self._tmp is not None

    def add(self, entry: dict[str, Any]) -> None:
        b = dumps(entry)
        self.places.append((len(self.digests), len(self._open)))
        self._open.append(b)
        self._size += len(b)
        if self._size >= self.shard_bytes:
            self._close_shard()

    def _close_shard(self) -> None:
        payload = b"[" + b",".join(self._open) + b"]"
        self._open, self._size = [], 0
        self.digests.append(hashlib.sha256(payload).hexdigest()[:16])
        self._total += len(payload)
        self._kept.append(payload)
        if self._tmp is None and self._total > self.embed_bytes:
            self._tmp = Path(tempfile.mkdtemp(prefix=f".{self.name}.tmp-", dir=self.out.parent))
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self._tmp, 0o777 & ~umask)  # readable as the page beside it (mkdtemp: 0700)
        if self._tmp is not None:
            first = len(self.digests) - len(self._kept)
            for k, p in enumerate(self._kept, start=first):
                self._write(f"s-{k:06d}.js", b"window.__apShard(%d,%s," % (k, dumps(self.digests[k])) + p + b");\n")  # fmt: skip
            self._kept = []

    def _write(self, name: str, data: bytes) -> None:
        assert self._tmp is not None
        with open(self._tmp / name, "xb") as f:
            f.write(MARK + data)

    def finish(self) -> None:
        """After the last ``add``: close the last shard (``digests``, ``places`` and
        ``external`` are then final)."""
        if self._open:
            self._close_shard()

    def html(self, index: dict[str, Any]) -> str:
        """After ``finish``: the data as the page carries it (embedded blocks, or the script
        tag of the external index, written now). ``index``: ``viewer.index(...)``."""
        self._indexed = True
        if self._tmp is None:
            blocks = [b'<script type="application/json" id="ap-index">' + _inert(dumps(index))]
            blocks += [b'</script><script type="application/json" id="ap-shard-%d">' % k
                       + _inert(p) for k, p in enumerate(self._kept)]  # fmt: skip
            return (b"".join(blocks) + b"</script>").decode()
        self._write("index.js", b"window.__apIndex=" + dumps(index) + b";\n")
        return f'<script src="{self.name}/index.js"></script>'

    def install(self) -> None:
        """Put the data folder in place beside ``out`` (external: an ``InputError`` when a link,
        a file or a folder agentpost did not write has its name), or remove a stale one this
        module wrote for an earlier, larger report of the same name (embedded)."""
        target = self.out.parent / self.name
        if self._tmp is not None and not self._indexed:  # no viewer on the page: no data
            self.discard()
        if self._tmp is None:  # someone else's folder of that name is no concern of this page
            try:
                if _ours(target):
                    shutil.rmtree(target)
            except InputError:
                pass
            return
        old = _ours(target)
        trash = target.with_name(f".{self.name}.old-{secrets.token_hex(4)}") if old else None
        try:
            if trash is not None:
                os.rename(target, trash)
            os.rename(self._tmp, target)
        except OSError as e:
            raise InputError(
                target, None, f"cannot put the report data in place: {e.strerror}"
            ) from None
        self._tmp = None
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)

    def discard(self) -> None:
        """Remove the temporary folder (the report was not written)."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
