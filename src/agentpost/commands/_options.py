"""Option values several commands share: a sandbox backend by name, a task suite by path or name.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

from agentpost.errors import InputError


def sandbox_backend(name: str, option: str = "--backend"):
    """The sandbox backend ``name`` (``bwrap``, ``docker`` or ``module:Class``)."""
    from agentpost.sandbox.registry import get_backend

    try:
        return get_backend(name)
    except ValueError as e:
        raise InputError(None, option, str(e)) from None


def suite_dir(value: str) -> Path:
    """A task suite given as a directory, or as the name of a bundled suite (``terminal``)."""
    from agentpost.tasks.loader import bundled_suite_path

    path = Path(value)
    if path.is_dir():
        return path
    if "/" not in value and not path.exists():
        return bundled_suite_path(value)
    raise InputError(value, None, "not a task suite directory")
