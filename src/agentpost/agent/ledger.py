"""Accounting of model calls: the cost of a call, one record per HTTP attempt, and the ledger.

Split out of ``agent.transport`` (which re-exports these names). A cost is ``None`` whenever it
is unknown, never 0; a failed attempt without usage costs nothing; a malformed reply that
reported usage is counted, since it was billed.

Layer: io.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from agentpost.prices import Prices
from agentpost.trajectory.model import Usage


def usage_cost(prices: Prices | None, usage: Usage | None) -> float | None:
    """What one call cost at ``prices`` (``agentpost.prices``: per million tokens), or None.

    A budget must not undercount, so a call whose server reports no cached-token count is
    priced as all uncached (an upper bound), where the HERO cost metric says "unknown"; and
    cached tokens cost the input price unless ``prices.cached`` is given (the metric's default,
    0.1 x input, would let a budget run far past its limit on a server with no discount)."""
    if prices is None or usage is None:
        return None
    if prices.cached is None:
        prices = replace(prices, cached=prices.input)
    return prices.cost(usage.input_tokens, usage.cached_tokens or 0, usage.output_tokens)


@dataclass
class Attempt:
    """One HTTP attempt. ``usage`` is None when the server sent none (never a guessed 0)."""

    call: int
    attempt: int
    status: str  # ok | retryable | error
    latency_s: float
    http_status: int | None = None
    error_type: str | None = None
    error: str | None = None
    usage: Usage | None = None


class Ledger:
    """Every attempt and the running totals, shared by all threads using one transport.

    ``cost_usd`` is None until a priced attempt is recorded, and the summary's cost is None as
    soon as one attempt with usage could not be priced: an unknown cost is never reported as 0.
    Failed attempts without usage (a 429, a dropped connection) cost nothing; an answer without
    usage has an unknown cost."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.attempts: list[Attempt] = []
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.reasoning_tokens = 0
        self.cost_usd: float | None = None
        self.unpriced_calls = 0

    def new_call(self) -> int:
        with self._lock:
            self.calls += 1
            return self.calls - 1

    def spent(self) -> tuple[int, float | None]:
        """(input + output tokens, cost in USD or None) so far."""
        with self._lock:
            return self.input_tokens + self.output_tokens, self.cost_usd

    def record(self, a: Attempt, cost: float | None) -> None:
        with self._lock:
            self.attempts.append(a)
            u = a.usage
            if u is None:
                self.unpriced_calls += a.status == "ok"  # answered, but its cost is unknown
                return
            self.input_tokens += u.input_tokens or 0
            self.output_tokens += u.output_tokens or 0
            self.cached_tokens += u.cached_tokens or 0
            self.reasoning_tokens += u.reasoning_tokens or 0
            if cost is None:
                self.unpriced_calls += 1
            else:
                self.cost_usd = (self.cost_usd or 0.0) + cost

    def errors_of(self, call: int) -> list[str]:
        with self._lock:
            return [
                f"{a.error_type}: {a.error}"
                for a in self.attempts
                if a.call == call and a.status != "ok"
            ]

    def summary(self) -> dict[str, Any]:
        with self._lock:
            failed = [a for a in self.attempts if a.status != "ok"]
            return {
                "calls": self.calls,
                "attempts": len(self.attempts),
                "failed_attempts": len(failed),
                "input_tokens": self.input_tokens,
                "cached_tokens": self.cached_tokens,
                "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens,
                "cost_usd": None if self.unpriced_calls else self.cost_usd,
                "errors": [_attempt_json(a) for a in failed[-20:]],
            }


def _attempt_json(a: Attempt) -> dict[str, Any]:
    """An attempt as plain JSON: a billed malformed reply carries a ``Usage`` (pydantic)."""
    row = {k: getattr(a, k) for k in a.__dataclass_fields__ if k != "usage"}
    row["usage"] = a.usage.model_dump(mode="json") if a.usage is not None else None
    return row
