"""JSONL record files of the security commands: label records (`security attribute`), graded
samples (`security metrics`), and the JSONL outputs of `security annotate` and `security demo`.

Every reader goes through ``iter_json_lines``, so a missing file, a bad line or a record of the
wrong shape is one ``InputError`` naming the file and the line. Files are decoded with
``errors="replace"`` (a stray byte becomes U+FFFD rather than a traceback).

Layer: io.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agentpost.documents.write import write_lines
from agentpost.errors import InputError
from agentpost.security.attribution import is_labelled, validate_record


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(1-based line number, parsed JSON value) for each non-blank line of ``path``."""
    from agentpost.trajectory.io import read_regular

    if not path.exists():
        raise InputError(path, None, "file not found")
    text = read_regular(path).decode("utf-8", errors="replace")  # refuses FIFOs and devices
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except ValueError as e:
            raise InputError(path, f"line {n}", f"invalid JSON: {e}") from None
        except RecursionError:
            raise InputError(path, f"line {n}", "JSON nested too deeply") from None


def read_labels(path: Path) -> list[dict]:
    """The non-aborted, fully labelled records of a JSONL file (validated by
    ``validate_record``; a record with a null label, which no judge decided, is skipped)."""
    records = []
    for n, obj in iter_json_lines(path):
        try:
            rec = validate_record(obj)
        except ValueError as e:
            raise InputError(path, f"line {n}", f"{e} (not a label record)") from None
        if not rec.get("aborted") and is_labelled(rec):
            records.append(rec)
    if not records:
        raise InputError(path, None, "no label records")
    return records


def require_agents(records: list[dict], path: Path, options: dict[str, str | None]) -> None:
    """Each option's agent (``{"--agent-a": name}``), unless None, is one of the records'."""
    agents = {r["agent"] for r in records}
    for opt, name in options.items():
        if name is not None and name not in agents:
            raise InputError(path, opt, f"agent {name!r} not in the labels ({sorted(agents)})")


def read_graded(path: Path) -> list[dict]:
    """Graded samples {task, func, sec, ...}: label records, `security grade --json` lines or
    `security demo` grades rows (``task_id`` is copied to ``task`` when ``task`` is absent)."""
    rows = []
    for n, r in iter_json_lines(path):
        if isinstance(r, dict) and "task" not in r and "task_id" in r:
            r["task"] = r["task_id"]
        if not isinstance(r, dict) or "task" not in r or "func" not in r or "sec" not in r:
            raise InputError(path, f"line {n}", "needs task (or task_id), func and sec")
        rows.append(r)
    return rows


def write_records(path: Path, rows: Iterable[Any]) -> None:
    """One JSON document per line (values JSON cannot hold are written as ``str``), atomically."""
    write_lines(path, rows, default=str)
