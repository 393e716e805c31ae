"""The demo's file helpers: indented JSON written whole or not at all, and the content hash a
cheap stage is recomputed by.

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, written to a temporary name and renamed (never half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    opt = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    tmp.write_bytes(orjson.dumps(data, default=str, option=opt))
    tmp.replace(path)


def digest(*paths: Path) -> str:
    """A short hash of the files' bytes (a missing file hashes as ``-``)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:16]
