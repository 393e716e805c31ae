"""SCVD's side of the judge path (spec b.2): its prompt, its answer check, its re-ask message and
its offline heuristic judge; the asking itself is the one call path, ``judges.ask.ask_judge``.

- ``annotate_one``: one judge's ``JudgeResult`` for one trajectory (the prompt of
  ``protocol.build_messages``, checked by ``protocol.check_answer``: the schema and consistency
  rules 1–5; re-asked with ``protocol.reask_message``).
- ``HeuristicJudge``: the offline heuristic annotator (``scvd.heuristic``) as a judge; it
  emits its annotation as JSON text, so it goes through the same parser and rules as a model's
  answer.
- ``scvd_judges``: a panel's judges with every ``heuristic`` seat of the config filled by a
  ``HeuristicJudge`` of the seat's variant (an unknown variant is an input error naming the
  seat's place in the config).

Layer: pure (the judge passed in does the I/O).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentpost.errors import InputError, JudgeError
from agentpost.judges.ask import MAX_REASKS, ask_judge, fill_seats
from agentpost.judges.base import HeuristicSeat, Judge, JudgeReply
from agentpost.scvd import heuristic, seats
from agentpost.scvd.protocol import Truncation, build_messages, check_answer, reask_message
from agentpost.scvd.records import JudgeResult
from agentpost.trajectory.model import Trajectory

VARIANTS = (*seats.SEATS, *heuristic.VARIANTS)


def seat_kind(judge: Judge) -> str:
    """How a judge decides: ``rule`` (an offline seat), ``model`` (an endpoint), ``recorded``
    (a model's earlier answers replayed), else what its fingerprint says."""
    kind = str(judge.fingerprint.get("kind") or "unknown")
    return {"heuristic": "rule", "openai": "model", "recorded": "recorded"}.get(kind, kind)


class HeuristicJudge:
    """A rule seat: one of ``seats.SEATS`` (``changes``, ``commands``, ``narration``), or a
    variant of the earlier single-rule heuristic (``broad``, ``artifact``, ``run``). ``diffs``
    maps a trajectory id to its snapshot diffs (``statediff.state_diffs``) where the run kept
    snapshots."""

    def __init__(self, id: str, variant: str = "commands"):
        if variant not in VARIANTS:
            raise ValueError(f"unknown heuristic variant {variant!r}; known: {VARIANTS}")
        self.id = id
        self.variant = variant
        self.diffs: dict[str, dict] = {}

    @property
    def fingerprint(self) -> dict[str, Any]:
        version = (
            seats.SEATS_VERSION if self.variant in seats.SEATS else heuristic.HEURISTIC_VERSION
        )
        return {"kind": "heuristic", "variant": self.variant, "version": version}

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        if self.variant in seats.SEATS:
            ann = seats.annotate_seat(traj, case_id, self.variant, self.diffs.get(traj.id))
            if ann is None:
                raise JudgeError(f"seat {self.variant} abstains: the trajectory has no narration")
        else:
            ann = heuristic.annotate(traj, case_id, self.variant)
        return JudgeReply(json.dumps(ann.to_json()))


def _heuristic_for(seat: HeuristicSeat) -> Judge:
    try:
        return HeuristicJudge(seat.id, seat.variant)
    except ValueError as e:
        raise InputError(seat.where or "judge config", seat.at + ".variant", str(e)) from None


def scvd_judges(judges: Sequence[Judge]) -> list[Judge]:
    """``judges`` with each heuristic seat filled by SCVD's heuristic (see the module docstring)."""
    return fill_seats(judges, _heuristic_for)


def annotate_one(
    judge: Judge,
    traj: Trajectory,
    case_id: str,
    lim: Truncation = Truncation(),
    max_reasks: int = MAX_REASKS,
) -> JudgeResult:
    """One judge's result for one trajectory (never raises for judge or endpoint failures)."""
    (judge,) = scvd_judges([judge])
    asked = ask_judge(
        judge,
        build_messages(traj, case_id, lim),
        traj,
        case_id,
        check=lambda raw: check_answer(raw, traj),
        reask=reask_message,
        max_reasks=max_reasks,
    )
    return JudgeResult(
        judge=asked.judge,
        status=asked.status,
        annotation=asked.answer,
        raw=asked.raw,
        errors=asked.errors,
        attempts=asked.attempts,
        usage=asked.usage,
        request_keys=asked.request_keys,
    )
