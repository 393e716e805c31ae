"""The demo's file helpers: indented JSON written through the one ``documents.write.atomic_write``
(whole or not at all), and the content hash a cheap stage is recomputed by.

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from agentpost.documents.write import atomic_write


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON ending in a newline, atomically (``atomic_write``). orjson
    rather than ``documents.write.write_json``: stage results may hold numpy values and
    non-string keys."""
    opt = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    atomic_write(path, orjson.dumps(data, default=str, option=opt) + b"\n")


def digest(*paths: Path) -> str:
    """A short hash of the files' bytes (a missing file hashes as ``-``)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:16]
