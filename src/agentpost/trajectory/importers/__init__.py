"""Importers: one module per scaffold, chosen by name from ``FORMATS`` or by ``detect``.

An importer module has ``convert(data, ctx, keep_raw)`` (one parsed JSON document) or
``convert_lines(lines, ctx, keep_raw)`` (a JSONL file as ``[(lineno, obj)]``) and returns a list
of ``Trajectory``. A name that is not in ``FORMATS`` is taken as a dotted module path
(``mypkg.my_importer``), so a custom importer needs no change here.

Layer: io.
"""

from __future__ import annotations

from types import ModuleType

from agentpost.components import resolve
from agentpost.errors import InputError
from agentpost.trajectory.importers._common import NotATrajectory
from agentpost.trajectory.importers._detect import detect, detect_data

# name → module (relative to this package, or absolute when it contains a dot)
FORMATS: dict[str, str] = {
    "agentpost": "agentpost_format",
    "mini-swe-agent": "mini_swe_agent",
    "swe-agent": "swe_agent",
    "openhands-v0": "openhands",
    "openhands-eval": "openhands_eval",
    "openhands-v1": "openhands_v1",
    "atif": "atif",
    "gemini-cli": "gemini_cli",
    "openai-chat": "openai_chat",
    "claude-code": "claude_code",
    "codex": "codex",
    "terminus-episodes": "terminus_episodes",
}
JSONL_FORMATS = {"agentpost", "openhands-eval", "openhands-v1", "claude-code", "codex"}


def get_importer(name: str) -> ModuleType:
    """The importer module for ``name``: a ``FORMATS`` entry, else a dotted module path (through
    the one loader, ``agentpost.components``), which must define ``convert`` or
    ``convert_lines``."""
    table = {k: f"{__name__}.{v}" for k, v in FORMATS.items()}
    try:
        module = resolve(table, name, "format", modules=True)
    except ValueError as e:
        raise InputError(None, None, str(e)) from None
    if not (hasattr(module, "convert") or hasattr(module, "convert_lines")):
        raise InputError(None, None, f"format {name!r} names no importer (no convert function)")
    return module


__all__ = ["FORMATS", "JSONL_FORMATS", "NotATrajectory", "detect", "detect_data", "get_importer"]
