"""Helpers shared by the importers: usage parsing, tool-call classification, checked access.

Layer: io. Importers build models with ``construct`` (no re-validation; see
``_construct.py``): every value that goes in is checked or coerced here first, which
is where import time goes otherwise. The constructors that run per model call (``turn``,
``observation``, ``new_usage``, ``_tool_call``, and ``trajectory``'s models) are written out
here, as what ``_construct.maker`` would generate, so that the compiled build
(``trajectory/_native.py``) compiles them; a test keeps them equal to the generated ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from agentpost import __version__
from agentpost.errors import InputError
from agentpost.ingress.hostdir import open_under, read_fd
from agentpost.ingress.keys import normalise_key
from agentpost.trajectory.importers._construct import MISSING, construct, maker  # noqa: F401 (c.construct)
from agentpost.trajectory.model import (
    FORMAT,
    Logprobs,
    Observation,
    Outcome,
    Producer,
    Source,
    ToolCall,
    Totals,
    Trajectory,
    Turn,
    Usage,
)
from agentpost.trajectory.totals import totals_values

new_logprobs = maker(Logprobs)  # generated constructors (see below for the hot four)
_new_outcome = maker(Outcome)


class NotATrajectory(Exception):  # noqa: N818 - a signal, not an error
    """The file is a known companion (an index, a predictions file, a continuation): skip it."""


def companion(path: Path, yaml: bool = False) -> Any:
    """The parsed JSON (or, with ``yaml``, YAML) of a file that sits beside a trajectory and
    only adds to it (a conversation state, a session's or run's config), or None when it is
    absent, a symlink (it may lead anywhere on the host), not a regular file, or unreadable:
    its absence never fails the import."""
    from agentpost.trajectory.io import read_regular

    try:
        if path.is_symlink() or not path.is_file():
            return None
        raw = read_regular(path)
        if not yaml:
            return orjson.loads(raw)
        import yaml as pyyaml  # type: ignore[import-untyped]

        return pyyaml.safe_load(raw)
    except Exception:  # noqa: BLE001 - any unreadable companion is no companion
        return None


NAMED_LIMIT = 1 << 30  # bytes of one file a trajectory names (a continuation, a report)


def read_named(root: Path, key: str, *, where: str) -> bytes:
    """The bytes of the file that a trajectory *names* (``key``, a value read from the file:
    ATIF's ``continued_trajectory_ref``, a SWE-bench report under ``logs/<instance_id>/``), below
    ``root`` (a folder of the trajectory's own path, named by the user). The name is hostile data,
    so it goes through ``ingress``: a normalised relative key (no absolute path, no ``..``),
    reached by descent that follows no symlink, a regular file that is not a hard link (a FIFO
    cannot block), bounded. Raises ``ingress.keys.Refused`` or ``OSError`` (missing)."""
    fd = open_under(Path(root).resolve(), normalise_key(key, where=where))
    try:
        return read_fd(fd, NAMED_LIMIT, where)
    finally:
        os.close(fd)


class Ctx:
    """Where the importer is: the file, and a record label for multi-record files."""

    def __init__(self, path: Path, record: str | None = None):
        self.path = path
        self.record = record

    def fail(self, where: str, message: str) -> InputError:
        place = f"{self.record}: {where}" if self.record else where
        return InputError(self.path, place, message)


def req(ctx: Ctx, obj: Any, key: str, where: str, kind: type | tuple = object) -> Any:
    """``obj[key]``, or an ``InputError`` naming ``where.key`` when missing or mistyped."""
    if not isinstance(obj, dict):
        raise ctx.fail(where, f"expected an object, got {type(obj).__name__}")
    if key not in obj or obj[key] is None:
        raise ctx.fail(f"{where}.{key}", "missing required field")
    value = obj[key]
    if not isinstance(value, kind):
        name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ctx.fail(f"{where}.{key}", f"expected {name}, got {type(value).__name__}")
    return value


def opt(ctx: Ctx, obj: dict, key: str, where: str, kind: type) -> Any:
    """``obj[key]`` when it is a ``kind``; a missing or empty value reads as ``kind()``; any
    other value is an ``InputError`` naming ``where.key`` (``req`` for optional fields)."""
    value = obj.get(key)
    if not value:
        return kind()
    if not isinstance(value, kind):
        raise ctx.fail(f"{where}.{key}", f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def as_int(v: Any) -> int | None:
    if type(v) is int:  # the common case first: this runs for every token count
        return v
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    elif isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    else:
        return None
    return v if _INT_LOW <= v <= _INT_HIGH else None  # a 1e30 "count" is no count


_INT_LOW, _INT_HIGH = -(2**63), 2**64 - 1  # the integers JSON output (orjson) can hold


def in_range(v: int) -> bool:
    """Whether the JSON writer can hold ``v`` (64 bits, signed or unsigned)."""
    return _INT_LOW <= v <= _INT_HIGH


def as_float(v: Any) -> float | None:
    if type(v) is float:
        return v
    if isinstance(v, bool) or v is None:
        return None
    return float(v) if isinstance(v, int | float) else None


def as_dict(v: Any) -> dict:
    """``v`` when it is an object, else a new empty one (an optional sub-object)."""
    return v if isinstance(v, dict) else {}


def as_str(v: Any) -> str | None:
    if type(v) is str or v is None:
        return v
    if isinstance(v, list):  # content parts: [{"type": "text", "text": ...}]
        parts: list[str] = [
            t for p in v if isinstance(p, dict) and isinstance(t := p.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def usage_from_openai(u: Any, source: str = "reported", cost: Any = None) -> Usage | None:
    """Usage from a chat-completions, Responses-API or Anthropic usage block.

    ``input_tokens`` always includes cached prompt tokens: litellm's ``prompt_tokens`` already
    does; Anthropic's native ``input_tokens`` does not, so cache reads and writes are added.
    """
    if not isinstance(u, dict):
        return None
    if "prompt_tokens" in u or "completion_tokens" in u:
        # ``as_int`` returns an int as it is: the common case is tested inline (one call less
        # per count, on every model call)
        inp, out = u.get("prompt_tokens"), u.get("completion_tokens")
        if inp.__class__ is not int:
            inp = as_int(inp)
        if out.__class__ is not int:
            out = as_int(out)
        d = u.get("prompt_tokens_details")
        cached = d.get("cached_tokens") if isinstance(d, dict) else None
        if cached.__class__ is not int:
            cached = as_int(cached)
        if cached is None:
            cached = as_int(u.get("cache_read_input_tokens"))
        if cached is None:
            cached = as_int(u.get("prompt_cache_hit_tokens"))
        d = u.get("completion_tokens_details")
        reasoning = d.get("reasoning_tokens") if isinstance(d, dict) else None
        if reasoning.__class__ is not int:
            reasoning = as_int(reasoning)
    elif "input_tokens_details" in u or "output_tokens_details" in u:  # Responses API
        inp, out = as_int(u.get("input_tokens")), as_int(u.get("output_tokens"))
        cached = as_int(_get(u, "input_tokens_details", "cached_tokens"))
        reasoning = as_int(_get(u, "output_tokens_details", "reasoning_tokens"))
    elif "input_tokens" in u or "output_tokens" in u:  # Anthropic native
        inp, out = as_int(u.get("input_tokens")), as_int(u.get("output_tokens"))
        cached = as_int(u.get("cache_read_input_tokens"))
        if inp is not None:
            inp += (cached or 0) + (as_int(u.get("cache_creation_input_tokens")) or 0)
        reasoning = None
    else:
        return None
    if cost is None:
        cost = u.get("cost")
    return new_usage(
        input_tokens=inp,
        cached_tokens=cached,
        output_tokens=out,
        reasoning_tokens=reasoning,
        source=source,
        cost_usd=as_float(cost),
    )


def parse_args(arguments: Any) -> Any:
    """Tool-call arguments as a dict when they are a JSON object string; else unchanged."""
    if isinstance(arguments, str):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return arguments
    return arguments


SHELL_TOOLS = {"bash", "execute_bash", "terminal", "shell", "run", "run_command", "exec_command"}
EDIT_TOOLS = {"str_replace_editor", "file_editor", "edit_file", "str_replace_based_edit_tool"}
EDIT_COMMANDS = {"create", "str_replace", "insert", "undo_edit", "write"}
CONTROL_TOOLS = {"finish", "submit", "mark_task_complete", "task_complete", "complete_task"}


def tool_call(name: Any, arguments: Any, call_id: Any = None) -> ToolCall:
    """A ``ToolCall`` with ``kind`` and ``command`` derived from the tool name and arguments."""
    args = arguments
    if isinstance(arguments, str):  # ``parse_args``, inline: this runs for every call
        try:
            args = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            pass
    kind, command = "other", None
    a = args if isinstance(args, dict) else {}
    if name in SHELL_TOOLS:
        command = as_str(a.get("command")) if a else (args if isinstance(args, str) else None)
        is_input = a.get("is_input")
        kind = "keystrokes" if is_input is True or is_input == "true" else "shell"
    elif name in EDIT_TOOLS:
        kind = "edit" if a.get("command") in EDIT_COMMANDS or name == "edit_file" else "other"
    elif name in CONTROL_TOOLS:
        kind = "control"
    elif name == "bash_command" and "keystrokes" in a:  # Terminus
        kind, command = "keystrokes", as_str(a.get("keystrokes"))
    return _tool_call(
        id=call_id if call_id is None or call_id.__class__ is str else str(call_id),
        name=name if name.__class__ is str else str(name),
        arguments=args,
        command=command,
        kind=kind,
    )


_SUMS = ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")
_TRAJ_STR = ("task_id", "agent", "agent_version", "model", "run_id", "instruction", "system_prompt")
_TRAJ_FIELDS = frozenset((*_TRAJ_STR, "metadata"))  # what ``trajectory(**fields)`` may set


def _ts(v: Any) -> str | None:
    return str(v) if type(v) in (int, float) else as_str(v)


# The per-call constructors, written out: what ``maker(cls, coerce)`` generates for these four
# models (a test compares them field by field, in order), as real functions, so the compiled
# build compiles them too (a generated function stays interpreted: a Turn cost 0.67 against
# 0.50 us). A mistyped source value becomes None (or its coercion), never a bad model.
_new = object.__new__
_set_dict = object.__setattr__


def observation(
    call_id: Any = None,
    text: Any = None,
    exit_code: Any = None,
    is_error: Any = None,
    timed_out: Any = None,
) -> Observation:
    """An ``Observation``; each value coerced to its field's type, or None."""
    m = _new(Observation)
    _set_dict(
        m,
        "__dict__",
        {
            "call_id": call_id if call_id is None or call_id.__class__ is str else str(call_id),
            "text": text if text is None or text.__class__ is str else as_str(text),
            "exit_code": exit_code
            if exit_code is None or exit_code.__class__ is int
            else as_int(exit_code),
            "is_error": is_error if is_error is None or is_error.__class__ is bool else None,
            "timed_out": timed_out if timed_out is None or timed_out.__class__ is bool else None,
        },
    )
    return m


def turn(
    index: Any,
    step: Any = None,
    text: Any = None,
    reasoning: Any = None,
    tool_calls: Any = MISSING,
    observations: Any = MISSING,
    usage: Any = None,
    logprobs: Any = None,
    started_at: Any = None,
    ended_at: Any = None,
    latency_s: Any = None,
    extra: Any = MISSING,
) -> Turn:
    """A ``Turn`` (index, then its fields as keywords); unspecified fields get defaults."""
    m = _new(Turn)
    _set_dict(
        m,
        "__dict__",
        {
            "index": index,
            "step": step if step is None or step.__class__ is int else as_int(step),
            "text": text if text is None or text.__class__ is str else _ts(text),
            "reasoning": reasoning
            if reasoning is None or reasoning.__class__ is str
            else _ts(reasoning),
            "tool_calls": [] if tool_calls is MISSING else tool_calls,
            "observations": [] if observations is MISSING else observations,
            "usage": usage,
            "logprobs": logprobs,
            "started_at": started_at
            if started_at is None or started_at.__class__ is str
            else _ts(started_at),
            "ended_at": ended_at
            if ended_at is None or ended_at.__class__ is str
            else _ts(ended_at),
            "latency_s": latency_s,
            "extra": {} if extra is MISSING else extra,
        },
    )
    return m


def _tool_call(
    id: Any = None,
    name: Any = None,
    arguments: Any = None,
    command: Any = None,
    kind: Any = "other",
) -> ToolCall:
    """A ``ToolCall`` from values already checked (``tool_call`` checks them)."""
    m = _new(ToolCall)
    _set_dict(
        m,
        "__dict__",
        {"id": id, "name": name, "arguments": arguments, "command": command, "kind": kind},
    )
    return m


def new_usage(
    input_tokens: Any = None,
    cached_tokens: Any = None,
    output_tokens: Any = None,
    reasoning_tokens: Any = None,
    source: Any = None,
    cost_usd: Any = None,
) -> Usage:
    """A ``Usage`` from values already checked (each an int, float, a source name or None)."""
    m = _new(Usage)
    _set_dict(
        m,
        "__dict__",
        {
            "input_tokens": input_tokens,
            "cached_tokens": cached_tokens,
            "output_tokens": output_tokens,
            "reasoning_tokens": reasoning_tokens,
            "source": source,
            "cost_usd": cost_usd,
        },
    )
    return m


def import_note(layout: str, warnings: list[list[str]] | None = None) -> dict[str, Any]:
    """``{"import": {"layout": ..., "warnings": [[place, message], ...]}}`` for a trajectory's
    metadata: the layout the importer recognised (a key of ``trajectory.coverage.PROMISES``)
    and what its cross-checks found (``agentpost import`` prints them, naming the file)."""
    note: dict[str, Any] = {"layout": layout}
    if warnings:
        note["warnings"] = warnings
    return {"import": note}


def setf(obj: Any, name: str, value: Any) -> None:
    """Set a field of a constructed model without pydantic's ``__setattr__`` (hot loops only)."""
    obj.__dict__[name] = value


def logprobs_from_openai(lp: Any) -> Logprobs | None:
    """``choices[].logprobs.content[]`` (chat completions) → column-wise ``Logprobs``."""
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list) or not content:
        return None
    tokens, chosen, top_lp, top_tok = [], [], [], []
    for item in content:
        tokens.append(str(item.get("token", "")))
        chosen.append(as_float(item.get("logprob")))
        tops = item.get("top_logprobs") or []
        top_lp.append([as_float(t.get("logprob")) or 0.0 for t in tops])
        top_tok.append([str(t.get("token", "")) for t in tops])
    has_top = any(top_tok)
    return new_logprobs(
        tokens=tokens,
        chosen=chosen,
        top_logprobs=top_lp if has_top else None,
        top_tokens=top_tok if has_top else None,
        token_ids=None,
        prompt_token_ids=None,
    )


def producer(fmt: str, keep_raw: bool) -> Producer:
    m = _new(Producer)
    name = f"agentpost.import.{fmt}"
    _set_dict(m, "__dict__", {"name": name, "version": __version__, "args": {"keep_raw": keep_raw}})
    return m


def trajectory(
    ctx: Ctx,
    fmt: str,
    *,
    id: Any,
    turns: list[Turn],
    keep_raw: bool,
    raw: Any = None,
    run_total: Usage | None = None,
    outcome: Outcome | None = None,
    **fields: Any,
) -> Trajectory:
    """Assemble a trajectory; totals come from ``compute_totals`` (run totals only as fallback).
    ``fields`` are the other ``Trajectory`` fields (strings coerced with ``as_str``)."""
    for i, t in enumerate(turns):
        t.__dict__["index"] = i
    values = totals_values(turns, run_total)
    for k in _SUMS:  # each count fits; their sum may not, and the writer cannot write it
        if (v := values[k]) is not None and not in_range(v):
            raise ctx.fail("$", f"the turns' {k} sum to {v}, outside what 64 bits hold")
    values["unknown"] = []
    totals = _new(Totals)
    _set_dict(totals, "__dict__", values)  # totals_values gives the fields in model order
    source = _new(Source)
    _set_dict(source, "__dict__", {"format": fmt, "path": str(ctx.path), "record": ctx.record})
    m = _new(Trajectory)
    d: dict[str, Any] = {  # every field, in model order (the serializer writes them so)
        "format": FORMAT,
        "id": str(id),
        "task_id": None,
        "agent": None,
        "agent_version": None,
        "model": None,
        "run_id": None,
        "instruction": None,
        "system_prompt": None,
        "turns": turns,
        "outcome": outcome if outcome is not None else _new_outcome(tests={}, details={}),
        "totals": totals,
        "source": source,
        "producer": producer(fmt, keep_raw),
        "metadata": {},
        "raw": raw if keep_raw else None,
    }
    for k, v in fields.items():
        if k not in _TRAJ_FIELDS:
            raise TypeError(f"trajectory() got an unexpected field {k!r}")
        d[k] = as_str(v) if k in _TRAJ_STR else v
    _set_dict(m, "__dict__", d)
    return m
