"""Scripted and heuristic judges: deterministic, offline.

``ScriptedJudge`` answers from a list (in order) or a function of (messages, case_id), for tests.
``HeuristicJudge`` wraps the offline heuristic annotator (``verification.heuristic``) and emits
its annotation as JSON text, so it goes through the same parser and rules as a model's answer.

Layer: pure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentpost.judges.base import JudgeReply
from agentpost.trajectory.model import Trajectory
from agentpost.verification import heuristic


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


class HeuristicJudge:
    def __init__(self, id: str, variant: str = "artifact"):
        if variant not in heuristic.VARIANTS:
            raise ValueError(f"unknown heuristic variant {variant!r}; known: {heuristic.VARIANTS}")
        self.id = id
        self.variant = variant

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {
            "kind": "heuristic",
            "variant": self.variant,
            "version": heuristic.HEURISTIC_VERSION,
        }

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        ann = heuristic.annotate(traj, case_id, self.variant)
        return JudgeReply(json.dumps(ann.to_json()))
