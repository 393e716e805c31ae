"""The model interface the agent loop talks to, and what one model call returns.

Named ``llm``, not ``model``: a ``model`` module holds data types (``trajectory.model``,
``tasks.model``, ``security.model``).

``Model`` is the one Protocol every model implements: the OpenAI-compatible transport
(``agent.transport``), the scripted models (``agent.scripted``) and the reference policies
(``agent.policies``). A call takes the chat messages (OpenAI format) and the tool schemas and
returns a ``Completion``, which converts into the canonical ``Turn``.

Layer: model.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentpost.errors import AgentpostError, InfraError
from agentpost.trajectory.model import Logprobs, Turn, Usage


class ModelUnavailable(InfraError):
    """The server kept failing with retryable errors (429, 5xx, timeout, dropped connection,
    malformed body) until the transport's retries ran out."""


class ModelRequestError(AgentpostError):
    """The server refused the request (a 4xx other than 408, 409 and 429): the request itself
    is wrong (key, model name, parameters), so retrying would not help and the run stops."""


class MalformedResponse(InfraError):
    """The server answered 200 with a body that is not a chat completion (bad or truncated JSON,
    missing ``choices``, ``usage`` without ``choices``). An infrastructure fault: retried like a
    5xx, and never the agent's failure. ``usage`` holds what the body reported, if it was JSON
    with a ``usage`` block, so the ledger still counts what such a reply was billed."""

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage


class Interrupted(InfraError):
    """A stop was requested (Ctrl-C, SIGTERM, SIGHUP) while a call or rollout was under way:
    the rollout is unfinished, not an outcome."""


class DeadlineExceeded(InfraError):
    """The rollout's wall-clock limit passed while waiting for the model: the server was too
    slow, which says nothing about the agent, so the rollout is unfinished (a rerun redoes it)."""


class _Flag(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class CallLimits:
    """Limits on the model calls made in this context: ``deadline`` a ``time.monotonic()``
    value, ``stop`` a flag (a ``threading.Event``) set when the run is being stopped.

    Set by the agent loop around each call through ``call_limits`` (a context variable, so the
    ``Model`` protocol stays ``complete(messages, tools)`` for every model); read by transports
    that can honour them (``agent.transport``). A model that ignores them is still bounded by
    the loop's checks between turns."""

    deadline: float | None = None
    stop: _Flag | None = None


call_limits: ContextVar[CallLimits] = ContextVar(
    "agentpost_call_limits",
    default=CallLimits(),  # noqa: B039 - frozen: never mutated
)


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call as the model emitted it. ``arguments`` is the raw JSON string; ``parsed``
    the decoded object, or None when the string is not valid JSON (``parse_error`` says why)."""

    id: str | None
    name: str
    arguments: str
    parsed: Any = None
    parse_error: str | None = None


@dataclass
class Completion:
    """One model call's answer with its accounting.

    ``usage.source`` is ``reported`` for a server's own numbers and ``estimated`` for a
    tokenizer count (scripted models). ``logprobs`` is None when the server sent none.
    """

    text: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    reasoning: str | None = None
    usage: Usage | None = None
    logprobs: Logprobs | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    attempts: int = 1
    retried_errors: list[str] = field(default_factory=list)  # failed attempts before this one
    model: str | None = None
    raw: Any = None

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation (OpenAI format)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return msg

    def to_turn(self, index: int) -> Turn:
        """The canonical turn for this call (tool calls and observations are the loop's)."""
        return Turn(
            index=index,
            text=self.text,
            reasoning=self.reasoning,
            usage=self.usage,
            logprobs=self.logprobs,
            latency_s=self.latency_s,
            extra={
                "finish_reason": self.finish_reason,
                "attempts": self.attempts,
                **({"retried_errors": self.retried_errors} if self.retried_errors else {}),
            },
        )


@runtime_checkable
class Model(Protocol):
    """Anything that answers a conversation. ``name`` goes into ``Trajectory.model``."""

    name: str

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> Completion: ...
