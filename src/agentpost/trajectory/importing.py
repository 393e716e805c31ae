"""Import many files: walk folders, detect each file's format, collect per-file errors.

A bad file never stops the others: ``import_paths`` returns the good trajectories, the files
skipped on purpose (indexes, predictions, continuations) and one error line per bad file.

Layer: io.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.trajectory.importers import (
    NotATrajectory,
    harbor,
    openai_chat,
    openhands_session,
    openhands_v1,
    terminus_episodes,
)
from agentpost.trajectory.importers._file import SHAPE_ERRORS, import_file, parse_json
from agentpost.trajectory.io import read_regular
from agentpost.trajectory.model import Trajectory

SUFFIXES = (".json", ".jsonl", ".traj", ".yaml", ".yml")
WALK_ENTRIES = 10_000_000  # entries of one folder walk (a store of thousands of sessions)
HEAD = 65536


@dataclass
class ImportReport:
    trajectories: list[Trajectory] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk import.

    Parsing and building trajectories allocates millions of containers and no reference
    cycles; the collector's generation scans then cost about a quarter of import time.
    Reference counting still frees everything; the collector runs again on exit.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def iter_files(
    paths: list[Path], exclude: Path | None = None, skip_hidden: bool = False
) -> list[Path]:
    """Files named on the command line, and every candidate file under named folders,
    dot-folders included: the scaffolds' own stores are ``.claude``, ``.codex``,
    ``.openhands`` (``skip_hidden`` leaves every dot-folder and dot-file out). ``exclude`` (the
    output file) is left out of folder walks, so importing a folder into a file inside it never
    re-imports the previous output. A file reached twice (named twice, or under two
    overlapping folders such as ``DIR`` and ``DIR/sub``) is imported once, with a warning."""
    from agentpost.trajectory.inputs import unique_files

    skip = exclude.resolve() if exclude is not None else None
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out += sorted(
                f
                for f in _folder_files(p)
                if not (skip_hidden and any(x.startswith(".") for x in f.relative_to(p).parts))
                and not (skip is not None and f.name == skip.name and f.resolve() == skip)
            )
        else:
            out.append(p)
    return unique_files(out)


def _folder_files(folder: Path) -> list[Path]:
    """The regular files with an import suffix below ``folder`` (the folder named is followed,
    as any path the user types), walked by descent (``ingress.hostdir.walk``): a symbolic link
    below it, to a file or a folder, is never followed (a runs folder may be shared: a planted
    ``trajectory.json -> a host file`` would import that file); each is named in a warning."""
    import logging
    import stat

    from agentpost.ingress.hostdir import open_root, walk
    from agentpost.ingress.keys import Bounds, Refused

    found, links = [], []
    try:
        rfd = open_root(folder.resolve())
    except (Refused, OSError) as e:
        raise InputError(folder, None, f"cannot read: {e}") from None
    try:
        for key, st in walk(rfd, bounds=Bounds(max_entries=WALK_ENTRIES)):
            if not key.endswith(SUFFIXES):
                continue
            if stat.S_ISLNK(st.st_mode):
                links.append(key)
            elif stat.S_ISREG(st.st_mode):
                found.append(folder / key)
    except Refused as e:
        raise InputError(folder, None, f"not fully read: {e}") from None
    finally:
        os.close(rfd)
    if links:
        shown = ", ".join(links[:5]) + (f" and {len(links) - 5} more" if len(links) > 5 else "")
        logging.getLogger("agentpost").warning(
            f"warning: {folder}: {len(links)} symbolic link(s) not followed (a link in a folder "
            f"is never imported; name its target itself): {shown}"
        )
    return found


def _read_events(files: list[Path]) -> list[tuple[Path, Any]]:
    events = []
    for path in files:
        raw = read_regular(path)
        if not raw.strip():
            raise InputError(path, "byte 0", "empty file")
        events.append((path, parse_json(raw.removeprefix(b"\xef\xbb\xbf"), path)))
    return events


def import_events(files: list[Path], keep_raw: bool = False) -> list[Trajectory]:
    """One persisted OpenHands V1 conversation from its ``event-NNNNN-*.json`` files."""
    events = _read_events(files)
    try:
        return openhands_v1.convert_events(events, keep_raw)
    except SHAPE_ERRORS as e:
        why = f"{type(e).__name__}: {e}"
        raise InputError(
            files[0].parent, None, f"not a valid openhands-v1 folder ({why})"
        ) from None


def import_session(files: list[Path], keep_raw: bool = False) -> list[Trajectory]:
    """One OpenHands v0 session folder from its ``events/N.json`` files."""
    events = _read_events(files)
    try:
        return openhands_session.convert_session(events, keep_raw)
    except SHAPE_ERRORS as e:
        why = f"{type(e).__name__}: {e}"
        raise InputError(
            files[0].parent, None, f"not a valid OpenHands session folder ({why})"
        ) from None


def import_call_logs(files: list[Path], keep_raw: bool = False) -> list[Trajectory]:
    """One conversation logged as one litellm completion file per call."""
    docs = []
    for path in sorted(files, key=lambda f: openai_chat.call_log_time(f.name) or 0.0):
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise InputError(path, None, f"cannot read: {e.strerror}") from None
        data = parse_json(raw.removeprefix(b"\xef\xbb\xbf"), path)
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise InputError(path, "$.messages", "missing required field")
        docs.append((path, data))
    try:
        return openai_chat.convert_calls(docs, keep_raw)
    except SHAPE_ERRORS as e:
        why = f"{type(e).__name__}: {e}"
        raise InputError(files[0].parent, None, f"not a valid litellm log folder ({why})") from None


def import_episodes(files: list[Path], keep_raw: bool = False) -> list[Trajectory]:
    """One Terminus agent folder's ``episode-N/`` logs (skipped beside an ATIF trajectory)."""
    if harbor.duplicate_of_atif(files[0], terminus_episodes.NAME):
        raise NotATrajectory(
            "Terminus episode logs of a Harbor trial, imported from trajectory.json"
        )
    try:
        trajs = terminus_episodes.convert_episodes(files, keep_raw)
    except SHAPE_ERRORS as e:
        why = f"{type(e).__name__}: {e}"
        raise InputError(
            files[0].parent.parent, None, f"not valid Terminus episodes ({why})"
        ) from None
    harbor.join(files[0], trajs)
    return trajs


def _unit_kind(f: Path, fmt: str | None) -> str | None:
    if fmt in (None, openhands_v1.NAME) and openhands_v1.event_index(f) is not None:
        return "events"
    if fmt in (None, openhands_session.NAME) and openhands_session.event_number(f) is not None:
        return "session"
    if fmt in (None, terminus_episodes.NAME) and terminus_episodes.episode_index(f) is not None:
        return "episodes"
    if fmt in (None, openai_chat.NAME) and openai_chat.call_log_time(f.name) is not None:
        return "calls"
    return None


def _units(files: list[Path], fmt: str | None) -> list[Path | tuple[str, list[Path]]]:
    """Files one by one, except that the event files of one persisted OpenHands V1
    conversation, and the per-call litellm logs in one folder, each form one unit (a kind and
    a list), at the place of their first file. A lone call log stays a file of its own."""
    units: list[Path | tuple[str, list[Path]]] = []
    groups: dict[tuple[str, Path], tuple[str, list[Path]]] = {}
    for f in files:
        kind = _unit_kind(f, fmt)
        if kind is None:
            units.append(f)
            continue
        key = (kind, f.parent.parent if kind == "episodes" else f.parent)  # events: one folder
        if key not in groups:
            units.append(groups.setdefault(key, (kind, [])))
        groups[key][1].append(f)
    return [
        u[1][0] if isinstance(u, tuple) and u[0] == "calls" and len(u[1]) == 1 else u for u in units
    ]


Unit = Path | tuple[str, list[Path]]


def _unit_path(unit: Unit) -> Path:
    """The path a unit's skips, errors and id suffixes name."""
    if not isinstance(unit, tuple):
        return unit
    if unit[0] == "events":
        return openhands_v1.conversation_of(unit[1][0])
    return unit[1][0].parent.parent if unit[0] == "session" else unit[1][0]


def _import_unit(unit: Unit, fmt: str | None, keep_raw: bool) -> list[Trajectory]:
    if not isinstance(unit, tuple):
        return import_file(unit, fmt, keep_raw)
    if unit[0] == "events":
        return import_events(unit[1], keep_raw)
    if unit[0] == "session":
        return import_session(unit[1], keep_raw)
    if unit[0] == "episodes":
        return import_episodes(unit[1], keep_raw)
    return import_call_logs(unit[1], keep_raw)


# One unit's result as it crosses a process boundary (``InputError`` does not pickle):
# ("ok", trajectories) | ("skip", reason) | ("error", (path, where, message)).
Result = tuple[str, Any]


def unit_result(unit: Unit, fmt: str | None, keep_raw: bool) -> Result:
    try:
        return "ok", _import_unit(unit, fmt, keep_raw)
    except NotATrajectory as e:
        return "skip", str(e)
    except InputError as e:
        return "error", (e.path, e.where, e.message)


def import_chunk(units: list[Unit], fmt: str | None, keep_raw: bool) -> list[Result]:
    """A worker process's share (``import_workers.parallel``): a few units, imported in order
    (GC paused as in the parent)."""
    with paused_gc():
        return [unit_result(u, fmt, keep_raw) for u in units]


def iter_import(
    paths: list[Path],
    report: ImportReport,
    fmt: str | None = None,
    keep_raw: bool = False,
    workers: int = 1,
    skip_hidden: bool = False,
) -> Iterator[Trajectory]:
    """Yield trajectories file by file (memory stays flat); errors and skips go to ``report``.

    ``workers > 1`` imports files in that many processes (worth it for folders of many files);
    the output is the same, in the same order. Ids are made unique within the run
    (``id:file``, then ``#n``, on a clash).
    """
    seen: set[str] = set()
    units = _units(iter_files(paths, skip_hidden=skip_hidden), fmt)
    with paused_gc():
        if workers > 1 and len(units) > 1:
            from agentpost.trajectory.import_workers import parallel

            results = parallel(units, partial(import_chunk, fmt=fmt, keep_raw=keep_raw), workers)
        else:
            results = (unit_result(u, fmt, keep_raw) for u in units)
        for unit, (kind, value) in zip(units, results, strict=True):
            report.files += len(unit[1]) if isinstance(unit, tuple) else 1
            path = _unit_path(unit)
            if kind == "skip":
                report.skipped.append((str(path), value))
                continue
            if kind == "error":
                report.errors.append(InputError(*value))
                continue
            for t in value:
                if t.id in seen:
                    base = f"{t.id}:{path.name}"
                    n, new = 2, base
                    while new in seen:
                        new, n = f"{base}#{n}", n + 1
                    t.id = new
                seen.add(t.id)
                yield t


def import_paths(
    paths: list[Path],
    fmt: str | None = None,
    keep_raw: bool = False,
    workers: int = 1,
    skip_hidden: bool = False,
) -> ImportReport:
    """Import every file into one report (trajectories kept in memory)."""
    report = ImportReport()
    report.trajectories = list(iter_import(paths, report, fmt, keep_raw, workers, skip_hidden))
    return report
