"""OpenAI chat-completions logs: a litellm completion log (``messages`` + ``response`` with
``usage`` and optional ``choices[].logprobs``), or a plain list of chat messages.

Assistant messages are turns; ``tool`` messages are the observations of the turn before them.
In a completion log only the final ``response`` has usage (the earlier assistant messages are
the prompt of that call), so token sums cover that one call; cost and latency come from the log.

Layer: io. Departure: an exit code is read from OpenHands' tool text
(``[Command finished with exit code N]``), the only place such logs keep it.
"""

from __future__ import annotations

import re
from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Trajectory

NAME = "openai-chat"
EXIT_RE = re.compile(r"\[(?:The command completed|Command finished) with exit code (-?\d+)\.?\]")


def _assistant(msg: Any, index: int, ctx: c.Ctx, where: str) -> Any:
    """The turn of one assistant message; a mistyped message or tool call is an ``InputError``
    at ``where``."""
    if not isinstance(msg, dict):
        raise ctx.fail(where, f"expected an object, got {type(msg).__name__}")
    calls = []
    for j, tc in enumerate(c.opt(ctx, msg, "tool_calls", where, list)):
        if not isinstance(tc, dict):
            raise ctx.fail(
                f"{where}.tool_calls[{j}]", f"expected an object, got {type(tc).__name__}"
            )
        fn = c.opt(ctx, tc, "function", f"{where}.tool_calls[{j}]", dict)
        calls.append(c.tool_call(str(fn.get("name")), fn.get("arguments"), tc.get("id")))
    return c.turn(
        index,
        text=c.as_str(msg.get("content")),
        reasoning=c.as_str(msg.get("reasoning_content") or msg.get("reasoning")),
        tool_calls=calls,
    )


def _turns(messages: Any, ctx: c.Ctx, meta: dict, where: str) -> list:
    turns: list = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise ctx.fail(f"{where}[{i}].role", "missing required field")
        role = msg["role"]
        if role == "assistant":
            turns.append(_assistant(msg, len(turns), ctx, f"{where}[{i}]"))
        elif role in ("tool", "function") and turns:
            text = c.as_str(msg.get("content"))
            m = EXIT_RE.search(text[-400:]) if text else None
            call_id = msg.get("tool_call_id")
            turns[-1].observations.append(
                c.observation(call_id, text, c.as_int(m.group(1)) if m else None)
            )
        elif role == "system" and meta.get("system_prompt") is None:
            meta["system_prompt"] = c.as_str(msg.get("content"))
        elif role == "user" and meta.get("instruction") is None:
            meta["instruction"] = c.as_str(msg.get("content"))
    return turns


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    meta: dict[str, Any] = {}
    model = None
    if isinstance(data, list):
        turns = _turns(data, ctx, meta, "$")
    else:
        c.req(ctx, data, "messages", "$", list)
        # A non-function-calling log keeps the native tool-call form in ``raw_messages``.
        key = "raw_messages" if isinstance(data.get("raw_messages"), list) else "messages"
        turns = _turns(data[key], ctx, meta, f"$.{key}")
        resp = data.get("response")
        if isinstance(resp, dict):
            choices = c.req(ctx, resp, "choices", "$.response", list)
            if not choices or not isinstance(choices[0], dict):
                raise ctx.fail("$.response.choices[0]", "missing required field")
            msg = choices[0].get("message") or {}
            t = _assistant(msg, len(turns), ctx, "$.response.choices[0].message")
            t.usage = c.usage_from_openai(resp.get("usage"), cost=data.get("cost"))
            t.logprobs = c.logprobs_from_openai(choices[0].get("logprobs"))
            t.latency_s = c.as_float(data.get("latency_sec"))
            ts = data.get("timestamp")
            t.started_at = str(ts) if ts is not None else None
            turns.append(t)
            model = resp.get("model")
    return [
        c.trajectory(
            ctx,
            NAME,
            id=ctx.path.name.removesuffix(".json"),
            model=model,
            system_prompt=meta.get("system_prompt"),
            instruction=meta.get("instruction"),
            turns=turns,
            keep_raw=keep_raw,
            raw=data,
        )
    ]


# litellm names each completion log ``<provider>__<model>-<unix time>.json``
CALL_LOG_RE = re.compile(r"-(\d{9,11}\.\d+)\.json$")


def call_log_time(name: str) -> float | None:
    """The unix time in a litellm completion-log file name, else None."""
    m = CALL_LOG_RE.search(name)
    return float(m.group(1)) if m else None


def _results_after(messages: Any, start: int) -> list:
    """Observations: the tool messages that follow position ``start`` (the assistant message)."""
    out = []
    for msg in messages[start + 1 :]:
        if not isinstance(msg, dict) or msg.get("role") not in ("tool", "function"):
            break
        text = c.as_str(msg.get("content"))
        m = EXIT_RE.search(text[-400:]) if text else None
        out.append(
            c.observation(msg.get("tool_call_id"), text, c.as_int(m.group(1)) if m else None)
        )
    return out


def convert_calls(docs: list[tuple[Any, Any]], keep_raw: bool = False) -> list[Trajectory]:
    """One conversation logged as one litellm file per call (sorted by time): each file is one
    turn (its ``response``, with that call's usage); the tool results of call k are read from
    the prompt of call k+1. A prompt shorter than the previous one starts a new conversation."""
    groups: list[list[tuple[Any, Any]]] = []
    last_len = None
    for path, data in docs:
        n = len(data.get("messages") or []) if isinstance(data, dict) else 0
        if last_len is None or n <= last_len:
            groups.append([])
        groups[-1].append((path, data))
        last_len = n
    out = []
    for group in groups:
        turns: list = []
        meta: dict[str, Any] = {}
        for k, (path, data) in enumerate(group):
            (single,) = convert(data, c.Ctx(path), False)
            if k == 0:
                meta = {"system_prompt": single.system_prompt, "instruction": single.instruction}
            t = single.turns[-1]
            if k + 1 < len(group):
                nxt = group[k + 1][1].get("messages") or []
                c.setf(t, "observations", _results_after(nxt, len(data.get("messages") or [])))
            turns.append(t)
        first = group[0][0]
        out.append(
            c.trajectory(
                c.Ctx(first.parent),
                NAME,
                id=first.name.removesuffix(".json"),
                model=(group[-1][1].get("response") or {}).get("model"),
                turns=turns,
                keep_raw=keep_raw,
                raw=[d for _, d in group],
                metadata={"call_logs": [p.name for p, _ in group]},
                **meta,
            )
        )
    return out
