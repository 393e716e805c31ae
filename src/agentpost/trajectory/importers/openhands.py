"""OpenHands v0 events: event lists (``[{id, source, action|observation, ...}]``), session
folders (``sessions/<id>/events/N.json``, one event per file, read by ``openhands_session``) and,
through ``openhands_eval``, the ``history`` of evaluation output lines.

One turn is one LLM response: agent actions that share ``tool_call_metadata.model_response.id``
are its parallel tool calls. Usage, strongest first: the response's own ``usage`` (reported);
the record's ``metrics.token_usages`` entry with the same ``response_id`` (reported); the
difference of the cumulative ``llm_metrics.accumulated_token_usage`` (``running_total_diff``).
Observations join their action through ``cause``; ``extras.metadata.exit_code`` (2024:
``extras.exit_code``) is the exit code; ``error`` observations are ``is_error``. The last ``agent_state_changed`` state
(``finished``, ``error``, ``stopped``, ``awaiting_user_input``...) is the run's exit status
(``outcome.details.exit_status``). Cross-check: a cumulative counter that goes down gives no
difference (the turn's count is unknown, and the import says where).

Layer: io. Departure: an ``error`` observation with no ``cause`` after a finished turn becomes a
turn of its own with no tool call (``extra.failed_call``): the model was called, but its reply
held no valid action (e.g. a bad tool argument). Its usage is unknown unless cumulative metrics
say it, because OpenHands leaves such calls out of ``token_usages``.
"""

from __future__ import annotations

from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Outcome, Trajectory, Usage

NAME = "openhands-v0"
_COUNTERS = ("prompt_tokens", "cache_read_tokens", "completion_tokens")
NOT_MODEL_CALLS = {"system", "recall", "condensation", "change_agent_state", "null"}
LEGACY_TOOLS = {"run": "execute_bash", "edit": "str_replace_editor", "finish": "finish"}


def _cumulative(ev: dict) -> tuple | None:
    metrics = ev.get("llm_metrics") or {}
    acc = metrics.get("accumulated_token_usage")
    if not isinstance(acc, dict):
        return None
    # a counter the source does not keep stays None (its difference is unknown, not 0)
    return (
        c.as_int(acc.get("prompt_tokens")),
        c.as_int(acc.get("cache_read_tokens")),
        c.as_int(acc.get("completion_tokens")),
        c.as_float(metrics.get("accumulated_cost")),
    )


def _legacy_call(ev: dict) -> Any:
    args = c.as_dict(ev.get("args"))
    action = str(ev.get("action"))
    name = LEGACY_TOOLS.get(action, action)
    call = c.tool_call(name, args)
    if action == "edit":  # the pre-function-calling LLM editor: an edit whatever its arguments
        c.setf(call, "kind", "edit")
    return call


def _calls_from_metadata(meta: dict) -> tuple[list, Any, Any]:
    """The call of this action, the response's message and its first choice."""
    resp = c.as_dict(meta.get("model_response"))
    choice = (resp.get("choices") or [{}])[0] or {}
    msg = choice.get("message") or {}
    wanted = meta.get("tool_call_id")
    for tc in msg.get("tool_calls") or []:
        if tc.get("id") == wanted:
            fn = tc.get("function") or {}
            return [c.tool_call(str(fn.get("name")), fn.get("arguments"), wanted)], msg, choice
    return [c.tool_call(str(meta.get("function_name")), None, wanted)], msg, choice


_EVENT_KEYS = {"action", "action_risk", "is_confirmed", "keep_prompt", "images_urls"}


def _sourceless(ev: dict, i: int, last_action: Any) -> dict | None:
    """Early resolver output logs events without ``source``, ``id`` or ``cause``: actions are
    the agent's with their fields flat (``command``, ``code``, ``thought``), observations answer
    the action before them, a first ``message`` or bare ``content`` event is the user's task. Anything else stays unreadable (the caller names it)."""
    if i == 0 and ev.get("action") == "message":
        return {"source": "user", "action": "message", "args": {"content": ev.get("content")}}
    if "action" in ev:
        flat = {k: v for k, v in ev.items() if k not in _EVENT_KEYS}
        return {"source": "agent", "id": f"#{i}", "action": ev["action"], "args": flat}
    if "observation" in ev:
        return {"source": "environment", "cause": last_action, **ev}
    if i == 0 and isinstance(ev.get("content"), str):
        return {"source": "user", "action": "message", "args": {"content": ev["content"]}}
    return None


class _Builder:
    def __init__(self, token_usages: Any):
        self.turns: list = []
        self.by_response: dict[str, Any] = {}
        self.by_event: dict[Any, Any] = {}
        self.per_call = {u.get("response_id"): u for u in token_usages or [] if isinstance(u, dict)}
        self.last_cum: Any = (0, 0, 0, 0.0)
        # JSON-derived values, kept as the source typed them (Any: compiled code checks
        # nothing here that the interpreter does not)
        self.system: Any = None
        self.instruction: Any = None
        self.model: Any = None
        self.final_state: str | None = None
        self.warnings: list[list[str]] = []

    def _usage(self, resp: dict, ev: dict) -> Usage | None:
        usage = c.usage_from_openai(resp.get("usage"))
        rid = resp.get("id")
        per_call = self.per_call.get(rid) if rid is not None else None
        if usage is None and per_call is not None:
            usage = c.usage_from_openai(per_call)
        if usage is not None and usage.cached_tokens is None and per_call is not None:
            # litellm's usage often lacks cache details; the per-call record keeps them
            c.setf(usage, "cached_tokens", c.as_int(per_call.get("cache_read_tokens")))
        cum = _cumulative(ev)
        if cum is not None:
            if usage is None:
                d = [
                    None if a is None else a - (b or 0)
                    for a, b in zip(cum, self.last_cum, strict=True)
                ]
                for i in range(3):  # two counters of any size may differ by more than 64 bits
                    x = d[i]
                    if x is not None and not c.in_range(x):
                        d[i] = None
                    elif x is not None and x < 0:  # a running counter went down: no count
                        d[i] = None
                        self.warnings.append(
                            [
                                f"event {ev.get('id')}: llm_metrics.accumulated_token_usage",
                                f"{_COUNTERS[i]} went down by {-x} (the difference is no count)",
                            ]
                        )
                usage = c.new_usage(
                    input_tokens=d[0],
                    cached_tokens=d[1],
                    output_tokens=d[2],
                    reasoning_tokens=None,
                    source="running_total_diff",
                    cost_usd=d[3] or None,
                )
            self.last_cum = cum
        return usage

    def action(self, ev: dict) -> None:
        meta = ev.get("tool_call_metadata")
        if isinstance(meta, dict):
            resp = meta.get("model_response") or {}
            key = resp.get("id")
            calls, msg, choice = _calls_from_metadata(meta)
            self.model = self.model or resp.get("model")
            if key is not None and key in self.by_response:
                t = self.by_response[key]
                t.tool_calls.extend(calls)
            else:
                args = ev.get("args") or {}
                t = c.turn(
                    len(self.turns),
                    text=c.as_str(msg.get("content")) or c.as_str(args.get("thought")) or None,
                    reasoning=c.as_str(msg.get("reasoning_content")),
                    tool_calls=calls,
                    usage=self._usage(resp, ev),
                    logprobs=c.logprobs_from_openai(choice.get("logprobs")),
                    started_at=ev.get("timestamp"),
                )
                self.turns.append(t)
                if key is not None:
                    self.by_response[key] = t
        else:
            args = ev.get("args") or {}
            calls = [] if ev.get("action") == "message" else [_legacy_call(ev)]
            text = (
                c.as_str(args.get("content")) or c.as_str(args.get("thought")) or ev.get("message")
            )
            t = c.turn(len(self.turns), text=text, tool_calls=calls, started_at=ev.get("timestamp"))
            c.setf(t, "usage", self._usage({}, ev))
            self.turns.append(t)
        self.by_event[ev.get("id")] = t

    def _failed_call(self, ev: dict) -> Any:
        """The turn an uncaused ``error`` observation belongs to. After a turn whose calls all
        have results it is a model call of its own whose reply had no valid action (OpenHands
        logs such a call in ``metrics.response_latencies`` but not in ``token_usages``); while
        a call still waits for its result, it is that result."""
        last = self.turns[-1] if self.turns else None
        if last is not None and len(last.observations) < max(len(last.tool_calls), 1):
            return last
        t = c.turn(len(self.turns), tool_calls=[], started_at=ev.get("timestamp"))
        c.setf(t, "usage", self._usage({}, ev))
        c.setf(t, "extra", {"failed_call": True})
        self.turns.append(t)
        return t

    def observation(self, ev: dict) -> None:
        t = self.by_event.get(ev.get("cause"))
        is_err = True if ev.get("observation") == "error" else None
        if t is None:
            if not is_err:
                return
            t = self._failed_call(ev)
        meta = ev.get("tool_call_metadata") or {}
        extras = c.as_dict(ev.get("extras"))
        md = c.as_dict(extras.get("metadata"))
        suffix = str(md.get("suffix") or "")
        timed_out = True if "timed out" in suffix or "timeout" in suffix.lower() else None
        call_id = meta.get("tool_call_id")
        if call_id is None and len(t.tool_calls) == 1:
            call_id = t.tool_calls[0].id
        text = ev.get("content") if isinstance(ev.get("content"), str) else ev.get("message")
        t.observations.append(
            c.observation(
                call_id,
                text,
                c.as_int(md.get("exit_code", extras.get("exit_code", ev.get("exit_code")))),
                is_err,
                timed_out,
            )
        )

    def feed(self, events: list, ctx: c.Ctx, where: str) -> None:
        last_action = None
        for i, ev in enumerate(events):
            if isinstance(ev, dict) and "source" not in ev:
                ev = _sourceless(ev, i, last_action)
            if not isinstance(ev, dict) or "source" not in ev:
                raise ctx.fail(f"{where}[{i}].source", "missing required field")
            if "action" in ev:
                last_action = ev.get("id")
                act = ev["action"]
                if act == "system":
                    self.system = c.as_str((ev.get("args") or {}).get("content")) or ev.get(
                        "message"
                    )
                elif ev["source"] == "user" and act == "message":
                    if self.instruction is None:
                        self.instruction = c.as_str((ev.get("args") or {}).get("content"))
                elif ev["source"] == "agent" and act not in NOT_MODEL_CALLS:
                    self.action(ev)
            elif "observation" in ev:
                if ev["observation"] == "agent_state_changed":
                    extras = c.as_dict(ev.get("extras"))
                    self.final_state = c.as_str(extras.get("agent_state")) or self.final_state
                    continue
                self.observation(ev)


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list[Trajectory]:
    """An event list (``tests/runtime/trajs/*.json``, harbor's ``openhands_trajectory.json``)."""
    if not isinstance(data, list):
        raise ctx.fail("$", "expected a list of events")
    b = _Builder(None)
    b.feed(data, ctx, "$")
    stem = ctx.path.name.removesuffix(".json")
    outcome = c.construct(Outcome, tests={}, details={"exit_status": b.final_state})
    return [
        c.trajectory(
            ctx,
            NAME,
            id=stem,
            agent="openhands",
            model=b.model,
            system_prompt=b.system,
            instruction=b.instruction,
            turns=b.turns,
            outcome=outcome,
            keep_raw=keep_raw,
            raw=data,
            metadata=c.import_note("openhands-v0/events", b.warnings),
        )
    ]
