"""Which trajectories a command reads: each input once, and only the agents and tasks asked for.

- ``agent_label``: the one name an agent goes by in every output (the verdict, compare, the
  report, ``--agent``): its model, else the scaffold that wrote the log, else ``NA``; plus
  ``[run ID]`` when one model ran in more than one run, so two runs are never pooled.
- ``dedupe``: a trajectory id met again in a later input is kept once (the first), with one
  warning that says whether the copies are identical (a duplicate input) or differ
  (``trajectory.inputs`` reads files once each with it).
- ``select``: only the trajectories of the agents (``--agent``) and tasks (``--task``) named;
  naming one that no trajectory has is an ``InputError`` that lists what there is.

Layer: pure.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

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


def listing(names: Iterable[str], n: int = 8) -> str:
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
                             f" (agents: {listing(lab.values())})")  # fmt: skip
        trajs = [t for t in trajs if names[t.id] & set(agents)]
    if tasks:
        have = {str(t.task_id or t.id) for t in trajs}
        missing = [x for x in tasks if x not in have]
        if missing:
            raise InputError(None, "--task", f"no trajectory of task {', '.join(map(repr, missing))}"
                             f" (tasks: {listing(have)})")  # fmt: skip
        trajs = [t for t in trajs if str(t.task_id or t.id) in set(tasks)]
    return trajs


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
        warn_repeats(src, same, differ)
        out.append((src, fresh))
    return out


def warn_repeats(src: str, same: list[str], differ: list[str]) -> None:
    """The warnings of ``dedupe`` for one input (ids met before, with the same or another
    content); ``trajectory.inputs.Stream`` says the same."""
    if same:
        log.warning(f"warning: {src}: {len(same)} trajectories already read from another "
                    f"input (same id and content), counted once: {listing(same, 5)}")  # fmt: skip
    if differ:
        log.warning(f"warning: {src}: {len(differ)} trajectory ids already read from another "
                    f"input with different content; the first was kept: {listing(differ, 5)}")  # fmt: skip
