"""Gemini CLI session JSON (``{sessionId, messages: [{type: user|gemini, tokens, toolCalls}]}``).

Each ``gemini`` message is one model call. ``tokens.input`` is the prompt (cached included),
``tokens.output`` excludes thoughts, so ``output_tokens = output + thoughts`` and
``reasoning_tokens = thoughts`` (the canonical output count includes reasoning).

A tool call's observation is what the model saw: ``result[].functionResponse.response.output``
(or ``.error``). ``resultDisplay`` is what the terminal UI showed (a diff, a one-line "Read 120
lines" summary, or nothing) and is only a fallback when ``result`` is absent. A shell call's
``Exit Code: N`` line gives ``exit_code``.

Layer: io.
"""

from __future__ import annotations

import re
from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Trajectory

NAME = "gemini-cli"
SHELL = {"run_shell_command"}
EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.M)


def _model_saw(result: Any) -> str | None:
    """The text of the ``functionResponse`` parts the CLI sent back to the model."""
    if not isinstance(result, list):
        return c.as_str(result)
    texts = []
    for part in result:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            for key in ("output", "error"):
                if isinstance(resp.get(key), str):
                    texts.append(resp[key])
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts) if texts else None


EDIT = {"write_file", "replace", "edit"}


def _call(tc: dict) -> tuple[Any, Any]:
    name = str(tc.get("name"))
    args = tc.get("args")
    call = c.tool_call(name, args, tc.get("id"))
    if name in SHELL:
        call.kind = "shell"
        call.command = c.as_str((args or {}).get("command")) if isinstance(args, dict) else None
    elif name in EDIT:
        call.kind = "edit"
    status = tc.get("status")
    result = _model_saw(tc.get("result")) if tc.get("result") is not None else None
    if result is None and isinstance(tc.get("resultDisplay"), str):
        result = tc["resultDisplay"]
    exit_code = None
    if name in SHELL and result is not None:
        m = EXIT_CODE.search(result)
        exit_code = c.as_int(m.group(1)) if m else None
    err = True if status == "error" else (False if status == "success" else None)
    return call, c.observation(tc.get("id"), result, exit_code, err, None)


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    messages = c.req(ctx, data, "messages", "$", list)
    turns: list[Any] = []
    instruction: Any = None
    model: Any = None
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or "type" not in msg:
            raise ctx.fail(f"$.messages[{i}].type", "missing required field")
        if msg["type"] == "user" and instruction is None:
            instruction = c.as_str(msg.get("content"))
        if msg["type"] != "gemini":
            continue
        tok = msg.get("tokens") if isinstance(msg.get("tokens"), dict) else None
        usage = None
        if tok:
            out, thoughts = c.as_int(tok.get("output")), c.as_int(tok.get("thoughts"))
            usage = c.new_usage(
                input_tokens=c.as_int(tok.get("input")),
                cached_tokens=c.as_int(tok.get("cached")),
                output_tokens=None if out is None else out + (thoughts or 0),
                reasoning_tokens=thoughts,
                source="reported",
                cost_usd=None,
            )
        pairs = [_call(tc) for tc in msg.get("toolCalls") or [] if isinstance(tc, dict)]
        notes = msg.get("thoughts") or []
        reasoning = (
            "\n".join(str(t.get("description", "")) for t in notes if isinstance(t, dict)) or None
        )
        model = model or msg.get("model")
        turns.append(
            c.turn(
                len(turns),
                text=c.as_str(msg.get("content")),
                reasoning=reasoning,
                tool_calls=[p[0] for p in pairs],
                observations=[p[1] for p in pairs],
                usage=usage,
                started_at=msg.get("timestamp"),
            )
        )
    return [
        c.trajectory(
            ctx,
            NAME,
            id=str(data.get("sessionId") or ctx.path.stem),
            agent="gemini-cli",
            model=model,
            instruction=instruction,
            turns=turns,
            keep_raw=keep_raw,
            raw=data,
            metadata={"startTime": data.get("startTime"), "lastUpdated": data.get("lastUpdated")}
            | c.import_note("gemini-cli/session"),
        )
    ]
