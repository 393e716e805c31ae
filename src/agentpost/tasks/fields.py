"""Field readers both task formats share (Harbor ``task.toml``, Terminal-Bench 1 ``task.yaml``):
a positive number, agentpost's own ``[agentpost]`` table, the wrong solutions, an optional path.
Each raises an ``InputError`` naming the file and the field.

Layer: io.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentpost.errors import InputError

_NUMBER = (int, float)


def read_text(path: Path) -> str:
    """A task file's text; a file that is not UTF-8, or cannot be read (a FIFO, a directory, no
    permission), is an ``InputError`` naming it (and the first bad byte), not a traceback."""
    from agentpost.trajectory.io import read_regular

    raw = read_regular(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, f"byte {e.start}", "not UTF-8 text") from None


def positive_number(table: dict, key: str, default: float, path: Path, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, _NUMBER) or value <= 0:
        raise InputError(path, where, f"must be a positive number, got {value!r}")
    return float(value)


_SIZE = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def size_mb(table: dict, key: str, path: Path, where: str) -> int | None:
    """``KEY_mb = 2048`` or Harbor's older ``KEY = "2G"`` (K, M, G, T; binary units, as
    Harbor reads them) in MB; None when neither is set; both, disagreeing, is an error."""
    mb = table.get(f"{key}_mb")
    if mb is not None:
        mb = int(positive_number(table, f"{key}_mb", 1, path, f"{where}.{key}_mb"))
    text = table.get(key)
    if text is None:
        return mb
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:I?B)?\s*", str(text), re.I)
    if isinstance(text, bool) or not isinstance(text, str) or not m:
        raise InputError(
            path, f"{where}.{key}", f'must be a size like "2G" or "512M", got {text!r}'
        )
    value = int(float(m.group(1)) * _SIZE[m.group(2).upper()])
    if value <= 0:
        raise InputError(path, f"{where}.{key}", f"must be a positive size, got {text!r}")
    if mb is not None and mb != value:
        raise InputError(path, f"{where}.{key}", f"{text!r} disagrees with {key}_mb = {mb}")
    return value


def agentpost_table(table: dict[str, Any], path: Path, where: str) -> dict[str, Any]:
    explore = table.get("explore", [])
    if not isinstance(explore, list) or not all(isinstance(c, str) for c in explore):
        raise InputError(path, f"{where}.explore", "must be a list of strings")
    check = table.get("check")
    if check is not None and not isinstance(check, str):
        raise InputError(path, f"{where}.check", "must be a string")
    workdir = table.get("workdir", "/app")
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise InputError(path, f"{where}.workdir", "must be an absolute sandbox path")
    if not isinstance(table.get("writable_root", False), bool):
        raise InputError(path, f"{where}.writable_root", "must be true or false")
    return table


def wrong_solutions(root: Path) -> tuple[Path, ...]:
    wrong = root / "wrong"
    if not wrong.is_dir():
        return ()
    found = [wrong / "solve.sh"] if (wrong / "solve.sh").is_file() else []
    found += sorted(p / "solve.sh" for p in wrong.iterdir() if (p / "solve.sh").is_file())
    return tuple(found)


def maybe(path: Path) -> Path | None:
    """``path`` when it exists, else None."""
    return path if path.exists() else None
