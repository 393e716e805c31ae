"""The judge interface: one call answers one annotation request with raw text.

A judge sees the chat messages of the annotation prompt; judges that do not read text (the
offline heuristic) also get the trajectory and the case id. ``fingerprint`` says everything that
determines a judge's answers (kind, model, variant, ...): it goes into the result-store key with
the prompt version, so changing a judge never reuses another judge's answers.

Layer: model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentpost.trajectory.model import Trajectory


@dataclass
class JudgeReply:
    """Raw answer text and the call's usage (tokens, cost; empty when unknown)."""

    text: str
    usage: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    id: str

    @property
    def fingerprint(self) -> dict[str, Any]: ...

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        """One model call. Raises ``InfraError`` (endpoint failure after retries),
        ``BudgetExceeded``, or ``JudgeError`` for an unusable response body."""
        ...
