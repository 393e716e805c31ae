"""A scripted judge: deterministic, offline, for tests.

``ScriptedJudge`` answers from a list (in order) or a function of (messages, case_id). The
methods' heuristic judges live with their methods (``scvd.judging.HeuristicJudge``,
``security.judging.SecurityHeuristicJudge``): they answer in the method's schema.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentpost.judges.base import JudgeReply
from agentpost.trajectory.model import Trajectory


class ScriptedJudge:
    def __init__(self, id: str, replies: list[str] | Callable[[list[dict], str], str]):
        self.id = id
        self._replies = replies if callable(replies) else list(replies)
        self.calls = 0

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "scripted", "id": self.id}

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        self.calls += 1
        if callable(self._replies):
            return JudgeReply(self._replies(messages, case_id))
        if not self._replies:
            raise IndexError(f"scripted judge {self.id}: no replies left")
        return JudgeReply(self._replies.pop(0))
