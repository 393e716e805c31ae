"""The judge-panel path of behaviour annotation (spec b.2): three judges, majority per
behaviour, the arbiter otherwise, with the b.2 rules enforced on every answer and the
disagreements with the deterministic heuristic logged.

Judges are any ``agentpost.judges.base.Judge`` (OpenAI-compatible, recorded, scripted); the
panel can come from ``agentpost.judges.config.build_panel``. ``SecurityHeuristicJudge`` wraps
the offline heuristic so a panel can run with no model; a ``heuristic`` judge of the panel config
(the SCVD one, which answers in another schema) is replaced by it. Each judge gets up to two re-asks with
the parse error, as in the SCVD panel; after that it abstains.

Layer: pure (the judges passed in do the I/O).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentpost.agent.llm import MalformedResponse, ModelRequestError
from agentpost.errors import BudgetExceeded, InfraError, JudgeError
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

MAX_REASKS = 2


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


def _ask(judge: Judge, messages: list[dict], traj: Trajectory, case_id: str) -> dict[str, Any]:
    res: dict[str, Any] = {"judge": judge.id, "status": "abstained", "raw": [], "errors": []}
    for attempt in range(MAX_REASKS + 1):
        try:
            reply = judge.ask(messages, traj, case_id)
        except BudgetExceeded as e:
            res["status"] = "budget"
            res["errors"].append(str(e))
            return res
        except (InfraError, ModelRequestError) as e:
            res["status"] = "infra_error"
            res["errors"].append(f"{type(e).__name__}: {e}")
            return res
        except (MalformedResponse, JudgeError) as e:
            res["errors"].append(f"attempt {attempt}: malformed response: {e}")
            continue
        res["raw"].append(reply.text)
        try:
            res["annotation"] = parse_judge_answer(reply.text)
            res["status"] = "valid"
            return res
        except ValueError as e:
            res["errors"].append(f"attempt {attempt}: {e}")
            messages = [*messages, {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": f"Your answer was invalid: {e}. Answer again with the JSON object only."}]  # fmt: skip
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
    for judge in judges:
        if judge.fingerprint.get("kind") == "heuristic":  # an offline judge of the panel config
            judge = SecurityHeuristicJudge(judge.id, cwes, pre)
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
