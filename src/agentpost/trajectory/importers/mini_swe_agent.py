"""mini-swe-agent ``.traj.json``: v1 (``mini-swe-agent-1``) and v2 (``mini-swe-agent-1.1``).

v1 keeps one bash block per assistant message (parsed with mini's default action regex) and the
observation as a ``<returncode>`` user message; the raw LLM response, with usage, sits in
``extra.response``. v2 (read from mini-swe-agent 2.x ``DefaultAgent.serialize`` and
``format_toolcall_observation_messages``) adds ``extra.actions`` (``command``, ``tool_call_id``),
native ``tool_calls``, ``tool`` messages with ``extra.returncode`` and a final ``exit`` message.
A SWE-bench ``logs/<instance>/report.json`` beside the ``trajs/`` folder sets the outcome.

Layer: io. Departure: ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` (mini's submit) is kept as a
shell command but has ``kind="control"`` so replay does not re-run it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from agentpost.ingress.keys import Refused
from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Outcome, Trajectory

NAME = "mini-swe-agent"
ACTION_RE = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_ACTION_START = re.compile(r"```bash\s*\n")
RETURNCODE_RE = re.compile(r"<returncode>(-?\d+)</returncode>")
SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")


def _layout(data: dict) -> str:
    """``mini-swe-agent/1`` or ``mini-swe-agent/1.1`` (``trajectory_format``), else ``mini-swe-agent``."""
    fmt = data.get("trajectory_format")
    if isinstance(fmt, str) and fmt in ("mini-swe-agent-1", "mini-swe-agent-1.1"):
        return "mini-swe-agent/" + fmt[len("mini-swe-agent-") :]
    return "mini-swe-agent"


def _submit_is_control(call: Any) -> Any:
    """mini's submit is a shell command; replay must not re-run it."""
    command = call.command
    if command and (SUBMIT[0] in command or SUBMIT[1] in command):
        c.setf(call, "kind", "control")
    return call


def _actions(text: str) -> list[str]:
    """``ACTION_RE.findall(text)``, found with ``str.find``: the regex's lazy ``(.*?)`` costs
    a backtracking step per character of every assistant message, the import's largest single
    cost on mini logs. Where the quick path cannot be sure (no closing fence after the
    greedy newline), the regex itself decides from that point on."""
    found: list[str] = []
    pos = 0
    while (i := text.find("```bash", pos)) >= 0:
        m = _ACTION_START.match(text, i)
        if m is None:
            pos = i + 1
            continue
        end = text.find("\n```", m.end())
        if end < 0:  # only backtracking into the whitespace run could match: ask the regex
            return found + ACTION_RE.findall(text, i)
        found.append(text[m.end() : end])
        pos = end + 4
    return found


def _bash(command: str, call_id: Any) -> Any:
    return _submit_is_control(c.tool_call("bash", {"command": command}, call_id))


def _responses_output(msg: dict) -> tuple[str | None, str | None, list]:
    """Text, reasoning and calls of a Responses-API message (mini's ``litellm_response`` model
    stores ``response.model_dump()`` itself: ``output`` items instead of ``content``)."""
    texts, thoughts, calls = [], [], []
    for item in msg.get("output") or []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            texts += [
                c.as_str(p.get("text")) or ""
                for p in item.get("content") or []
                if isinstance(p, dict)
            ]
        elif kind == "reasoning":
            thoughts += [
                c.as_str(p.get("text")) or ""
                for p in item.get("summary") or []
                if isinstance(p, dict)
            ]
        elif kind == "function_call":
            call = c.tool_call(str(item.get("name")), item.get("arguments"), item.get("call_id"))
            calls.append(_submit_is_control(call))
    return "\n".join(texts) or None, "\n".join(thoughts) or None, calls


def _assistant_turn(msg: dict, index: int) -> Any:
    extra = c.as_dict(msg.get("extra"))
    response = extra.get("response") if isinstance(extra.get("response"), dict) else None
    usage_src = response.get("usage") if response else msg.get("usage")  # v2 Responses API
    usage = c.usage_from_openai(usage_src, cost=extra.get("cost"))
    text = c.as_str(msg.get("content"))
    reasoning = c.as_str(msg.get("reasoning_content") or msg.get("reasoning"))
    choice = (response.get("choices") or [None])[0] if response else None
    logprobs = None
    if isinstance(choice, dict):
        rmsg = choice.get("message") or {}
        reasoning = reasoning or c.as_str(rmsg.get("reasoning_content") or rmsg.get("reasoning"))
        logprobs = c.logprobs_from_openai(choice.get("logprobs"))
    calls = []
    if isinstance(msg.get("tool_calls"), list):
        for tc in msg["tool_calls"]:
            fn = tc.get("function") or {}
            call = c.tool_call(str(fn.get("name", "bash")), fn.get("arguments"), tc.get("id"))
            calls.append(_submit_is_control(call))
    elif msg.get("object") == "response":
        text, reasoning, calls = _responses_output(msg)
    elif isinstance(extra.get("actions"), list):
        calls = [
            _bash(str(a.get("command", "")), a.get("tool_call_id"))
            for a in extra["actions"]
            if isinstance(a, dict)
        ]
    elif text is not None:
        found = _actions(text)
        if len(found) == 1:  # mini v1 rejects any other count as a format error
            calls = [_bash(found[0].strip(), None)]
    ts = extra.get("timestamp")
    return c.turn(
        index,
        text=text,
        reasoning=reasoning,
        tool_calls=calls,
        usage=usage,
        logprobs=logprobs,
        started_at=str(ts) if ts is not None else None,
    )


def _observation(msg: dict, turn: Any) -> Any:
    text = c.as_str(msg.get("content"))
    extra = c.as_dict(msg.get("extra"))
    call_id = msg.get("tool_call_id")
    if call_id is None and len(turn.tool_calls) == 1:
        call_id = turn.tool_calls[0].id
    exit_code = c.as_int(extra.get("returncode"))
    timed_out = None
    if exit_code is None and text:
        m = RETURNCODE_RE.search(text, 0, 200)
        exit_code = c.as_int(m.group(1)) if m else None
        if text.startswith("The last command <command>") and "timed out" in text[:2000]:
            timed_out = True
    info = extra.get("exception_info")
    if isinstance(info, str) and "timed out" in info.lower():
        timed_out = True
    return c.observation(call_id, text, exit_code, None, timed_out)


def _report(path: Path, instance: Any) -> Outcome | None:
    """SWE-bench harness report for ``instance`` in a ``logs/`` folder beside ``trajs/`` (up to
    four folders above the file). ``instance`` is read from the file, so it must be one plain
    name, and ``logs/<instance>/report.json`` is read by descent (``_common.read_named``): an
    absolute or climbing id, or a link on the way, reads nothing."""
    if not isinstance(instance, str) or not instance or "/" in instance or instance in (".", ".."):
        return None
    key = f"logs/{instance}/report.json"
    base = os.path.dirname(os.path.abspath(path))  # str paths: this runs once per file
    for _ in range(4):
        rp = os.path.join(base, key)
        root, base = base, os.path.dirname(base)
        if os.path.isfile(rp):
            try:
                rep = orjson.loads(c.read_named(Path(root), key, where="report"))
            except (orjson.JSONDecodeError, OSError, Refused):
                return None
            rep = rep.get(instance, rep) if isinstance(rep, dict) else {}
            tests: dict[str, str] = {}
            for group in (rep.get("tests_status") or {}).values():
                for name in group.get("success", []):
                    tests[str(name)] = "PASSED"
                for name in group.get("failure", []):
                    tests[str(name)] = "FAILED"
            resolved = rep.get("resolved")
            return c.construct(
                Outcome,
                resolved=resolved if isinstance(resolved, bool) else None,
                reward=None if not isinstance(resolved, bool) else float(resolved),
                tests=tests,
                evaluator="swebench-harness",
                details={"report": str(rp)},
            )
    return None


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    info = c.req(ctx, data, "info", "$", dict)
    messages = c.req(ctx, data, "messages", "$", list)
    turns: list[Any] = []
    system = instruction = None
    exit_status, submission = info.get("exit_status"), info.get("submission")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ctx.fail(f"$.messages[{i}]", "expected an object")
        if msg.get("type") == "function_call_output" and turns:  # Responses-API observation
            obs = {**msg, "content": msg.get("output"), "tool_call_id": msg.get("call_id")}
            turns[-1].observations.append(_observation(obs, turns[-1]))
            continue
        role = msg.get("role") or ("assistant" if msg.get("object") == "response" else None)
        if not isinstance(role, str):
            raise ctx.fail(f"$.messages[{i}].role", "missing required field")
        if role == "system" and system is None:
            system = c.as_str(msg.get("content"))
        elif role == "assistant":
            turns.append(_assistant_turn(msg, len(turns)))
        elif role in ("user", "tool"):
            if not turns:
                instruction = instruction or c.as_str(msg.get("content"))
            else:
                turns[-1].observations.append(_observation(msg, turns[-1]))
        elif role == "exit":
            extra = msg.get("extra") or {}
            exit_status = extra.get("exit_status", exit_status)
            submission = extra.get("submission", submission)
    config = info.get("config") or {}
    instance = data.get("instance_id") or ctx.path.name.split(".")[0]
    outcome = _report(ctx.path, data.get("instance_id") or instance)
    outcome = outcome or c.construct(Outcome, tests={}, details={})
    outcome.details.update({"exit_status": exit_status, "submission": submission})
    stats = info.get("model_stats") or {}
    run_total = None
    if not any(t.usage for t in turns) and c.as_float(stats.get("instance_cost")) is not None:
        run_total = c.construct(c.Usage, cost_usd=c.as_float(stats.get("instance_cost")))
    return [
        c.trajectory(
            ctx,
            NAME,
            id=instance,
            task_id=data.get("instance_id"),
            agent="mini-swe-agent",
            agent_version=c.as_str(info.get("mini_version")),
            model=c.as_str((config.get("model") or {}).get("model_name")),
            system_prompt=system,
            instruction=instruction,
            turns=turns,
            outcome=outcome,
            run_total=run_total,
            keep_raw=keep_raw,
            raw=data,
            metadata={
                "trajectory_format": data.get("trajectory_format"),
                "model_stats": stats,
            }
            | c.import_note(_layout(data)),
        )
    ]
