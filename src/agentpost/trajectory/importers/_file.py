"""One file's import: read it, detect its format, parse it, convert it.

Layer: io. Compiled with the importers (``trajectory/_native.py``): this runs once per file and once per
JSONL line, so its own overhead counts on a folder of small files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from agentpost.errors import InputError
from agentpost.trajectory.importers import JSONL_FORMATS, get_importer, harbor
from agentpost.trajectory.importers._common import Ctx, NotATrajectory
from agentpost.trajectory.importers._detect import detect, detect_data
from agentpost.trajectory.io import read_regular
from agentpost.trajectory.model import Trajectory


def parse_json(raw: bytes, path: Path, line: int | None = None) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        where = f"line {line}" if line else f"line {e.lineno} column {e.colno}"
        raise InputError(path, where, f"invalid JSON: {e.msg}") from None


_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what ``bytes.isspace`` accepts
_SPACE = frozenset(b" \t\n\r\x0b\x0c")


def _blank(m: re.Match[bytes] | None, end: int) -> bool:
    return m is not None and m.end() == end  # (the pattern matches the empty string too)


def parse_lines(raw: bytes, path: Path) -> list[tuple[int, Any]]:
    """Every non-blank line of a JSONL file, parsed. Lines are parsed from memoryview slices
    of ``raw`` rather than split off as copies (evaluation logs hold megabytes per line)."""
    out = []
    loads = orjson.loads
    view = memoryview(raw)
    find, blank = raw.find, _BLANK.match
    pos, n, size = 0, 0, len(raw)
    while pos <= size:
        end = find(b"\n", pos)
        if end < 0:
            end = size
        n += 1
        # as ``line and not line.isspace()``; a line that starts with a JSON value skips the scan
        if end > pos and (raw[pos] not in _SPACE or not _blank(blank(raw, pos, end), end)):
            try:
                out.append((n, loads(view[pos:end])))
            except orjson.JSONDecodeError:
                parse_json(raw[pos:end], path, n)  # raises the InputError naming the line
        pos = end + 1
    if not out:
        raise InputError(path, "line 1", "empty file")
    return out


_MODULES: dict[str, Any] = {}


def importer_module(name: str) -> Any:
    """``get_importer`` once per name (``importlib.import_module`` takes its lock per call)."""
    module = _MODULES.get(name)
    if module is None:
        module = _MODULES[name] = get_importer(name)
    return module


def import_file(path: Any, fmt: str | None = None, keep_raw: bool = False) -> list[Trajectory]:
    """Trajectories in one file (``path``: a ``Path`` or a string). Raises ``InputError`` (bad
    input), ``NotATrajectory``, or ``TypeError`` for a path of another type (``path`` is typed
    ``Any`` so that the compiled build checks it here, with this message)."""
    if not isinstance(path, Path):
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"import_file: path must be a str or a Path, not {type(path).__name__}")
        path = Path(path)
    raw = read_regular(path)  # a FIFO or /dev/zero is refused, not read forever
    if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark (Windows editors write it)
        raw = raw[3:]
    # detect reads its first HEAD bytes; it rejects empty or binary files, skips companions
    detected = detect(path, raw)
    name = fmt or detected
    data: Any = None
    if name is None:
        jsonl = path.name.endswith(".jsonl")
        data = None if jsonl else parse_json(raw, path)
        name = detect_data(data)
        if name is None:
            where = "line 1" if jsonl else "$"
            raise InputError(path, where, "not a known trajectory format (use --format NAME)")
    if harbor.duplicate_of_atif(path, name):
        raise NotATrajectory(f"{name} log of a Harbor trial, imported from agent/trajectory.json")
    module = importer_module(name)
    ctx = Ctx(path)
    # a module with both readers (OpenHands V1: events.jsonl, or a JSON list of events) reads
    # by the file's suffix
    both = hasattr(module, "convert") and hasattr(module, "convert_lines")
    jsonl = not hasattr(module, "convert") or (
        name in JSONL_FORMATS and (not both or path.name.endswith(".jsonl"))
    )
    try:
        if jsonl:
            trajs = module.convert_lines(parse_lines(raw, path), ctx, keep_raw)
        else:
            if data is None:
                if not raw or raw.isspace():  # isspace scans without copying, unlike strip
                    raise InputError(path, "byte 0", "empty file")
                data = parse_json(raw, path)
            trajs = module.convert(data, ctx, keep_raw)
        harbor.join(path, trajs)
        return trajs
    except (InputError, NotATrajectory):
        raise
    except SHAPE_ERRORS as e:
        # The document has the wrong shape somewhere the importer did not check by name.
        where = first_failing_line(module, raw, path, keep_raw) if jsonl else "$"
        raise InputError(
            path, where, f"not a valid {name} file ({type(e).__name__}: {e})"
        ) from None


SHAPE_ERRORS = (KeyError, TypeError, AttributeError, ValueError, IndexError)
BISECT_BYTES = 64 << 20  # a bad JSONL file larger than this is named as a whole ("$")


def first_failing_line(module: Any, raw: bytes, path: Path, keep_raw: bool) -> str:
    """``line N``: the first line whose inclusion makes ``module.convert_lines`` fail with a
    shape error, found by bisecting over prefixes of the file, each converted from a fresh
    parse (the error path only: about log2(lines) conversions); ``$`` when no prefix
    reproduces the error or the file is too large to convert that often."""
    if len(raw) > BISECT_BYTES:
        return "$"

    def fails(k: int) -> bool:
        try:
            module.convert_lines(parse_lines(raw, path)[:k], Ctx(path), keep_raw)
        except (InputError, NotATrajectory):
            return False
        except SHAPE_ERRORS:
            return True
        return False

    lines = parse_lines(raw, path)
    lo, hi = 0, len(lines)  # the first ``lo`` lines convert; the first ``hi`` fail
    if not fails(hi):
        return "$"
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return f"line {lines[hi - 1][0]}"
