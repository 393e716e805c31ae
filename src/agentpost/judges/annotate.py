"""Ask one judge for one annotation, with at most two re-asks, then abstain (spec b.2 default).

An answer that does not parse, breaks the schema or a consistency rule is sent back with the
error message; after the re-asks the judge abstains and every raw answer and error is kept. A
malformed response body counts as an invalid answer. Endpoint failures that survived the
transport's retries (``InfraError``, a refused request) end as ``infra_error`` and a spent
budget as ``budget``: neither is an abstention, and the pipeline does not cache them, so a rerun
asks again.

Layer: pure (the judge passed in does the I/O).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentpost.agent.llm import MalformedResponse, ModelRequestError
from agentpost.errors import BudgetExceeded, InfraError, JudgeError
from agentpost.judges.base import Judge
from agentpost.trajectory.model import Trajectory
from agentpost.verification.protocol import Truncation, build_messages, check_answer, reask_message
from agentpost.verification.records import JudgeResult

MAX_REASKS = 2


def messages_key(messages: list[dict[str, Any]]) -> str:
    """sha256 of the request messages (what a recorded judge is keyed by)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()


def _add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    for k in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"):
        if usage.get(k) is not None:
            total[k] = total.get(k, 0) + usage[k]
    if "cost_usd" in usage:
        prev = total.get("cost_usd", 0.0)
        cost = usage["cost_usd"]
        total["cost_usd"] = None if prev is None or cost is None else prev + cost


def annotate_one(
    judge: Judge,
    traj: Trajectory,
    case_id: str,
    lim: Truncation = Truncation(),
    max_reasks: int = MAX_REASKS,
) -> JudgeResult:
    """One judge's result for one trajectory (never raises for judge or endpoint failures)."""
    messages = build_messages(traj, case_id, lim)
    res = JudgeResult(judge=judge.id, status="abstained")
    for attempt in range(max_reasks + 1):
        res.request_keys.append(messages_key(messages))
        res.attempts = attempt + 1
        try:
            reply = judge.ask(messages, traj, case_id)
        except BudgetExceeded as e:
            res.status, res.attempts = "budget", attempt
            res.request_keys.pop()  # never sent
            res.errors.append(f"budget: {e}")
            return res
        except (MalformedResponse, JudgeError) as e:  # before InfraError: a subclass of it
            res.raw.append(None)  # aligned with request_keys
            res.errors.append(f"attempt {attempt}: malformed response: {e}")
            continue  # nothing to show the judge: ask the same question again
        except (InfraError, ModelRequestError) as e:
            res.status = "infra_error"
            res.raw.append(None)
            res.errors.append(f"attempt {attempt}: {type(e).__name__}: {e}")
            return res
        res.raw.append(reply.text)
        _add_usage(res.usage, reply.usage)
        ann, errs = check_answer(reply.text, traj)
        if ann is not None:
            res.status, res.annotation = "valid", ann
            return res
        res.errors.append(f"attempt {attempt}: " + "; ".join(errs))
        messages = [*messages, {"role": "assistant", "content": reply.text}, reask_message(errs)]
    return res
