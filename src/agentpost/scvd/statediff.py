"""Which files each call changed, from the snapshots a run recorded (``run --snapshots``).

``agent.loop`` archives the sandbox's writable directories after every shell call and keeps a
reference in ``Turn.extra["snapshots"]`` (``sandbox.snapshot_store``). Two consecutive archives'
manifests (path -> content digest, timestamps and owners ignored) differ exactly in the files
the later call added, modified or deleted: the strongest evidence of what a call changed
(``changes.call_changes``, evidence ``state-diff``). A call with no snapshot, or whose archive
``snapshot_store.trusted`` does not vouch for (the run's own manifest must list it for that call,
and its bytes must match its hash), gets no entry; the judges then read its command.
The first snapshot has no predecessor: it is compared with nothing and gets no entry either.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path

from agentpost.sandbox import snapshot_store
from agentpost.trajectory.calls import step_ids
from agentpost.trajectory.model import Trajectory


def diff_manifests(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, str]]:
    """(path, added | modified | deleted) for every regular file or link that differs; member
    names become absolute paths (archives store them without the leading slash)."""
    out = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b or "dir" in (a, b):
            continue
        status = "added" if a is None else "deleted" if b is None else "modified"
        out.append(("/" + name.lstrip("./"), status))
    return out


def state_diffs(
    traj: Trajectory, run_dir: str | Path | None
) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """(step, call) -> the files that call changed, for every call whose snapshot and its
    predecessor's can both be read."""
    out: dict[tuple[int, int], list[tuple[str, str]]] = {}
    prev: dict[str, str] | None = None
    for step, turn in step_ids(traj).items():
        refs = {snapshot_store.ref_call(r): r for r in turn.extra.get("snapshots") or []}
        for j in range(len(turn.tool_calls)):
            if j not in refs:
                continue
            with snapshot_store.trusted(refs[j], run_dir, traj.id, (step, j)) as found:
                if found.path is None:
                    prev = None
                    continue
                man = snapshot_store.contents(found.path)
            if prev is not None:
                out[(step, j)] = diff_manifests(prev, man)
            prev = man
    return out
