"""The gold gate: an instance is used only if its gold patch resolves it and no patch does not.

Run once per image (the tag's hash covers everything that decides the result) and cached as
``<cache>/gates/<image>.json``; a suite load skips an instance whose cached gate failed, naming
the file, and building its image raises (``InfraError``: the instance cannot be graded here), so a
failing instance is reported and never used. A gate run that did not finish (an infrastructure
fault) is not cached.

Layer: io.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InfraError
from agentpost.tasks.model import Task
from agentpost.tasks.swebench import harness
from agentpost.tasks.swebench.cache import cache_root


def gate_path(tag: str) -> Path:
    return cache_root() / "gates" / (tag.replace(":", "_").replace("/", "_") + ".json")


def cached(tag: str) -> dict[str, Any] | None:
    try:
        return json.loads(gate_path(tag).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _run(task: Task, backend, tag: str, patch: str) -> dict[str, Any]:
    from agentpost.tasks.swebench.grade import grade_patch

    ev = grade_patch(task, backend, patch, image=tag)
    if ev.status not in ("ok", "timeout"):
        raise InfraError(f"{task.id}: gold gate could not grade: {ev.output[-400:]}")
    report = ev.details.get("report", {}).get(task.id, {})
    return {"status": ev.status, "resolved": ev.resolved, "report": report,
            "duration_s": ev.details.get("duration_s")}  # fmt: skip


def gate(task: Task, backend, tag: str) -> dict[str, Any]:
    """The gate's record for ``task`` on image ``tag`` (cached)."""
    hit = cached(tag)
    if hit is not None:
        return hit
    gold = _run(task, backend, tag, task.metadata["swebench"]["patch"])
    empty = _run(task, backend, tag, "")
    doc = {
        "format": fmt("agentpost.swebench-gate"),
        "producer": producer(gate, instance=task.id, image=tag, swebench=harness.version()),
        "instance_id": task.id,
        "image": tag,
        "gold": gold,
        "empty": empty,
        "deviations": task.metadata.get("deviations", []),
        "ok": gold["resolved"] is True and empty["resolved"] is False,
    }
    write_json(gate_path(tag), doc)
    return doc


def why(doc: dict[str, Any]) -> str:
    g, e = doc["gold"], doc["empty"]
    return f"gold patch resolved={g['resolved']} ({g['status']}), no patch resolved={e['resolved']} ({e['status']})"
