"""Find what a run directory holds: every plain JSON/JSONL file (depth ≤ 3, no symlink on the
way: ``_plain_files``), classified by its ``format`` field first (the table in
``documents.formats``) and by its shape second, never by name. ``report.build`` renders what
this finds; ``report.rundata`` joins it per trajectory.

A run folder may be shared, and its files are read twice (classified here, streamed later by
``report.rundata``): every file is a ``ingress.hostdir.HeldFile``, reopened by descent from the
fd of the folder this scan opened, never by its path, so a folder swapped for a link between
the walk and a read is refused (an ``InputError`` naming the file), never followed.

Layer: io.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentpost.documents.formats import kind_of
from agentpost.errors import InputError
from agentpost.ingress.hostdir import HeldFile, OpenDir, walk
from agentpost.ingress.keys import Bounds, Refused, TooLarge

MAX_BYTES = 200 * 1024 * 1024
SKIP_DIRS = {"sandboxes", "snapshots", "work", "__pycache__", ".git"}
# kind → (what the overview calls it, whether only the first file of the kind is rendered)
KINDS: dict[str, tuple[str, bool]] = {
    "trajectories": ("canonical trajectories", False),
    "run_summary": ("run summary (agentpost run)", False),
    "efficiency": ("HERO efficiency analyses", False),  # the first in full, all for entropy
    "advantages": ("HERO advantages", True),
    "hero_groups": ("HERO advantage input groups", False),
    "scvd_metrics": ("SCVD metrics", True),
    "scvd_records": ("SCVD per-trajectory records", True),
    "judge_answers": ("SCVD raw judge answers", False),
    "security_summary": ("security FuncPass/SecPass summary", True),
    "security_attribute": ("security behaviour attribution", True),
    "security_check": ("security suite check", True),
    "security_grade": ("security grade of one candidate", False),
    "security_lines": ("security grades, annotations or labels", False),
    "lab_hero": ("lab: HERO vs GRPO (agentpost lab hero)", True),
    "lab_scvd": ("lab: SCVD vs FTD (agentpost lab scvd)", True),
    "demo": ("demo stages", False),
    "import": ("import summary (agentpost import)", False),
}


JSONL_KINDS = {"trajectories", "scvd_records"}  # one record per line, never a .json document


@dataclass
class Found:
    """What a run directory holds: per kind, ``(relative path, data)`` in path order; for
    canonical trajectories, judge answers and security lines the data is the file itself (a
    ``HeldFile``: ``report.rundata`` streams it)."""

    files: dict[str, list[tuple[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})
    unrecognised: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # sections that could not be rendered


def classify_json(d: Any) -> str | None:
    """The kind of a JSON document, from its ``format`` field or, failing that, its keys."""
    if not isinstance(d, dict):
        return None
    kind = kind_of(d)  # the table of formats; a file without a known format: by its keys
    if kind is not None:
        return None if kind in JSONL_KINDS else kind
    if "per_model" in d and "macro" in d:
        return "scvd_metrics"
    rollouts = d.get("rollouts")
    if isinstance(rollouts, list) and rollouts and "turn_advantages" in rollouts[0]:
        return "advantages"
    tasks = d.get("tasks")
    if (
        isinstance(tasks, list)
        and tasks
        and isinstance(tasks[0], dict)
        and "vulnerable" in tasks[0]
    ):
        return "security_check"
    if "phi" in d and "agents" in d:
        return "security_attribute"
    if "per_cwe" in d and "metrics" in d:
        return "security_summary"
    if "func" in d and "sec" in d and "status" in d:
        return "security_grade"
    rows = d.get("trajectories")
    if isinstance(rows, list) and any(k in d for k in ("per_model", "models", "by_model")):
        return "efficiency"
    return None


def nothing_here(run_dir: Path, found: Found) -> InputError:
    """The one-line error for a run directory with nothing to analyse: what it holds instead."""
    n = len(found.unrecognised)
    hint = (f"; it holds {n} file(s) agentpost does not read as results (raw scaffold logs? "
            f"convert them first: agentpost import {run_dir} -o {run_dir}/trajectories.jsonl)"
            if n else "")  # fmt: skip
    return InputError(run_dir, None, "no canonical trajectories, efficiency rows or security "
                      f"grades: nothing to analyse{hint}")  # fmt: skip


def _first_line(path: HeldFile) -> Any:
    from agentpost.trajectory.io import open_regular

    with open_regular(path) as f:  # a FIFO named *.jsonl must not block the scan
        for line in f:
            if line.strip():
                try:
                    return orjson.loads(line)
                except orjson.JSONDecodeError:
                    return None
    return None


def _too_big(rel: str, size: int) -> str:
    return (f"{rel}: {size / 2**20:.0f} MiB, over the {MAX_BYTES // 2**20} MiB a file read whole "
            "may have: not read")  # fmt: skip


def _load_jsonl(path: HeldFile, rel: str, found: Found, size: int) -> None:
    first = _first_line(path)
    if not isinstance(first, dict):
        found.unrecognised.append(rel)
    elif kind_of(first) == "trajectories":  # read later, one trajectory at a time
        found.files["trajectories"].append((rel, path))
    elif size > MAX_BYTES:  # the kinds below are read whole
        found.problems.append(_too_big(rel, size))
    elif {"judge", "case_id", "raw"} <= set(first):
        found.files["judge_answers"].append((rel, path))
    elif {"planning", "coding", "testing"} <= set(first) or {"func", "sec", "status"} <= set(first):
        found.files["security_lines"].append((rel, path))
    elif kind_of(first) == "scvd_records" or "y_c" in first:
        recs = [orjson.loads(x) for x in path.read(MAX_BYTES).splitlines() if x.strip()]
        found.files["scvd_records"].append((rel, recs))
    else:
        found.unrecognised.append(rel)


def _plain_files(run_dir: Path, found: Found) -> list[HeldFile]:
    """The JSON/JSONL files of ``run_dir`` (depth ≤ 3, ``SKIP_DIRS`` left out) that are plain
    files reached without a symlink: a run folder may be shared, and a link in it must not make
    the report read (and render) a file outside it. Links and hard links are named in
    ``problems``, never followed (``ingress.hostdir.walk``)."""
    out = []
    try:  # the folder the user named is followed; below it, nothing is
        root = OpenDir(run_dir.resolve())
    except (Refused, OSError) as e:
        raise InputError(run_dir, None, f"cannot read: {e}") from None
    try:
        for key, st in walk(root.fd, bounds=Bounds(max_entries=1_000_000),
                            skip=tuple(SKIP_DIRS), max_depth=2):  # fmt: skip
            if not key.endswith((".json", ".jsonl")) and not stat.S_ISLNK(st.st_mode):
                continue
            if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1):
                found.problems.append(f"{key}: a link in the run folder, not followed")
            elif stat.S_ISREG(st.st_mode):
                out.append(HeldFile(root, key, st.st_size))
    except Refused as e:
        found.problems.append(f"run folder not fully scanned: {e}")
    return out


def scan(run_dir: Path) -> Found:
    """Every JSON/JSONL file under ``run_dir`` (depth ≤ 3), classified."""
    if not run_dir.is_dir():
        raise InputError(run_dir, None, "not a directory")
    found = Found()
    for p in _plain_files(run_dir, found):
        rel, size = p.key, p.size
        try:
            if p.key.endswith(".jsonl"):  # trajectories stream, whatever their size
                _load_jsonl(p, rel, found, size)
                continue
            if size > MAX_BYTES:
                found.problems.append(_too_big(rel, size))
                continue
            data = orjson.loads(p.read(MAX_BYTES))
        except TooLarge:  # it grew since the walk
            found.problems.append(_too_big(rel, MAX_BYTES + 1))
            continue
        except Refused as e:  # replaced by a link (or its folder) since the walk
            found.problems.append(f"{rel}: not read: {e}")
            continue
        except (orjson.JSONDecodeError, InputError, UnicodeDecodeError, OSError):
            found.unrecognised.append(rel)
            continue
        kind = classify_json(data)
        if kind == "security_summary" and "metrics" not in data and "agents" in data:
            data = {**data, "metrics": data["agents"]}  # `security metrics --json` names it agents
        (found.files[kind].append((rel, data)) if kind else found.unrecognised.append(rel))
    return found
