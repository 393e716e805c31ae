"""Task images for the docker backend, built offline from the task's own Dockerfile.

The Dockerfile (Harbor: ``environment/Dockerfile`` in the ``environment/`` context; TB1: the
task root's ``Dockerfile``) is rewritten by ``sandbox.dockerfile``: its ``FROM`` lines onto the
local bases (built on demand), PPAs dropped, and a last stage that provisions the tools the
task's verifier scripts install at test time (wheels from PyPI, Debian packages), so grading
needs no network. The image is tagged ``agentpost-task-<id>:<hash>`` where the hash covers the
rewritten Dockerfile (which names the bases by their content hash) and every file of the build
context, so an unchanged task is built once and any change rebuilds it.

What the Dockerfile puts in the work directory, ``/root`` or ``/logs`` is what the sandbox starts
with (the docker backend fills its volumes from the image); ``evaluate.prepare`` copies nothing
more for a task with an image.

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentpost.components import resolve
from agentpost.errors import InfraError
from agentpost.sandbox.dockerfile import (
    DockerfileError,
    provision_lines,
    rewrite,
    verifier_requirements,
)
from agentpost.sandbox.images import base_tag, build, ensure_base, image_exists, load_from_table
from agentpost.tasks.model import Task


def context_hash(context: Path, skip: Path | None = None) -> str:
    """A content hash of every file (path, mode bits, bytes) under ``context``."""
    h = hashlib.sha256()
    for p in sorted(context.rglob("*")):
        if p.is_file() and p != skip:
            h.update(str(p.relative_to(context)).encode() + b"\0")
            h.update(oct(p.stat().st_mode & 0o111).encode() + p.read_bytes() + b"\0")
    return h.hexdigest()


def verifier_scripts(task: Task) -> list[str]:
    """The text of every script the verifier runs: test.sh (each step's too), run-tests.sh."""
    paths = [task.run_tests_script] if task.run_tests_script else []
    dirs = [task.tests_dir, *(s.tests_dir for s in task.steps)]
    paths += [d / "test.sh" for d in dirs if d is not None]
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths if p and p.is_file()]


def task_dockerfile(task: Task, table: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """(the rewritten Dockerfile, the base names it needs). Raises ``DockerfileError``."""
    assert task.dockerfile is not None
    table = table if table is not None else load_from_table()
    bases = {"minimal", "python", "build"}
    tags = {b: base_tag(b) for b in bases}
    text = task.dockerfile.read_text(encoding="utf-8")
    rw = rewrite(text, table, tags)
    py, deb = verifier_requirements(verifier_scripts(task))
    return rw.text + provision_lines(py, deb), [b for b in rw.bases if b in bases]


def image_tag(task: Task, dockerfile: str) -> str:
    assert task.dockerfile is not None
    context = task.dockerfile.parent
    h = hashlib.sha256(dockerfile.encode() + context_hash(context, task.dockerfile).encode())
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in task.id.lower())
    return f"agentpost-task-{name}:{h.hexdigest()[:12]}"


# Task families with their own images: format → "module:function(task, backend, log) -> tag" (a
# string resolved at run time, so this module imports no family and a family may use it).
FAMILY_IMAGES = {"swebench": "agentpost.tasks.swebench.build:ensure_task_image"}


def ensure_image(task: Task, backend, log=None) -> str | None:
    """The task's image tag, built unless it exists; None when the task has no Dockerfile (the
    backend's default image is used). A Dockerfile that cannot be built offline, or a failed
    build, raises ``InfraError`` naming the task and the reason."""
    if task.format in FAMILY_IMAGES:
        return resolve(FAMILY_IMAGES, task.format, "task image builder")(task, backend, log)
    if task.dockerfile is None:
        return None
    try:
        dockerfile, bases = task_dockerfile(task)
    except DockerfileError as e:
        raise InfraError(f"{task.id}: {e}") from None
    tag = image_tag(task, dockerfile)
    if image_exists(backend, tag):
        return tag
    for b in bases:
        ensure_base(backend, b, log=log or (lambda _msg: None))
    try:
        build(backend, tag, dockerfile, str(task.dockerfile.parent), task.build_timeout_s)
    except InfraError as e:
        raise InfraError(f"{task.id}: {e}") from None
    return tag
