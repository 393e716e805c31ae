"""Backends by name: a literal table, with ``module:Class`` as the fallback (through the one
loader, ``agentpost.components``).

Layer: io.
"""

from __future__ import annotations

from agentpost.components import load_named
from agentpost.sandbox.base import Backend

BACKENDS = {
    "bwrap": "agentpost.sandbox.bwrap:BwrapBackend",
    "docker": "agentpost.sandbox.docker:DockerBackend",
}


def get_backend(name: str = "bwrap", **kwargs) -> Backend:
    """A backend instance: ``bwrap``, ``docker``, or a ``package.module:Class`` path."""
    return load_named(BACKENDS, name, "sandbox backend", **kwargs)
