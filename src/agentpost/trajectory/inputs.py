"""Read the inputs a command names once each: the same file named twice (or reached through two
overlapping folders, or a symlink) is read once, and a trajectory met in two files is kept once
(``trajectory.select.dedupe``); each with one warning. ``Stream`` does the same one
trajectory at a time, for runs too large to hold.

Layer: io.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.ingress.hostdir import HeldFile
from agentpost.intervals import UNKNOWN
from agentpost.trajectory.model import Trajectory
from agentpost.trajectory.select import agent_label, dedupe, listing, warn_repeats

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


class Stream:
    """``read_files`` + ``select`` one trajectory at a time, for runs too large to hold: the
    trajectories of ``sources`` (``(name, path)`` pairs, each path read once; a path may be a
    ``HeldFile``, read by descent), each id once, only ``agents``' and ``tasks``' when given.
    Iterating yields ``(name, trajectory)``; ``progress`` gets the bytes of every line read.
    The messages are those of ``dedupe`` and ``select``; a copy is told identical by the
    digest of its line (two files that spell one trajectory differently are said to differ,
    and still counted once). An ``--agent`` or
    ``--task`` that matched nothing is an ``InputError`` once the stream is read (``finish``).
    An agent matches by its label (``labels``: with ``[run ID]`` when its model ran in several
    runs; that form is accepted for a single run too), its model or its scaffold.

    ``runs``: model (else scaffold) → the run ids of every trajectory read, selected or not
    (``stream_label`` tells runs of one model apart by them)."""

    def __init__(self, sources: Sequence[tuple[str, Path | HeldFile]],
                 agents: Sequence[str] | None = None, tasks: Sequence[str] | None = None,
                 progress=None) -> None:  # fmt: skip
        self.sources = _unique_sources(sources)
        self.agents, self.tasks = set(agents or ()), set(tasks or ())
        self.progress = progress
        self.read = 0  # distinct trajectories read, selected or not
        self.runs: dict[str | None, set[str | None]] = {}
        self._digest: dict[str, bytes] = {}
        self._agent_hit: set[str] = set()
        self._task_have: set[str] = set()
        self._labels: set[str] = set()

    def _agent_ok(self, t: Trajectory) -> bool:
        if not self.agents:
            return True
        name = t.model or t.agent or UNKNOWN
        names = {name, f"{name} [run {t.run_id}]" if t.run_id else name, t.model, t.agent}
        hit = names & self.agents
        self._agent_hit |= hit  # type: ignore[arg-type]
        return bool(hit)

    def __iter__(self) -> Iterator[tuple[str, Trajectory]]:
        import hashlib

        from agentpost.trajectory.io import iter_lines

        if self.progress is not None and hasattr(self.progress, "total"):
            self.progress.total(sum(p.stat().st_size for _, p in self.sources))
        for src, path in self.sources:
            same, differ = [], []
            for t, line in iter_lines(path, self.progress):
                digest = hashlib.blake2b(line.strip(), digest_size=16).digest()
                old = self._digest.get(t.id)
                if old is not None:
                    (same if old == digest else differ).append(t.id)
                    continue
                self._digest[t.id] = digest
                self.read += 1
                self.runs.setdefault(t.model or t.agent, set()).add(t.run_id)
                self._labels.add(t.model or t.agent or UNKNOWN)
                if not self._agent_ok(t):
                    continue
                task = str(t.task_id or t.id)
                self._task_have.add(task)
                if self.tasks and task not in self.tasks:
                    continue
                yield src, t
            warn_repeats(src, same, differ)

    def finish(self) -> None:
        """After reading: an ``InputError`` for an ``--agent`` or ``--task`` no trajectory has."""
        missing = sorted(self.agents - self._agent_hit)
        if missing:
            raise InputError(None, "--agent", f"no trajectory of agent {', '.join(map(repr, missing))}"
                             f" (agents: {listing(self._labels)})")  # fmt: skip
        missing = sorted(self.tasks - self._task_have)
        if missing:
            raise InputError(None, "--task", f"no trajectory of task {', '.join(map(repr, missing))}"
                             f" (tasks: {listing(self._task_have)})")  # fmt: skip


def stream_label(
    stream: Stream, model: str | None, scaffold: str | None, run_id: str | None
) -> str:
    """The agent label (``labels``) of a trajectory of ``stream``, once it has been read."""
    return agent_label(model, scaffold, run_id, len(stream.runs.get(model or scaffold, ())) > 1)


def _unique_sources(sources: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Each file once (``unique_files``: one warning names the repeats); a missing one is an
    ``InputError``. Files a run folder's walk found (``ingress.hostdir.HeldFile``, each key
    once) are kept as they are: they are read by descent, never by path."""
    if sources and all(isinstance(p, HeldFile) for _, p in sources):
        return list(sources)
    keep = {str(p) for p in unique_files([Path(p) for _, p in sources])}
    out, taken = [], set()
    for name, p in sources:
        if str(Path(p)) in keep and str(Path(p)) not in taken:
            taken.add(str(Path(p)))
            if not Path(p).is_file():
                raise InputError(p, None, "no such trajectory file" if not Path(p).exists()
                                 else "not a file")  # fmt: skip
            out.append((name, Path(p)))
    return out
