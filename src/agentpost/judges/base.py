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


class HeuristicSeat:
    """A panel seat (config kind ``heuristic``) for the method's own offline annotator.

    ``judges/`` knows no method's schema, so the seat cannot answer: each method fills it
    (``judges.ask.fill_seats``) with its heuristic before asking: SCVD with the ``variant`` of
    ``scvd.heuristic``, SecureVibe with the pre-label heuristic of the case. ``where`` and
    ``at`` name the seat's place in the config, for an input error about its ``variant``."""

    def __init__(self, id: str, variant: str = "artifact", where: str = "", at: str = ""):
        self.id, self.variant, self.where, self.at = id, variant, where, at

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "heuristic", "variant": self.variant}

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        raise TypeError(f"judge {self.id}: a heuristic seat must be filled by the method first")
