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
from collections.abc import Iterable, Sequence
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
        if same:
            log.warning(f"warning: {src}: {len(same)} trajectories already read from another "
                        f"input (same id and content), counted once: {_show(same, 5)}")  # fmt: skip
        if differ:
            log.warning(f"warning: {src}: {len(differ)} trajectory ids already read from another "
                        f"input with different content; the first was kept: {_show(differ, 5)}")  # fmt: skip
        out.append((src, fresh))
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
