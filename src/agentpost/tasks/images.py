"""Task images for the docker backend: ``docker build`` of the task's ``environment/Dockerfile``,
tagged by a hash of the environment directory so an unchanged task is built once.

The docker backend bind-mounts the writable directories (``/app`` …) over the image, so what the
Dockerfile copies into the work directory is hidden; ``prepare`` copies the environment in
again, exactly as for bubblewrap. The image contributes the tools (git, gcc, tmux …).

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentpost.tasks.model import Task

BUILD_TIMEOUT_S = 1800.0


def environment_hash(env_dir: Path) -> str:
    """A short content hash of every file (path and bytes) under ``env_dir``."""
    h = hashlib.sha256()
    for p in sorted(env_dir.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(env_dir)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def image_tag(task: Task) -> str | None:
    """``agentpost-task-<id>:<hash>``; None when the task has no Dockerfile."""
    env = task.environment_dir
    if env is None or not (env / "Dockerfile").is_file():
        return None
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in task.id.lower())
    return f"agentpost-task-{name}:{environment_hash(env)}"


def ensure_image(task: Task, backend) -> str | None:
    """The task's image tag, built with ``backend``'s CLI unless it exists (None: no Dockerfile,
    the backend's default image is used)."""
    tag = image_tag(task)
    if tag is None:
        return None
    if backend.cli("image", "inspect", tag, timeout_s=30, check=False).strip().startswith("["):
        return tag
    backend.cli("build", "-t", tag, str(task.environment_dir), timeout_s=BUILD_TIMEOUT_S)
    return tag
