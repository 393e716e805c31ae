"""An instance task's image, gated: built (``image.ensure``), then its gold gate (``gate.gate``)
must pass before any sandbox starts from it.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path

from agentpost.errors import InfraError
from agentpost.tasks.model import Task
from agentpost.tasks.swebench import gate, image
from agentpost.tasks.swebench.instance import instance_of


def ensure_task_image(task: Task, backend, log=None) -> str:
    """The instance's image tag; ``InfraError`` when it cannot be built or fails its gate."""
    meta = task.metadata
    tag, facts = image.ensure(instance_of(task), meta["spec"], meta["env"],
                              Path(meta["source"]), backend, log)  # fmt: skip
    if facts.get("built"):
        meta["build"] = facts
    doc = gate.gate(task, backend, tag)
    if not doc["ok"]:
        raise InfraError(
            f"{task.id}: failed its gold gate, not used ({gate.why(doc)}; {gate.gate_path(tag)})"
        )
    return tag
