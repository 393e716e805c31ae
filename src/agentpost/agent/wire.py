"""The chat-completions wire format: a response body into a ``Completion``.

Reads what OpenAI-compatible servers send: ``usage`` with ``prompt_tokens_details.
cached_tokens`` and ``completion_tokens_details.reasoning_tokens``; ``choices[0].logprobs.
content`` with per-token ``top_logprobs``; ``reasoning_content`` (vLLM, DeepSeek) or
``reasoning``; tool calls whose ``arguments`` are a JSON string (or, from some servers, an
object). Lenient about extra fields, strict about the shape it needs.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from agentpost.agent.llm import Completion, MalformedResponse, ToolCallRequest
from agentpost.trajectory.model import Logprobs, Usage


def _usage(body: dict[str, Any]) -> Usage | None:
    u = body.get("usage")
    if not isinstance(u, dict):
        return None
    pd = u.get("prompt_tokens_details") or {}
    cd = u.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=u.get("prompt_tokens"),
        output_tokens=u.get("completion_tokens"),
        cached_tokens=pd.get("cached_tokens"),
        reasoning_tokens=cd.get("reasoning_tokens"),
        source="reported",
    )


def _usage_or_none(body: Any) -> Usage | None:
    """The usage block of a body that is otherwise unusable, when it is well formed."""
    try:
        return _usage(body) if isinstance(body, dict) else None
    except ValidationError:
        return None


def _logprobs(body: dict[str, Any], choice: dict[str, Any]) -> Logprobs | None:
    """Chosen and top-k logprobs; token ids too where the server sent them (vLLM's
    ``return_token_ids``: ``choices[0].token_ids`` and ``prompt_token_ids``)."""
    block = choice.get("logprobs")
    content = block.get("content") if isinstance(block, dict) else None
    ids = choice.get("token_ids")
    prompt_ids = choice.get("prompt_token_ids") or body.get("prompt_token_ids")
    if not content and not ids:
        return None
    out = Logprobs(token_ids=ids, prompt_token_ids=prompt_ids)
    if content:
        tops = [e.get("top_logprobs") or [] for e in content]
        out.tokens = [e.get("token", "") for e in content]
        out.chosen = [e.get("logprob") for e in content]
        if any(tops):
            out.top_logprobs = [[t["logprob"] for t in top] for top in tops]
            out.top_tokens = [[t["token"] for t in top] for top in tops]
    return out


def _tool_call(raw: dict[str, Any]) -> ToolCallRequest:
    fn = raw.get("function") or {}
    args = fn.get("arguments") or ""
    if not isinstance(args, str):  # some servers send an object
        args = orjson.dumps(args).decode()
    try:
        parsed, err = (orjson.loads(args) if args else {}), None
    except orjson.JSONDecodeError as e:
        parsed, err = None, f"arguments are not JSON: {e}"
    return ToolCallRequest(raw.get("id"), fn.get("name") or "", args, parsed, err)


def parse_completion(content: bytes) -> Completion:
    """A ``Completion`` from a chat-completion response body; ``MalformedResponse`` otherwise."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError as e:
        raise MalformedResponse(
            f"response is not JSON ({e}); body starts {content[:120]!r}"
        ) from None
    choices = body.get("choices") if isinstance(body, dict) else None
    if (
        not choices
        or not isinstance(choices[0], dict)
        or not isinstance(choices[0].get("message"), dict)
    ):
        raise MalformedResponse(
            f"response has no choices[0].message; body starts {content[:120]!r}",
            _usage_or_none(body),
        )
    choice = choices[0]
    msg = choice["message"]
    try:
        return Completion(
            text=msg.get("content"),
            tool_calls=[_tool_call(t) for t in msg.get("tool_calls") or []],
            reasoning=msg.get("reasoning_content") or msg.get("reasoning"),
            usage=_usage(body),
            logprobs=_logprobs(body, choice),
            finish_reason=choice.get("finish_reason"),
            raw=body,
        )
    except (KeyError, TypeError, AttributeError, ValidationError) as e:
        raise MalformedResponse(
            f"response has an unexpected shape: {type(e).__name__}: {e}"
        ) from None
