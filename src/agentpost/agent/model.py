"""The model interface the agent loop talks to, and what one model call returns.

``Model`` is the one Protocol every model implements: the OpenAI-compatible transport
(``agent.transport``), the scripted models (``agent.scripted``) and the reference policies
(``agent.policies``). A call takes the chat messages (OpenAI format) and the tool schemas and
returns a ``Completion``, which converts into the canonical ``Turn``.

Layer: model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentpost.errors import AgentpostError, InfraError
from agentpost.trajectory.model import Logprobs, Turn, Usage


class ModelUnavailable(InfraError):
    """The server kept failing with retryable errors (429, 5xx, timeout, dropped connection)
    until the transport's retries ran out."""


class ModelRequestError(AgentpostError):
    """The server refused the request (a 4xx other than 429): retrying would not help."""


class MalformedResponse(AgentpostError):
    """The server answered 200 with a body that is not a chat completion (bad JSON, missing
    ``choices``). Not retried: a server that emits broken JSON usually does so deterministically,
    and a retry would silently spend tokens the budget must account for. ``usage`` holds what
    the body reported, if it was JSON with a ``usage`` block, so the ledger still counts it."""

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage


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
