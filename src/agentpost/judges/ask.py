"""The one judge call path: ask, check the answer, re-ask with the errors, abstain.

Every method that asks judges (SCVD in ``scvd.judging``, SecureVibe in
``security.judging``) goes through ``ask_judge`` and supplies only what it owns: the messages,
a ``check`` that turns raw text into its answer or a list of errors, and a ``reask`` message
built from those errors. Spec default (SCVD b.2, followed by SecureVibe): at most two re-asks,
then the judge abstains, keeping every raw answer and error.

How each failure ends:

- an answer ``check`` rejects: re-asked with the errors (the judge's own answer and the
  re-ask message appended to the conversation); after ``max_reasks`` re-asks, ``abstained``;
- a malformed response body (``MalformedResponse``, ``JudgeError``): counted as an invalid
  answer, but nothing is shown to the judge: the same question is asked again;
- an endpoint failure that survived the transport's retries (``InfraError``, a refused
  request): ``infra_error``, at once; a spent budget: ``budget``, and the request that was
  never sent is not recorded. Neither is an abstention; callers do not cache them, so a rerun
  asks again.

``HeuristicSeat`` (config kind ``heuristic``) stands for the method's own offline annotator:
``judges/`` knows no method, so the method fills the seat with ``fill_seats`` before asking.

Layer: pure (the judge passed in does the I/O).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentpost.agent.llm import MalformedResponse, ModelRequestError
from agentpost.errors import BudgetExceeded, InfraError, JudgeError
from agentpost.judges.base import HeuristicSeat, Judge
from agentpost.trajectory.model import Trajectory

MAX_REASKS = 2
# raw answer → (the method's answer, []) when valid, else (None, the errors to show the judge)
Check = Callable[[str], tuple[Any, list[str]]]
# the errors of an invalid answer → the user message that asks again
Reask = Callable[[list[str]], dict[str, Any]]


@dataclass
class Asked:
    """What one judge said to one request, after at most ``max_reasks`` re-asks.

    ``raw`` and ``request_keys`` are aligned, one per request sent (``raw`` is None where the
    response body was unusable); ``usage`` sums the calls' token counts and cost (cost None once
    any call's cost is unknown)."""

    judge: str
    status: Literal["valid", "abstained", "infra_error", "budget"] = "abstained"
    answer: Any = None
    raw: list[str | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    attempts: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    request_keys: list[str] = field(default_factory=list)


def messages_key(messages: list[dict[str, Any]]) -> str:
    """sha256 of the request messages (what a recorded judge is keyed by)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()


def add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    """Add one call's usage to ``total`` in place (cost stays None once unknown)."""
    for k in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"):
        if usage.get(k) is not None:
            total[k] = total.get(k, 0) + usage[k]
    if "cost_usd" in usage:
        prev = total.get("cost_usd", 0.0)
        cost = usage["cost_usd"]
        total["cost_usd"] = None if prev is None or cost is None else prev + cost


def ask_judge(
    judge: Judge,
    messages: list[dict[str, Any]],
    traj: Trajectory,
    case_id: str,
    check: Check,
    reask: Reask,
    max_reasks: int = MAX_REASKS,
) -> Asked:
    """Ask ``judge`` until ``check`` accepts its answer (never raises for judge or endpoint
    failures; see the module docstring for how each one ends)."""
    res = Asked(judge=judge.id)
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
            res.raw.append(None)
            res.errors.append(f"attempt {attempt}: malformed response: {e}")
            continue  # nothing to show the judge: ask the same question again
        except (InfraError, ModelRequestError) as e:
            res.status = "infra_error"
            res.raw.append(None)
            res.errors.append(f"attempt {attempt}: {type(e).__name__}: {e}")
            return res
        res.raw.append(reply.text)
        add_usage(res.usage, reply.usage)
        answer, errs = check(reply.text)
        if answer is not None:
            res.status, res.answer = "valid", answer
            return res
        res.errors.append(f"attempt {attempt}: " + "; ".join(errs))
        messages = [*messages, {"role": "assistant", "content": reply.text}, reask(errs)]
    return res


def fill_seats(judges: Sequence[Judge], fill: Callable[[HeuristicSeat], Judge]) -> list[Judge]:
    """``judges`` with every ``HeuristicSeat`` replaced by ``fill(seat)``: the method's own
    offline annotator (its schema, its evidence)."""
    return [fill(j) if isinstance(j, HeuristicSeat) else j for j in judges]
