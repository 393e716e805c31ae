"""Read the inputs a command names once each: the same file named twice (or reached through two
overlapping folders, or a symlink) is read once, and a trajectory met in two files is kept once
(``trajectory.select.dedupe``); each with one warning.

Layer: io.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from agentpost.errors import InputError
from agentpost.trajectory.model import Trajectory
from agentpost.trajectory.select import dedupe, listing

log = logging.getLogger("agentpost")


def unique_files(paths: Sequence[Path]) -> list[Path]:
    """``paths`` with each file once (compared by its resolved path); one warning names the
    files given more than once."""
    seen: set[Path] = set()
    out, repeated = [], []
    for p in paths:
        try:
            key = Path(p).resolve()
        except (OSError, RuntimeError):
            key = Path(p).absolute()
        if key in seen:
            repeated.append(str(p))
            continue
        seen.add(key)
        out.append(Path(p))
    if repeated:
        log.warning(f"warning: {len(repeated)} files reached more than once (named twice, or under "
                    f"overlapping folders), each read once: {listing(repeated, 5)}")  # fmt: skip
    return out


def read_files(paths: Sequence[Path]) -> list[tuple[str, list[Trajectory]]]:
    """Canonical JSONL ``paths``, each file once and each trajectory id once (see ``dedupe``),
    as ``(path, trajectories)``; a missing or unreadable file is an ``InputError``."""
    from agentpost.trajectory.io import read_jsonl

    files = unique_files(paths)
    for f in files:
        if not f.is_file():
            raise InputError(f, None, "no such trajectory file" if not f.exists() else "not a file")
    return dedupe((str(f), read_jsonl(f)) for f in files)
