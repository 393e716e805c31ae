"""The container a task runs in on docker, as Harbor runs it: ``container_spec`` gives the
``SandboxSpec`` fields for a task (its image from ``tasks.images``, the image's ``WORKDIR`` and
``USER``, Harbor's writable root and kept processes for tasks as their authors wrote them, the
``[environment]`` limits) and ``services_of`` the containers beside it (the task's compose
services, built offline; the image's own ``ENTRYPOINT``). ``tasks.evaluate.spec_for`` calls it
for the docker backend.

Layer: io.
"""

from __future__ import annotations

import json

from agentpost.errors import InfraError
from agentpost.sandbox.base import Service
from agentpost.tasks.compose import compose_file, read_services
from agentpost.tasks.images import FAMILY_IMAGES, ensure_image, ensure_service_image
from agentpost.tasks.model import Task


def image_config(backend, tag: str) -> dict:
    """The image's ``Config`` (``WorkingDir``, ``User``, ``Env``, ``Entrypoint``, ``Cmd``)."""
    out = backend.cli("image", "inspect", "--format", "{{json .Config}}", tag, timeout_s=60)
    try:
        cfg = json.loads(out)
    except ValueError:
        raise InfraError(f"docker image inspect {tag}: unreadable config {out[:200]!r}") from None
    return cfg if isinstance(cfg, dict) else {}


def services_of(task: Task, backend, tag: str, cfg: dict, workdir: str) -> tuple[Service, ...]:
    """The services beside the task's container: its compose file's (built), then the image's
    own ENTRYPOINT, run as Harbor runs it (with ``sh -c "sleep infinity"`` as its command) in a
    container of the same image that shares the work dir (the executor replaces the
    entrypoint in the agent's container, so it always starts)."""
    out = []
    path = compose_file(task.path, task.environment_dir)
    if path is not None:
        for svc in read_services(path, task.path):
            out.append(
                Service(
                    name=svc.name,
                    image=ensure_service_image(task, svc, backend),
                    entrypoint=svc.entrypoint,
                    command=svc.command,
                    env=svc.env,
                    healthcheck=svc.healthcheck,
                )
            )
    entrypoint = cfg.get("Entrypoint") or []
    if entrypoint:
        shared = (workdir,) if workdir != "/" else ()
        out.append(
            Service(
                name="main-entrypoint",
                image=tag,
                entrypoint=tuple(entrypoint),
                command=("sh", "-c", "sleep infinity"),
                shared=shared,
            )
        )
    return tuple(out)


def container_spec(task: Task, backend) -> dict:
    """``SandboxSpec`` fields for ``task`` on docker, as Harbor runs its container: the task's
    image (built once), its ``WORKDIR`` as the work directory unless the task names one (no
    ``WORKDIR``: ``/``), its ``USER`` as the agent's unless ``[agent].user`` names one, a
    writable root of its own and processes that outlive an exec (``keep_processes``; both
    ``Task.writable_root``: not for agentpost's own tasks), and ``[environment]`` ``cpus``,
    ``memory`` and ``storage`` as the
    sandbox's limits (unset: the defaults of ``Limits``; ``storage`` bounds the largest file
    too, as Harbor sets no per-file limit). A task family with its own images
    (``FAMILY_IMAGES``) keeps its container as it is: its image and limits only."""
    from dataclasses import replace

    from agentpost.sandbox.base import Limits

    tag = ensure_image(task, backend)
    if task.format in FAMILY_IMAGES:  # a family keeps its own container (SWE-bench's)
        out = {"image": tag}
        if task.cpus or task.memory_mb:
            mem = {"memory_bytes": task.memory_mb << 20} if task.memory_mb else {}
            out["limits"] = Limits(cpus=task.cpus, **mem)
        return out
    if tag is None:
        return {"image": None}
    cfg = image_config(backend, tag)
    # Harbor's container: a writable root, and what the agent leaves running stays (its servers
    # are there for the tests: verifier_sandbox keeps them, outside the tests' namespace)
    harbor = task.writable_root
    out: dict = {"image": tag, "writable_root": harbor, "keep_processes": harbor}
    workdir = task.workdir if task.workdir_given else (cfg.get("WorkingDir") or "/")
    out["workdir"] = workdir
    out["services"] = services_of(task, backend, tag, cfg, workdir)
    if not task.agent_user and cfg.get("User") not in (None, "", "root", "0", "0:0"):
        out["user"] = cfg["User"]
    lim = Limits()
    if task.cpus:
        lim = replace(lim, cpus=task.cpus)
    if task.memory_mb:
        mem = task.memory_mb << 20
        lim = replace(lim, memory_bytes=mem, sandbox_memory_bytes=mem)
    if task.storage_mb:  # Harbor has no per-file limit: a file may be as large as the disk
        disk = task.storage_mb << 20  # (TB2's torch tests: uvx copies CUDA libraries > 512 MiB)
        lim = replace(lim, disk_bytes=disk, file_bytes=max(lim.file_bytes, disk))
    out["limits"] = lim
    return out
