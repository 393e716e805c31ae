"""Backends by name: a literal table, with ``module:Class`` as the fallback.

Layer: io.
"""

from __future__ import annotations

import importlib

from agentpost.sandbox.base import Backend

BACKENDS = {
    "bwrap": "agentpost.sandbox.bwrap:BwrapBackend",
    "docker": "agentpost.sandbox.docker:DockerBackend",
}


def get_backend(name: str = "bwrap", **kwargs) -> Backend:
    """A backend instance: ``bwrap``, ``docker``, or a ``package.module:Class`` path."""
    target = BACKENDS.get(name, name)
    if ":" not in target:
        raise ValueError(f"unknown sandbox backend {name!r}; choose from {sorted(BACKENDS)}")
    module, cls = target.split(":", 1)
    return getattr(importlib.import_module(module), cls)(**kwargs)
