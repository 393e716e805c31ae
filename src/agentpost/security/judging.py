"""The judge-panel path of behaviour annotation (spec b.2): three judges, majority per
behaviour, the arbiter otherwise, with the b.2 rules enforced on every answer and the
disagreements with the deterministic heuristic logged.

Judges are any ``agentpost.judges.base.Judge`` (OpenAI-compatible, recorded, scripted); the
panel can come from ``agentpost.judges.config.build_panel``. ``SecurityHeuristicJudge`` wraps
the offline heuristic so a panel can run with no model; it fills each ``heuristic`` seat of the
panel config (``judges.ask.fill_seats``). Every judge is asked through the one call path,
``judges.ask.ask_judge``: up to two re-asks with the parse error, then it abstains. This module
owns only SecureVibe's prompt (``annotate.judge_messages``), parser and re-ask message.

Layer: pure (the judges passed in do the I/O).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentpost.judges.ask import ask_judge, fill_seats
from agentpost.judges.base import Judge, JudgeReply
from agentpost.security.annotate import (
    FORMAT,
    disagreements,
    enforce_rules,
    judge_messages,
    labels_from_prelabels,
    missing_behaviours,
    parse_judge_answer,
    vote,
)
from agentpost.security.behaviours import evidence, prelabels
from agentpost.trajectory.model import Trajectory


class SecurityHeuristicJudge:
    """A judge that answers with the heuristic labels of the pre-labels in its request."""

    def __init__(self, id: str, target_cwes: Sequence[int], pre: dict[str, Any]):
        self.id, self._cwes, self._pre = id, list(target_cwes), pre

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "security-heuristic", "markers_version": self._pre.get("markers_version")}

    def ask(self, messages: list[dict[str, Any]], traj: Trajectory, case_id: str) -> JudgeReply:
        return JudgeReply(
            json.dumps({"case_id": case_id, **labels_from_prelabels(self._pre, self._cwes)})
        )


def _check(raw: str) -> tuple[dict[str, Any] | None, list[str]]:
    try:
        return parse_judge_answer(raw), []
    except ValueError as e:
        return None, [str(e)]


def _reask(errors: list[str]) -> dict[str, str]:
    return {"role": "user", "content": f"Your answer was invalid: {'; '.join(errors)}. "
            "Answer again with the JSON object only."}  # fmt: skip


def _ask(judge: Judge, messages: list[dict], traj: Trajectory, case_id: str) -> dict[str, Any]:
    """One judge's answer through the one call path, as the labels document records it."""
    asked = ask_judge(judge, messages, traj, case_id, _check, _reask)
    res: dict[str, Any] = {"judge": asked.judge, "status": asked.status, "raw": asked.raw,
                           "errors": asked.errors, "request_keys": asked.request_keys,
                           "usage": asked.usage}  # fmt: skip
    if asked.status == "valid":
        res["annotation"] = asked.answer
    return res


def panel_annotate(
    judges: Sequence[Judge],
    arbiter: int,
    traj: Trajectory,
    *,
    task_text: str,
    reference: dict[str, Any],
    final_diff: str,
    final_code: str,
    markers: dict[str, Any],
    case_id: str | None = None,
) -> dict[str, Any]:
    """Labels decided by the panel, with each judge's raw answers, rule violations and the
    disagreements with the heuristic. ``missing`` lists the behaviours no judge decided (their
    label is None): when every judge abstains, all three."""
    case_id = case_id or traj.id
    cwes = list(reference["cwes"])
    steps = evidence(traj, markers["test_files"])
    pre = prelabels(steps, final_code, markers)
    has_control = bool(set(cwes) & set(pre["final_controls"]))
    messages = judge_messages(task_text, reference, steps, final_diff, pre, case_id)
    results, fixed = [], []
    # a heuristic seat of the panel config: SecureVibe's pre-label heuristic for this case
    for judge in fill_seats(judges, lambda seat: SecurityHeuristicJudge(seat.id, cwes, pre)):
        res = _ask(judge, messages, traj, case_id)
        if res["status"] == "valid":
            res["annotation"], res["violations"] = enforce_rules(
                res["annotation"], steps, has_control
            )
        results.append(res)
        fixed.append(res.get("annotation"))
    decided = vote(fixed, arbiter)
    labels, violations = enforce_rules(decided, steps, has_control)
    heur, _ = enforce_rules(labels_from_prelabels(pre, cwes), steps, has_control)
    return {
        "format": FORMAT,
        "case_id": case_id,
        **{k: v for k, v in labels.items() if k != "resolved_by"},
        "resolved_by": decided["resolved_by"],
        "missing": missing_behaviours(labels),
        "annotator": "panel",
        "markers_version": markers.get("version"),
        "judges": results,
        "prelabels": pre,
        "violations": violations,
        "disagreements": disagreements(labels, heur),
    }
