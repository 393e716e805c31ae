"""Typed failures. Infrastructure errors are retried; input, evaluator and judge errors are
recorded and counted, never silently dropped.

Layer: model (no I/O).
"""

from __future__ import annotations

from pathlib import Path


class AgentpostError(Exception):
    """Base of every error agentpost raises on purpose."""


class InputError(AgentpostError):
    """Bad input: names the file and the place (a JSON path or a line) in one line."""

    def __init__(self, path: str | Path | None, where: str | None, message: str):
        self.path = str(path) if path is not None else None
        self.where = where
        self.message = message
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``path: where: message`` on one line (line breaks in the message become spaces)."""
        parts = [p for p in (self.path, self.where) if p]
        prefix = ": ".join(parts)
        message = " ".join(self.message.split("\n"))
        return f"{prefix}: {message}" if prefix else message


class InfraError(AgentpostError):
    """A sandbox, network or server failure: worth retrying."""


class EvaluatorError(AgentpostError):
    """An evaluator ran but gave no valid reward."""


class JudgeError(AgentpostError):
    """A judge answered with something unusable after its re-asks."""


class BudgetExceeded(AgentpostError):
    """A token or cost budget stops new model calls."""
