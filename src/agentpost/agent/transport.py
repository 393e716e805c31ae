"""The OpenAI-compatible model transport: one chat-completions call, accounted for.

Any server speaking chat completions works (vLLM, SGLang, hosted APIs, ``agent.loopback``).
Per call it records prompt, completion, cached and reasoning tokens, chosen-token and top-k
logprobs (k = 10 by default, as HERO's turn entropy needs), latency and errors, in a
thread-safe ``Ledger`` that also holds failed attempts.

Retries: 408, 409, 429, 5xx, timeouts, dropped or refused connections and 200 bodies that are
not a chat completion (truncated JSON, no ``choices``: ``MalformedResponse``), with exponential
backoff and jitter (``Retry-After`` honoured, capped). Every one of them is an infrastructure
fault (``InfraError``), never the agent's behaviour: when retries run out the caller gets
``ModelUnavailable`` and the rollout stays unfinished. Any other 4xx means the request itself is
wrong (key, model, parameters): ``ModelRequestError`` at once. The openai client's own retries
are off (``max_retries=0``) so every attempt is ours and appears in the ledger; a malformed
body's usage still counts when it reported one.

Bounded time: each attempt waits at most ``timeout_s`` (the per-request timeout) and never past
the rollout's deadline (``llm.call_limits``, set by the agent loop): past it the call raises
``DeadlineExceeded``. The HTTP request runs in a daemon thread the caller watches, so a stop
flag (Ctrl-C, SIGTERM) ends the wait within a tenth of a second (``Interrupted``) and the
deadline holds even against a server that trickles bytes (httpx's timeouts are per read).

Budgets stop *new* calls (``BudgetExceeded``), checked when a call gets its concurrency slot; a
call already running finishes (retries included) and is counted.
Unknown prices give cost ``None``, never 0; a cost budget without prices is an input error.
``agent.preflight`` asks the server once before a run, so a wrong URL or key fails in seconds.

Layer: io.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import openai

from agentpost.agent.ledger import Attempt, Ledger, usage_cost  # noqa: F401 - re-exported
from agentpost.agent.llm import (
    Completion,
    DeadlineExceeded,
    Interrupted,
    MalformedResponse,
    ModelRequestError,
    ModelUnavailable,
    call_limits,
)
from agentpost.agent.wire import parse_completion
from agentpost.config_checks import at_least, check, in_unit, non_negative, positive
from agentpost.errors import BudgetExceeded, InputError
from agentpost.prices import Prices
from agentpost.trajectory.model import Usage


@dataclass
class TransportConfig:
    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    top_logprobs: int = 10  # 0: do not ask for logprobs
    extra_body: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None  # None: read ``api_key_env`` (unset: "EMPTY", for keyless servers)
    timeout_s: float = 120.0  # per request (one HTTP attempt)
    max_retries: int = 6
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    concurrency: int = 8
    max_total_tokens: int | None = None  # budget over input + output tokens
    max_cost_usd: float | None = None
    prices: Prices | None = None

    def __post_init__(self) -> None:
        """A value no request could honour fails here, naming the field (``config_checks``)."""
        t, p, m = self.temperature, self.top_p, self.max_tokens
        check(self, {
            "model": (isinstance(self.model, str) and bool(self.model), "a model name"),
            "temperature": (t is None or non_negative(t), "a number >= 0"),
            "top_p": (p is None or in_unit(p, open_low=True), "in (0, 1]"),
            "max_tokens": (m is None or at_least(m, 1), "at least 1"),
            "top_logprobs": (at_least(self.top_logprobs, 0), "at least 0"),
            "timeout_s": (positive(self.timeout_s), "a positive number of seconds"),
            "max_retries": (at_least(self.max_retries, 0), "at least 0"),
            "backoff_s": (non_negative(self.backoff_s), "a number of seconds >= 0"),
            "backoff_max_s": (non_negative(self.backoff_max_s)
                              and self.backoff_max_s >= self.backoff_s, ">= backoff_s"),
            "concurrency": (at_least(self.concurrency, 1), "at least 1"),
            "max_total_tokens": (self.max_total_tokens is None
                                 or at_least(self.max_total_tokens, 1), "at least 1"),
            "max_cost_usd": (self.max_cost_usd is None or positive(self.max_cost_usd), "> 0"),
        })  # fmt: skip


RETRYABLE_STATUS = {408, 409, 429}  # and every 5xx


class RequestTimeout(Exception):
    """One attempt took longer than its timeout (watched here, so a total bound): retried."""


POLL_S = 0.1  # how often a waiting call looks at the stop flag


def _retryable(e: Exception) -> bool:
    if isinstance(e, openai.APIStatusError):
        return e.status_code in RETRYABLE_STATUS or e.status_code >= 500
    return isinstance(e, openai.APIConnectionError)  # includes APITimeoutError


def _retry_after(e: Exception) -> float | None:
    resp = getattr(e, "response", None)
    value = resp.headers.get("retry-after") if resp is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAITransport:
    """A ``Model`` backed by a chat-completions endpoint."""

    def __init__(self, config: TransportConfig, ledger: Ledger | None = None):
        if config.max_cost_usd is not None and config.prices is None:
            raise InputError(None, "max_cost_usd", f"a cost budget needs prices for {config.model}")
        self.config = config
        self.name = config.model
        self.ledger = ledger or Ledger()
        self._sem = threading.BoundedSemaphore(config.concurrency)
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or os.environ.get(config.api_key_env) or "EMPTY",
            max_retries=0,
            timeout=config.timeout_s,
        )

    def _check_budget(self) -> None:
        c = self.config
        tokens, cost = self.ledger.spent()
        if c.max_total_tokens is not None and tokens >= c.max_total_tokens:
            raise BudgetExceeded(f"token budget {c.max_total_tokens} spent")
        if c.max_cost_usd is not None and (cost or 0.0) >= c.max_cost_usd:
            raise BudgetExceeded(f"cost budget ${c.max_cost_usd} spent")

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict:
        c = self.config
        req: dict[str, Any] = {"model": c.model, "messages": messages}
        for k in ("temperature", "top_p", "max_tokens"):
            if getattr(c, k) is not None:
                req[k] = getattr(c, k)
        if c.top_logprobs:
            req["logprobs"] = True
            req["top_logprobs"] = c.top_logprobs
        if tools:
            req["tools"] = tools
        if c.extra_body:
            req["extra_body"] = c.extra_body
        return req

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Completion:
        """One accounted call; ``params`` overrides request fields for this call only (e.g. a
        judge's ``response_format`` or ``temperature``).

        The budget is checked once the call holds a concurrency slot, so a call that queued
        while others spent the budget does not start. Retries of a started call are not new
        calls: they run even past the budget."""
        c = self.config
        req = {**self._request(messages, tools), **(params or {})}
        limits = call_limits.get()
        call = -1
        for attempt in range(c.max_retries + 1):
            with self._sem:
                if attempt == 0:
                    self._check_budget()
                    call = self.ledger.new_call()
                comp, error = self._attempt(call, attempt, req, limits)
            if comp is not None:
                comp.retried_errors = self.ledger.errors_of(call)
                return comp
            if attempt == c.max_retries:
                raise ModelUnavailable(
                    f"{c.model}: gave up after {attempt + 1} attempts: "
                    f"{type(error).__name__}: {error}"
                ) from error
            hinted = _retry_after(error)
            delay = min(c.backoff_max_s, c.backoff_s * 2**attempt) * random.uniform(0.5, 1.0)
            self._pause(min(c.backoff_max_s, hinted) if hinted is not None else delay, limits)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _pause(self, seconds: float, limits) -> None:
        """Back off ``seconds``, waking for a stop and never sleeping past the deadline."""
        if limits.deadline is not None:
            seconds = min(seconds, max(0.0, limits.deadline - time.monotonic()))
        if limits.stop is not None and hasattr(limits.stop, "wait"):
            if limits.stop.wait(seconds):
                raise Interrupted(f"{self.config.model}: stopped")
        else:
            time.sleep(seconds)

    def _wait_for(self, req: dict[str, Any], timeout: float, limits) -> bytes:
        """The HTTP request in a daemon thread, watched here: ``Interrupted`` on a stop,
        ``RequestTimeout`` past ``timeout`` (a total bound, not per read)."""
        box: dict[str, Any] = {}

        def go() -> None:
            try:
                raw = self._client.chat.completions.with_raw_response.create(**req, timeout=timeout)
                box["content"] = raw.http_response.content
            except BaseException as e:  # handed to the waiting thread
                box["error"] = e

        worker = threading.Thread(target=go, daemon=True, name="agentpost-request")
        worker.start()
        end = time.monotonic() + timeout
        while worker.is_alive():
            if limits.stop is not None and limits.stop.is_set():
                raise Interrupted(f"{self.config.model}: stopped while waiting for the model")
            left = end - time.monotonic()
            if left <= 0:
                raise RequestTimeout(f"no complete answer within {timeout:g}s")
            worker.join(min(POLL_S, left))
        if "error" in box:
            raise box["error"]
        return box["content"]

    def _attempt(
        self, call: int, attempt: int, req: dict[str, Any], limits
    ) -> tuple[Completion | None, Exception | None]:
        """One HTTP attempt, recorded in the ledger: ``(completion, None)``, ``(None, error)``
        for a retryable failure, or a raised typed error for one that is not retryable."""
        c = self.config
        timeout = c.timeout_s
        if limits.deadline is not None:
            left = limits.deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExceeded(
                    f"{c.model}: the rollout's wall-clock limit passed while waiting for the model"
                )
            timeout = min(timeout, left)
        t0 = time.monotonic()
        try:
            content = self._wait_for(req, timeout, limits)
        except Interrupted:
            self.ledger.record(
                Attempt(call, attempt, "error", time.monotonic() - t0, None, "Interrupted"), None
            )
            raise
        except (openai.OpenAIError, RequestTimeout) as e:
            retryable = isinstance(e, RequestTimeout) or _retryable(e)
            status = "retryable" if retryable else "error"
            code = getattr(e, "status_code", None)
            a = Attempt(
                call, attempt, status, time.monotonic() - t0, code, type(e).__name__, str(e)[:500]
            )
            self.ledger.record(a, None)
            if not retryable:
                raise ModelRequestError(f"{c.model}: {type(e).__name__}: {e}") from e
            return None, e
        latency = time.monotonic() - t0
        try:
            comp = parse_completion(content)
        except MalformedResponse as e:  # a body with usage but no choices still counts
            a = Attempt(
                call, attempt, "retryable", latency, 200, "MalformedResponse", str(e), e.usage
            )
            self.ledger.record(a, self._cost(e.usage))
            return None, e
        cost = self._cost(comp.usage)
        if comp.usage is not None:
            comp.usage.cost_usd = cost
        self.ledger.record(Attempt(call, attempt, "ok", latency, 200, usage=comp.usage), cost)
        comp.latency_s, comp.attempts, comp.model = latency, attempt + 1, c.model
        return comp, None

    def _cost(self, usage: Usage | None) -> float | None:
        return usage_cost(self.config.prices, usage)
