"""Containers beside a docker sandbox: compose services and the image's own ENTRYPOINT.

A ``Service`` runs in the sandbox's network namespace (``--network container:SANDBOX``): the
sandbox has no network, so neither has it, and the two reach each other on localhost. Its name
resolves there too: a ``127.0.0.1 NAME`` line is added to the sandbox's ``/etc/hosts``, which
containers joining its namespace share. It is labelled with the sandbox's owner (the reaper
removes it with the sandbox's other containers) and removed when the sandbox closes. Its
processes live in its own PID and mount namespace, so the executor's sweeps after each command
never reach them, and it sees of the sandbox only the writable dirs named in ``shared`` (never
``/logs``, ``/tests`` or ``/solution``). After all are started, each ``healthcheck`` runs inside
its service once a second until it passes (``HEALTH_TRIES``); one that never does is an
``InfraError`` naming the service and what the check printed.

Layer: io.
"""

from __future__ import annotations

import json
import subprocess
import time

from agentpost.errors import InfraError
from agentpost.sandbox.base import Service
from agentpost.sandbox.docker_reaper import LABEL

HEALTH_TRIES = 60
NEVER_SHARED = ("/logs", "/tests", "/solution")


def volume_names(backend, container: str) -> dict[str, str]:
    """{destination: volume name} of a container's volumes."""
    raw = backend.cli("inspect", "--format", "{{json .Mounts}}", container, timeout_s=60)
    return {
        m["Destination"]: m["Name"]
        for m in json.loads(raw or "[]")
        if m.get("Type") == "volume" and m.get("Name")
    }


def run_args(sandbox: str, owner: str, svc: Service, volumes: dict[str, str]) -> list[str]:
    """``docker run`` arguments of one service (after ``run -d``)."""
    args = ["--name", f"{sandbox}-{svc.name}", "--label", f"{LABEL}={owner}"]
    args += ["--network", f"container:{sandbox}"]
    for path in svc.shared:
        if path in volumes and not path.startswith(NEVER_SHARED):
            args += ["-v", f"{volumes[path]}:{path}"]
    for key, value in svc.env:
        args += ["-e", f"{key}={value}"]
    if svc.entrypoint is not None:
        args += ["--entrypoint", svc.entrypoint[0] if svc.entrypoint else ""]
    args.append(svc.image)
    if svc.entrypoint:
        args += list(svc.entrypoint[1:])
    if svc.command is not None:
        args += list(svc.command)
    return args


def hosts_script(services: tuple[Service, ...]) -> str:
    names = " ".join(sorted({s.name for s in services}))
    return f"printf '127.0.0.1 %s\\n' {names} >> /etc/hosts" if names else "true"


def start(backend, sandbox: str, owner: str, services: tuple[Service, ...]) -> list[str]:
    """Start ``services`` beside container ``sandbox``; returns their container names (the
    caller removes them, even when this raises part-way)."""
    started: list[str] = []
    if not services:
        return started
    volumes = volume_names(backend, sandbox)
    for svc in services:
        name = f"{sandbox}-{svc.name}"
        started.append(name)
        out = backend.cli("run", "-d", *run_args(sandbox, owner, svc, volumes), timeout_s=120,
                          check=False)  # fmt: skip
        state = backend.cli("inspect", "--format", "{{.State.Running}}", name, timeout_s=60,
                            check=False).strip()  # fmt: skip
        if state != "true":
            logs = backend.cli("logs", "--tail", "20", name, timeout_s=60, check=False)
            said = f"{out[-300:]}{logs[-500:]}"
            raise InfraError(f"service {svc.name} ({svc.image}) did not start: {said}")
    return started


def wait_healthy(backend, sandbox: str, services: tuple[Service, ...]) -> None:
    for svc in services:
        if not svc.healthcheck:
            continue
        name = f"{sandbox}-{svc.name}"
        res = None
        for _ in range(HEALTH_TRIES):
            argv = [backend.binary, "exec", name, *svc.healthcheck]
            try:
                res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                continue
            if res.returncode == 0:
                break
            time.sleep(1)
        else:
            said = (res.stdout + res.stderr)[-300:] if res is not None else "(timed out)"
            raise InfraError(f"service {svc.name} never got healthy ({svc.healthcheck}): {said}")


def stop(backend, names: list[str]) -> None:
    if names:
        backend.cli("rm", "-f", "-v", *names, timeout_s=120, check=False)
