"""Read and write canonical trajectories as JSONL (one trajectory per line).

Layer: io. orjson for speed; pydantic validates each line so a bad line names its line number.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson
from pydantic import ValidationError

from agentpost.errors import InputError
from agentpost.trajectory.model import Trajectory


def dumps(traj: Trajectory) -> bytes:
    """One canonical JSON line (no trailing newline), keys in model order."""
    return orjson.dumps(traj.model_dump(mode="json", exclude_none=False))


def write_jsonl(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Write atomically (temp file + rename), so a crash never leaves half a file. Returns count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with open(tmp, "wb") as f:
        for traj in trajectories:
            f.write(dumps(traj) + b"\n")
            n += 1
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return n


def append_jsonl(path: str | Path, traj: Trajectory) -> None:
    """Append one trajectory line and fsync it (for resumable runs)."""
    with open(path, "ab") as f:
        f.write(dumps(traj) + b"\n")
        f.flush()
        os.fsync(f.fileno())


def iter_jsonl(path: str | Path) -> Iterator[Trajectory]:
    """Yield trajectories from a canonical JSONL file; a bad line raises ``InputError`` naming
    the file and the line."""
    path = Path(path)
    with open(path, "rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                raise InputError(path, f"line {lineno}", f"invalid JSON: {e}") from None
            try:
                yield Trajectory.model_validate(data)
            except ValidationError as e:
                err = e.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise InputError(path, f"line {lineno}: $.{where}", err["msg"]) from None


def read_jsonl(path: str | Path) -> list[Trajectory]:
    return list(iter_jsonl(path))
