"""SWE-agent ``.traj`` files: 0.x (text actions) and 1.x (function calling), and history-only
demonstrations.

One entry of ``trajectory`` is one model call (``response``, ``action``, ``observation``); in
1.x the matching assistant message of ``history`` carries the native ``tool_calls``. A file with
only ``history`` (a demonstration) is read from its assistant and tool messages. SWE-agent keeps
tokens only per run (``info.model_stats``), so totals carry them with ``usage_source
"run_total"`` and turns have no usage.

Layer: io. Departure: SWE-agent's own commands (``open``, ``find_file``, ``edit``...) are bash
functions in its shell, so ``command`` holds the action text; ``edit``/``create``/``insert`` and
``str_replace_editor`` create/str_replace/insert are ``kind="edit"``, ``submit`` is ``control``.
Replays and demonstrations record ``tokens_sent: 0, tokens_received: 0`` for calls no model
made: those zeros are placeholders, so the totals stay null and ``totals.unknown`` names them
(an average over runs must not count them as free runs). ``model`` comes from
``replay_config.agent.model.name`` (a JSON string in 1.x files) when the file names one, else
from the run folder's config beside it (``args.yaml`` of 0.x: ``agent.model.model_name``;
``config.yaml`` of 1.x: ``agent.model.name``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Outcome, Trajectory

NAME = "swe-agent"
EDIT_WORDS = {"edit", "create", "insert", "append"}
CONTROL_WORDS = {"submit", "exit_forfeit", "exit_cost", "exit_context", "exit_error", "exit_format"}


def _classify(call: Any, action: str) -> Any:
    words = action.strip().split(maxsplit=2)
    head = words[0] if words else ""
    if call.name == "str_replace_editor" or head == "str_replace_editor":
        sub = call.arguments.get("command") if isinstance(call.arguments, dict) else None
        sub = sub or (words[1] if len(words) > 1 else None)
        c.setf(call, "kind", "edit" if sub in c.EDIT_COMMANDS else "other")
    elif head in EDIT_WORDS:
        c.setf(call, "kind", "edit")
    elif head in CONTROL_WORDS or call.name in c.CONTROL_TOOLS:
        c.setf(call, "kind", "control")
    else:
        c.setf(call, "kind", "shell")
    c.setf(call, "command", action if action else call.command)
    return call


def _calls(action: str, native: Any) -> list:
    if native:
        out = []
        for tc in native:
            fn = tc.get("function") or {}
            call = c.tool_call(str(fn.get("name", "")), fn.get("arguments"), tc.get("id"))
            out.append(_classify(call, action if len(native) == 1 else ""))
        return out
    if not action.strip():
        return []
    name = action.strip().split(maxsplit=1)[0]
    return [_classify(c.tool_call(name, {"action": action}), action)]


def _native_calls(actions: list[dict], pos: int, action: str) -> tuple[Any, int]:
    """Tool calls of the history message that made ``action``: the next assistant message at
    or after ``pos`` with the same action (format-error retries in between are passed over)."""
    want = action.strip()
    for j in range(pos, len(actions)):
        if (c.as_str(actions[j].get("action")) or "").strip() == want:
            return actions[j].get("tool_calls"), j + 1
    return None, pos


def _from_trajectory(steps: Any, actions: list[dict], ctx: c.Ctx) -> list:
    turns = []
    pos = 0
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise ctx.fail(f"$.trajectory[{i}]", "expected an object")
        action = c.as_str(step.get("action")) or ""
        native, pos = _native_calls(actions, pos, action)
        calls = _calls(action, native)
        obs = c.as_str(step.get("observation"))
        observations = (
            [c.observation(calls[0].id if calls else None, obs)] if obs is not None else []
        )
        extra = {}
        if step.get("execution_time") is not None:
            extra["execution_time"] = step["execution_time"]
        turns.append(
            c.turn(
                i,
                text=c.as_str(step.get("response")),
                reasoning=None,
                tool_calls=calls,
                observations=observations,
                extra=extra,
            )
        )
    return turns


def _from_history(history: list) -> list:
    turns: list = []
    for msg in history:
        role = msg.get("role")
        if role == "assistant":
            action = c.as_str(msg.get("action")) or ""
            calls = _calls(action, msg.get("tool_calls"))
            turns.append(c.turn(len(turns), text=c.as_str(msg.get("content")), tool_calls=calls))
        elif role == "tool" and turns:
            ids = msg.get("tool_call_ids") or [None]
            turns[-1].observations.append(c.observation(ids[0], c.as_str(msg.get("content"))))
    return turns


def _model(data: dict) -> str | None:
    rc = data.get("replay_config")
    if isinstance(rc, str):
        rc = c.parse_args(rc)
    agent = rc.get("agent") if isinstance(rc, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


RUN_CONFIGS = ("args.yaml", "config.yaml")  # SWE-agent 0.x, 1.x: beside each run's .traj files
_CONFIG_BYTES = 1 << 20
_run_models: dict[tuple, Any] = {}  # (config file, mtime, size) -> model name (parsed once)


def _run_model(folder: Path) -> str | None:
    """The model a run folder's config names: ``agent.model.model_name`` (0.x ``args.yaml``)
    or ``agent.model.name`` (1.x ``config.yaml``); None when there is none or it is unreadable.
    Parsed once per file (a run folder holds a .traj per instance)."""
    for name in RUN_CONFIGS:
        path = folder / name
        try:
            st = path.lstat()
        except OSError:
            continue
        key = (str(path), st.st_mtime_ns, st.st_size)
        if key not in _run_models:
            doc = c.companion(path, yaml=True) if st.st_size <= _CONFIG_BYTES else None
            model = c.as_dict(c.as_dict(c.as_dict(doc).get("agent")).get("model"))
            found = model.get("model_name") or model.get("name")
            _run_models[key] = found if isinstance(found, str) and found else None
        if _run_models[key] is not None:
            return _run_models[key]
    return None


def _run_total(stats: dict) -> tuple[c.Usage | None, list[str]]:
    """Run-level usage, and the token fields that hold only placeholder zeros."""
    sent, received = c.as_int(stats.get("tokens_sent")), c.as_int(stats.get("tokens_received"))
    unknown = []
    if sent == 0 and received == 0:
        sent = received = None
        unknown = ["input_tokens", "output_tokens"]
    cost = c.as_float(stats.get("instance_cost"))
    usage = c.construct(
        c.Usage,
        input_tokens=sent,
        output_tokens=received,
        cost_usd=None if unknown and not cost else cost,
        source="run_total",
    )
    return usage, unknown


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    if not isinstance(data, dict):
        raise ctx.fail("$", "expected an object with 'trajectory' or 'history'")
    history = data.get("history")
    steps = data.get("trajectory")
    if not isinstance(history, list) and not isinstance(steps, list):
        raise ctx.fail("$.trajectory", "missing required field")
    history = [m for m in (history or []) if isinstance(m, dict) and not m.get("is_demo")]
    actions = [m for m in history if m.get("role") == "assistant"]
    turns = _from_trajectory(steps, actions, ctx) if steps else _from_history(history)
    system = next((m.get("content") for m in history if m.get("role") == "system"), None)
    users = [m for m in history if m.get("role") == "user" and m.get("agent") != "demo"]
    instruction = next(
        (c.as_str(m.get("content")) for m in users if "DEMONSTRATION" not in str(m.get("content"))),
        None,
    )
    info = c.as_dict(data.get("info"))
    stats = c.as_dict(info.get("model_stats"))
    run_total, unknown = _run_total(stats) if stats else (None, [])
    stem = ctx.path.name.removesuffix(".traj")
    outcome = c.construct(
        Outcome,
        tests={},
        details={"exit_status": info.get("exit_status"), "submission": info.get("submission")},
    )
    traj = c.trajectory(
        ctx,
        NAME,
        id=stem,
        task_id=stem,
        agent="swe-agent",
        model=_model(data) or _run_model(ctx.path.parent),
        system_prompt=c.as_str(system),
        instruction=instruction,
        turns=turns,
        outcome=outcome,
        run_total=run_total,
        keep_raw=keep_raw,
        raw=data,
        metadata=({"model_stats": stats} if stats else {})
        | c.import_note("swe-agent/trajectory" if steps else "swe-agent/history"),
    )
    if unknown:
        traj.totals.unknown = unknown
        if traj.totals.input_tokens is None and traj.totals.output_tokens is None:
            traj.totals.usage_source = None
    return [traj]
