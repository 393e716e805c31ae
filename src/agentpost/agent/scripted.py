"""Scripted models: deterministic replies from a list or a policy function, for tests and demos.

A ``ScriptedModel`` satisfies the same ``Model`` protocol as the OpenAI transport. A reply is a
string (assistant text), a dict (``content``, ``tool_calls`` as ``[{name, arguments}]``,
``reasoning``) or a ready ``Completion``. A policy function gets the conversation so far.

Usage is ``estimated`` with a real tokenizer over the rendered context (``agent.tokenize``):
``input_tokens`` is the rendered prompt, ``output_tokens`` the rendered reply, and
``cached_tokens`` assumes a prefix cache that holds the previous call's prompt when it is a
prefix of this prompt (as in an append-only agent conversation; the reply itself is not
counted as cached, which errs low). There are no
logprobs: a scripted model samples nothing, so ``logprobs`` stays None (never invented).

Layer: io (the tokenizer loads its vocabulary).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentpost.agent.llm import Completion, ToolCallRequest
from agentpost.agent.tokenize import count_tokens, render_context, render_message
from agentpost.trajectory.model import Usage

ScriptReply = str | dict[str, Any] | Completion
PolicyFn = Callable[[list[dict[str, Any]]], ScriptReply]


class ScriptExhausted(RuntimeError):
    """A list-scripted model was asked for more replies than it has."""


def _completion(reply: ScriptReply, n: int) -> Completion:
    if isinstance(reply, Completion):
        return reply
    if isinstance(reply, str):
        return Completion(text=reply, finish_reason="stop")
    calls = []
    for j, c in enumerate(reply.get("tool_calls", [])):
        args = c.get("arguments", {})
        raw = args if isinstance(args, str) else json.dumps(args)
        calls.append(ToolCallRequest(c.get("id", f"call_{n}_{j}"), c["name"], raw, args))
    return Completion(
        text=reply.get("content"),
        tool_calls=calls,
        reasoning=reply.get("reasoning"),
        finish_reason="tool_calls" if calls else "stop",
    )


class ScriptedModel:
    """A ``Model`` answering from ``replies`` (consumed in order) or ``policy(messages)``."""

    def __init__(
        self,
        replies: list[ScriptReply] | PolicyFn,
        *,
        name: str = "scripted",
        estimate_usage: bool = True,
    ):
        self.name = name
        self._replies = replies if callable(replies) else list(replies)
        self._n = 0
        self._estimate = estimate_usage
        self._prev: tuple[str, int] | None = None  # (previous prompt, its token count)

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> Completion:
        if callable(self._replies):
            reply = self._replies(messages)
        elif self._n < len(self._replies):
            reply = self._replies[self._n]
        else:
            raise ScriptExhausted(f"{self.name}: script has only {len(self._replies)} replies")
        comp = _completion(reply, self._n)
        self._n += 1
        comp.model = self.name
        if self._estimate and comp.usage is None:
            comp.usage = self._usage(messages, tools, comp)
        return comp

    def _usage(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, comp: Completion
    ) -> Usage:
        prompt = render_context(messages, tools)
        reply = render_message(comp.message())
        if comp.reasoning:
            reply = f"<think>{comp.reasoning}</think>" + reply
        n_in, n_out = count_tokens(prompt), count_tokens(reply)
        cached = 0
        if self._prev is not None and prompt.startswith(
            self._prev[0][: -len("<|im_start|>assistant\n")]
        ):
            cached = min(self._prev[1], n_in)
        self._prev = (prompt, n_in)
        return Usage(
            input_tokens=n_in,
            cached_tokens=cached,
            output_tokens=n_out,
            reasoning_tokens=count_tokens(comp.reasoning) if comp.reasoning else 0,
            source="estimated",
        )
