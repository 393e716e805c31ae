"""Which trajectories a command reads: each input once, and only the agents and tasks asked for.

- ``agent_label``: the one name an agent goes by in every output (the verdict, compare, the
  report, ``--agent``): its model, else the scaffold that wrote the log, else ``NA``; plus
  ``[run ID]`` when one model ran in more than one run, so two runs are never pooled.
- ``unique_files``: the same file named twice (or reached through two overlapping folders, or a
  symlink) is read once, with one warning.
- ``read_files``: canonical JSONL files read once each; a trajectory id met again in a later
  file is kept once (the first), with one warning that says whether the copies are identical (a
  duplicate input) or differ.
- ``select``: only the trajectories of the agents (``--agent``) and tasks (``--task``) named;
  naming one that no trajectory has is an ``InputError`` that lists what there is.

Layer: io.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from agentpost.errors import InputError
from agentpost.intervals import UNKNOWN
from agentpost.trajectory.model import Trajectory

log = logging.getLogger("agentpost")


def agent_label(
    model: str | None, scaffold: str | None, run_id: str | None, multi_run: bool
) -> str:
    """The label an agent goes by: its model (else its scaffold, else NA), plus its run id when
    the model ran more than once."""
    name = model or scaffold or UNKNOWN
    return f"{name} [run {run_id}]" if multi_run and run_id else name


def labels(trajs: Sequence[Trajectory]) -> dict[str, str]:
    """trajectory id → its agent label, run ids added where one model ran in several runs."""
    runs: dict[str | None, set] = {}
    for t in trajs:
        runs.setdefault(t.model or t.agent, set()).add(t.run_id)
    return {t.id: agent_label(t.model, t.agent, t.run_id, len(runs[t.model or t.agent]) > 1)
            for t in trajs}  # fmt: skip


def _show(names: Iterable[str], n: int = 8) -> str:
    names = sorted(set(names))
    return (
        ", ".join(names[:n]) + (f", ... ({len(names)} in all)" if len(names) > n else "") or "none"
    )


def select(
    trajs: list[Trajectory], agents: Sequence[str] | None = None, tasks: Sequence[str] | None = None
) -> list[Trajectory]:
    """The trajectories of ``agents`` (an agent label, or a bare model or scaffold name) on
    ``tasks`` (task ids); None or empty: all. An agent or task no trajectory has is an
    ``InputError`` at ``--agent``/``--task`` naming the ones there are."""
    if agents:
        lab = labels(trajs)
        names = {t.id: {lab[t.id], t.model, t.agent} - {None} for t in trajs}
        missing = [a for a in agents if not any(a in names[t.id] for t in trajs)]
        if missing:
            raise InputError(None, "--agent", f"no trajectory of agent {', '.join(map(repr, missing))}"
                             f" (agents: {_show(lab.values())})")  # fmt: skip
        trajs = [t for t in trajs if names[t.id] & set(agents)]
    if tasks:
        have = {str(t.task_id or t.id) for t in trajs}
        missing = [x for x in tasks if x not in have]
        if missing:
            raise InputError(None, "--task", f"no trajectory of task {', '.join(map(repr, missing))}"
                             f" (tasks: {_show(have)})")  # fmt: skip
        trajs = [t for t in trajs if str(t.task_id or t.id) in set(tasks)]
    return trajs


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
                    f"overlapping folders), each read once: {_show(repeated, 5)}")  # fmt: skip
    return out


def dedupe(batches: Iterable[tuple[str, list[Trajectory]]]) -> list[tuple[str, list[Trajectory]]]:
    """``(source, trajectories)`` batches with every trajectory id kept once (the first); one
    warning per source that repeated ids, saying whether the copies were identical."""
    first: dict[str, Trajectory] = {}
    out = []
    for src, trajs in batches:
        same, differ, fresh = [], [], []
        for t in trajs:
            old = first.get(t.id)
            if old is None:
                first[t.id] = t
                fresh.append(t)
            else:
                (same if old == t else differ).append(t.id)
        _warn_repeats(src, same, differ)
        out.append((src, fresh))
    return out


def _warn_repeats(src: str, same: list[str], differ: list[str]) -> None:
    if same:
        log.warning(f"warning: {src}: {len(same)} trajectories already read from another "
                    f"input (same id and content), counted once: {_show(same, 5)}")  # fmt: skip
    if differ:
        log.warning(f"warning: {src}: {len(differ)} trajectory ids already read from another "
                    f"input with different content; the first was kept: {_show(differ, 5)}")  # fmt: skip


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
    trajectories of ``sources`` (``(name, path)`` pairs, each path read once), each id once,
    only ``agents``' and ``tasks``' when given. Iterating yields ``(name, trajectory)``;
    ``progress`` gets the bytes of every line read. The messages are those of ``dedupe`` and
    ``select``; a copy is told identical by the digest of its line (two files that spell one
    trajectory differently are said to differ, and still counted once). An ``--agent`` or
    ``--task`` that matched nothing is an ``InputError`` once the stream is read (``finish``).
    An agent matches by its label (``labels``: with ``[run ID]`` when its model ran in several
    runs; that form is accepted for a single run too), its model or its scaffold.

    ``runs``: model (else scaffold) → the run ids of every trajectory read, selected or not
    (``stream_label`` tells runs of one model apart by them)."""

    def __init__(self, sources: Sequence[tuple[str, Path]], agents: Sequence[str] | None = None,
                 tasks: Sequence[str] | None = None, progress=None) -> None:  # fmt: skip
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
            _warn_repeats(src, same, differ)

    def finish(self) -> None:
        """After reading: an ``InputError`` for an ``--agent`` or ``--task`` no trajectory has."""
        missing = sorted(self.agents - self._agent_hit)
        if missing:
            raise InputError(None, "--agent", f"no trajectory of agent {', '.join(map(repr, missing))}"
                             f" (agents: {_show(self._labels)})")  # fmt: skip
        missing = sorted(self.tasks - self._task_have)
        if missing:
            raise InputError(None, "--task", f"no trajectory of task {', '.join(map(repr, missing))}"
                             f" (tasks: {_show(self._task_have)})")  # fmt: skip


def stream_label(
    stream: Stream, model: str | None, scaffold: str | None, run_id: str | None
) -> str:
    """The agent label (``labels``) of a trajectory of ``stream``, once it has been read."""
    return agent_label(model, scaffold, run_id, len(stream.runs.get(model or scaffold, ())) > 1)


def _unique_sources(sources: Sequence[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Each file once (``unique_files``: one warning names the repeats); a missing one is an
    ``InputError``."""
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
