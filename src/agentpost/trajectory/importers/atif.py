"""Harbor ATIF (Agent Trajectory Interchange Format, ``schema_version: ATIF-v1.x``), as written
by Terminus-2 and harbor's OpenHands converter.

Each ``agent`` step is one model call; ``step_id`` becomes ``Turn.step``. Steps marked
``is_copied_context`` repeat turns recorded elsewhere and are skipped, so nothing is counted
twice. A ``continued_trajectory_ref`` file is stitched in after the last step; the continuation
file on its own is then skipped when a folder is walked. Subagent (summarization) trajectories
import as trajectories of their own; the parent lists them in ``metadata.subagents``.
``prompt_token_ids``/``completion_token_ids``/``logprobs`` go to ``Turn.logprobs``.

Layer: io. Departures: Terminus keystroke calls are ``kind="keystrokes"`` with the keystrokes as
``command`` and ``duration`` kept in the arguments; ``mark_task_complete`` is ``control``. When a
Terminus step has no ``tool_calls`` but its message is Terminus JSON (``commands``,
``task_complete``), the calls are rebuilt from it and the turn says so in
``extra.calls_from_message``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError

from agentpost.ingress.keys import Refused
from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Logprobs, Trajectory, Usage

NAME = "atif"
CONT_RE = re.compile(r"\.cont-(\d+)\.json$")


def _reasoning(m: dict) -> int | None:
    """Reasoning tokens: ATIF has no field of its own; converters put them in ``extra``
    (Gemini CLI ``thoughts_tokens``, Codex ``reasoning_output_tokens``, mini-swe-agent
    ``total_reasoning_tokens``, OpenCode ``reasoning_tokens``)."""
    extra = c.as_dict(m.get("extra"))
    keys = (
        "reasoning_tokens",
        "thoughts_tokens",
        "reasoning_output_tokens",
        "total_reasoning_tokens",
    )
    for key in keys:
        v = c.as_int(m.get(key)) if key in m else c.as_int(extra.get(key))
        if v is not None:
            return v
    details = m.get("completion_tokens_details") or extra.get("completion_tokens_details")
    return c.as_int(details.get("reasoning_tokens")) if isinstance(details, dict) else None


def _usage(m: Any) -> Usage | None:
    if not isinstance(m, dict):
        return None
    return c.new_usage(
        input_tokens=c.as_int(m.get("prompt_tokens")),
        cached_tokens=c.as_int(m.get("cached_tokens")),
        output_tokens=c.as_int(m.get("completion_tokens")),
        reasoning_tokens=_reasoning(m),
        source="reported",
        cost_usd=c.as_float(m.get("cost_usd")),
    )


_INTS = TypeAdapter(list[int])
_FLOATS = TypeAdapter(list[float | None])
_EXACT = {_INTS: (int,), _FLOATS: (float, type(None))}  # the item types each keeps unchanged


def _exactly(value: Any, kinds: tuple[type, ...]) -> bool:
    """Every item's type is one of ``kinds`` exactly (no bool for int, no int for float): the
    lists the adapter would return unchanged."""
    if type(value) is not list:
        return False
    for x in value:
        if type(x) not in kinds:
            return False
    return True


def _checked(adapter: TypeAdapter, value: Any, ctx: c.Ctx, where: str) -> Any:
    """Validate a token-id or logprob list: a list of exactly the right types is copied as it
    is (what validation would return, element for element; the compiled loop costs less than
    the call), anything else goes through the adapter in one Rust call (which coerces, or
    names the first bad place)."""
    if value is None:
        return None
    if _exactly(value, _EXACT[adapter]):
        return value.copy()  # (a new list, as validation gives: never shared with ``raw``)
    try:
        checked = adapter.validate_python(value)
    except ValidationError as e:
        loc = "".join(f"[{p}]" for p in e.errors()[0]["loc"])
        raise ctx.fail(f"{where}{loc}", e.errors()[0]["msg"]) from None
    for i, x in enumerate(checked):  # "9" * 25 validates as an int the writer cannot hold
        if type(x) is int and not c.in_range(x):
            raise ctx.fail(f"{where}[{i}]", "an integer outside what 64 bits hold")
    return checked


def _logprobs(m: Any, ctx: c.Ctx, where: str) -> Logprobs | None:
    if not isinstance(m, dict):
        return None
    ids, lps, pids = m.get("completion_token_ids"), m.get("logprobs"), m.get("prompt_token_ids")
    if not (ids or lps or pids):
        return None
    return c.new_logprobs(
        tokens=None,
        chosen=_checked(_FLOATS, lps, ctx, f"{where}.logprobs"),
        top_logprobs=None,
        top_tokens=None,
        token_ids=_checked(_INTS, ids, ctx, f"{where}.completion_token_ids"),
        prompt_token_ids=_checked(_INTS, pids, ctx, f"{where}.prompt_token_ids"),
    )


def _calls_from_message(message: Any) -> list:
    if not message or not message.lstrip().startswith("{"):
        return []
    try:
        obj = orjson.loads(message)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(obj, dict):
        return []
    calls = [
        c.tool_call("bash_command", cmd)
        for cmd in obj.get("commands") or []
        if isinstance(cmd, dict) and "keystrokes" in cmd
    ]
    if obj.get("task_complete") is True:
        calls.append(c.tool_call("mark_task_complete", {}))
    return calls


def _turn(step: dict, terminus: bool, ctx: c.Ctx, where: str) -> Any:
    calls = [
        c.tool_call(str(tc.get("function_name")), tc.get("arguments"), tc.get("tool_call_id"))
        for tc in c.opt(ctx, step, "tool_calls", where, list)
        if isinstance(tc, dict)
    ]
    extra: dict[str, Any] = {}
    if not calls and terminus and "tool_calls" not in step:
        calls = _calls_from_message(c.as_str(step.get("message")))
        if calls:
            extra["calls_from_message"] = True
    observations = []
    obs = c.opt(ctx, step, "observation", where, dict)
    for r in c.opt(ctx, obs, "results", f"{where}.observation", list):
        if not isinstance(r, dict) or "subagent_trajectory_ref" in r and "content" not in r:
            continue
        call_id = r.get("source_call_id")
        if call_id is None and len(calls) == 1:
            call_id = calls[0].id
        observations.append(c.observation(call_id, c.as_str(r.get("content"))))
    m = step.get("metrics")
    return c.turn(
        0,
        step=c.as_int(step.get("step_id")),
        text=c.as_str(step.get("message")),
        reasoning=c.as_str(step.get("reasoning_content")),
        tool_calls=calls,
        observations=observations,
        usage=_usage(m),
        logprobs=_logprobs(m, ctx, f"{where}.metrics"),
        started_at=step.get("timestamp"),
        extra=extra,
    )


def _continuation(path: Path, ref: str, ctx: c.Ctx) -> tuple[Path, bytes]:
    """The file ``continued_trajectory_ref`` names, beside ``path``: ``ref`` itself, else (for a
    ``*trajectory.json``) ``ref`` after the file's own prefix. The name is read from the file, so
    it is a key below the file's folder (``_common.read_named``: no absolute path, ``..``,
    symlink, hard link or FIFO)."""
    where = "$.continued_trajectory_ref"
    keys = [ref]
    if path.name.endswith("trajectory.json"):
        keys.append(path.name[: -len("trajectory.json")] + ref)
    for key in keys:
        try:
            return path.parent / key, c.read_named(path.parent, key, where="continuation")
        except FileNotFoundError:
            continue
        except Refused as e:
            raise ctx.fail(where, f"{ref[:200]!r} is not a plain file beside it: {e}") from None
        except OSError as e:
            raise ctx.fail(where, f"cannot read {ref[:200]!r}: {e.strerror}") from None
    raise ctx.fail(where, f"cannot read {ref[:200]!r}: no such file beside it")


def _steps(data: dict, ctx: c.Ctx, meta: dict, depth: int = 0) -> list:
    steps = c.req(ctx, data, "steps", "$", list)
    terminus = str((data.get("agent") or {}).get("name", "")).startswith("terminus")
    out = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or "source" not in step:
            raise ctx.fail(f"$.steps[{i}].source", "missing required field")
        if step.get("is_copied_context"):
            continue
        src = step["source"]
        if src == "agent":
            out.append(_turn(step, terminus, ctx, f"$.steps[{i}]"))
        elif src == "user" and meta.get("instruction") is None:
            meta["instruction"] = c.as_str(step.get("message"))
        elif src == "system":
            if meta.get("system_prompt") is None and not out:
                meta["system_prompt"] = c.as_str(step.get("message"))
            obs = c.opt(ctx, step, "observation", f"$.steps[{i}]", dict)
            for r in c.opt(ctx, obs, "results", f"$.steps[{i}].observation", list):
                for ref in (
                    r.get("subagent_trajectory_ref") if isinstance(r, dict) else None
                ) or []:
                    meta.setdefault("subagents", []).append(ref)
    ref = data.get("continued_trajectory_ref")
    if isinstance(ref, str) and depth < 20:
        cont, raw = _continuation(ctx.path, ref, ctx)
        try:
            cdata = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ctx.fail("$.continued_trajectory_ref", f"{ref}: invalid JSON: {e.msg}") from None
        meta.setdefault("continuations", []).append(cont.name)
        out += _steps(cdata, c.Ctx(cont, ctx.record), meta, depth + 1)
    return out


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    c.req(ctx, data, "schema_version", "$", str)
    agent = c.as_dict(data.get("agent"))
    extra = c.as_dict(agent.get("extra"))
    m = CONT_RE.search(ctx.path.name)
    if extra.get("continuation_index") is not None and m:
        parent = ctx.path.with_name(CONT_RE.sub(".json", ctx.path.name))
        if parent.is_file():
            raise c.NotATrajectory(f"continuation, stitched into {parent.name}")
    meta: dict[str, Any] = {}
    turns = _steps(data, ctx, meta)
    fm = c.as_dict(data.get("final_metrics"))
    run_total = None
    if fm and not any(t.usage for t in turns):
        run_total = c.new_usage(
            input_tokens=c.as_int(fm.get("total_prompt_tokens")),
            cached_tokens=c.as_int(fm.get("total_cached_tokens")),
            output_tokens=c.as_int(fm.get("total_completion_tokens")),
            reasoning_tokens=_reasoning(fm),
            cost_usd=c.as_float(fm.get("total_cost_usd")),
            source="run_total",
        )
    metadata = {"schema_version": data["schema_version"], "final_metrics": fm}
    for k in ("subagents", "continuations"):
        if k in meta:
            metadata[k] = meta[k]
    if "parent_session_id" in extra:
        metadata["parent_session_id"] = extra["parent_session_id"]
    return [
        c.trajectory(
            ctx,
            NAME,
            id=str(data.get("session_id") or ctx.path.stem),
            agent=agent.get("name"),
            agent_version=agent.get("version"),
            model=agent.get("model_name"),
            system_prompt=meta.get("system_prompt"),
            instruction=meta.get("instruction"),
            turns=turns,
            run_total=run_total,
            keep_raw=keep_raw,
            raw=data,
            metadata=metadata,
        )
    ]
