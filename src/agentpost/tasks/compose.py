"""A task's ``docker-compose.yaml``: the services that run beside its main container.

Harbor merges ``environment/docker-compose.yaml`` onto its own base file, where ``main`` is the
agent's container; Terminal-Bench 1 names it ``client`` (``docker-compose.yaml`` at the task
root). The main service is the task's own image (``tasks.images``); every other service becomes a
``sandbox.base.Service``: built from its ``build`` context (``build: DIR`` or ``{context,
dockerfile}``, resolved inside the task directory) the same offline way, or, with only
``image:``, from ``FROM image`` through the FROM table (an image no base serves is refused with
its reason); its ``entrypoint``, ``command``, ``environment`` and ``healthcheck.test`` as compose
reads them. All of them share the main container's network namespace with no network
(``sandbox.docker_services``), so ``ports``, ``expose``, ``networks`` and ``network_mode`` need
nothing; ``depends_on`` order is kept and every service is healthy before the agent starts.
Departures, said: ``volumes`` of a service are not mounted (noted), ``${VAR}`` is read as empty
unless a default is given (``${VAR:-x}``).

Layer: io.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentpost.errors import InputError

MAIN_NAMES = ("main", "client")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


@dataclass
class ServiceDef:
    """One non-main service as the compose file gives it (paths checked, not yet built)."""

    name: str
    context: Path | None = None  # a build context inside the task directory
    dockerfile: Path | None = None
    image: str | None = None  # ``image:`` only (no build)
    entrypoint: tuple[str, ...] | None = None
    command: tuple[str, ...] | None = None
    env: tuple[tuple[str, str], ...] = ()
    healthcheck: tuple[str, ...] | None = None
    notes: list[str] = field(default_factory=list)


def compose_file(task_root: Path, environment_dir: Path | None) -> Path | None:
    for d in (environment_dir, task_root):
        for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
            if d is not None and (d / name).is_file():
                return d / name
    return None


def _subst(value):
    if isinstance(value, str):
        return _VAR.sub(lambda m: m.group(2) or "", value)
    return value


def _argv(value, path: Path, where: str) -> tuple[str, ...] | None:
    value = _subst(value)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return tuple(_subst(str(v)) for v in value)
    raise InputError(path, where, "must be a string or a list of strings")


def _env(value, path: Path, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if isinstance(value, dict):
        return tuple((str(k), "" if v is None else _subst(str(v))) for k, v in value.items())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple((k, _subst(v)) for k, _, v in (e.partition("=") for e in value))
    raise InputError(path, where, "must be a mapping or a list of KEY=VALUE")


def _healthcheck(value, path: Path, where: str) -> tuple[str, ...] | None:
    if not isinstance(value, dict) or value.get("disable"):
        return None
    test = value.get("test")
    if isinstance(test, str):
        return ("sh", "-c", test)
    if isinstance(test, list) and test and all(isinstance(t, str) for t in test):
        if test[0] == "CMD":
            return tuple(test[1:])
        if test[0] == "CMD-SHELL":
            return ("sh", "-c", " ".join(test[1:]))
        if test[0] == "NONE":
            return None
    raise InputError(path, f"{where}.healthcheck.test", "must be a command or a CMD list")


def _inside(root: Path, rel: str, path: Path, where: str) -> Path:
    """``rel`` resolved against the compose file's dir; it must stay inside ``root``."""
    target = (path.parent / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise InputError(path, where, f"{rel!r} leads outside the task directory")
    return target


def read_services(path: Path, task_root: Path) -> list[ServiceDef]:
    """The non-main services of compose file ``path``, in ``depends_on`` order."""
    import yaml

    from agentpost.tasks.fields import read_text

    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as e:
        raise InputError(path, None, f"not YAML: {e}") from None
    services = (data or {}).get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        raise InputError(path, "services", "must be a mapping of service names")
    main = next((n for n in MAIN_NAMES if n in services), None)
    if main is None and len(services) == 1:
        main = next(iter(services))
    out = []
    for name, svc in services.items():
        where = f"services.{name}"
        if name == main:
            continue
        if not isinstance(svc, dict) or not re.fullmatch(r"[A-Za-z0-9][\w.-]*", str(name)):
            raise InputError(path, where, "must be a mapping under a plain service name")
        d = ServiceDef(name=str(name))
        build = svc.get("build")
        if isinstance(build, str):
            build = {"context": build}
        if isinstance(build, dict):
            d.context = _inside(task_root, _subst(build.get("context", ".")), path, where)
            rel = _subst(build.get("dockerfile", "Dockerfile"))
            d.dockerfile = _inside(task_root, str(Path(d.context, rel)), path, where)
            if not d.dockerfile.is_file():
                raise InputError(path, f"{where}.build", f"no Dockerfile at {d.dockerfile}")
        elif isinstance(svc.get("image"), str):
            d.image = _subst(svc["image"])
        else:
            raise InputError(path, where, "needs a build context or an image")
        d.entrypoint = _argv(svc.get("entrypoint"), path, f"{where}.entrypoint")
        d.command = _argv(svc.get("command"), path, f"{where}.command")
        d.env = _env(svc.get("environment"), path, f"{where}.environment")
        d.healthcheck = _healthcheck(svc.get("healthcheck"), path, where)
        if svc.get("volumes"):
            d.notes.append(f"{name}: volumes are not mounted offline ({svc['volumes']})")
        out.append((d, svc.get("depends_on") or []))
    return _ordered(out)


def _ordered(items: list[tuple[ServiceDef, object]]) -> list[ServiceDef]:
    """Services after the ones they depend on (a cycle keeps the file's order)."""
    names = {d.name for d, _ in items}
    deps = {d.name: [x for x in (list(dep) if dep else []) if x in names] for d, dep in items}
    done: list[str] = []
    for _ in range(len(items)):
        for d, _ in items:
            if d.name not in done and all(x in done for x in deps[d.name]):
                done.append(d.name)
    done += [d.name for d, _ in items if d.name not in done]
    by_name = {d.name: d for d, _ in items}
    return [by_name[n] for n in done]
