"""OpenHands V1 SDK event log: an ``events.jsonl`` export, or a persisted conversation folder
(``<id>/events/event-NNNNN-<event id>.json``, one event per file, and ``<id>/base_state.json``,
which gives the model). Events: ``ActionEvent``, ``ObservationEvent``, ``MessageEvent``,
``AgentErrorEvent`` and ``ConversationStateUpdateEvent`` (``stats``).

One turn is one LLM response (``llm_response_id``). The SDK logs no per-call usage, only the
cumulative ``stats`` snapshots, so a turn's usage is the difference between the snapshot before
it and the one before the previous turn (``running_total_diff``); the sum over turns therefore
equals the last snapshot before the last turn. Snapshots add up every LLM in ``usage_to_metrics``
(agent and condenser).

Layer: io. Departure: an observation whose action event is missing (a truncated log) becomes a
turn rebuilt from the observation (``extra.reconstructed``), since it proves a model call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from agentpost.trajectory.importers import _common as c

NAME = "openhands-v1"
# The SDK's persistence layout (``openhands.sdk.conversation.persistence_const``)
EVENT_FILE_RE = re.compile(r"^event-(\d{5,})-[0-9a-fA-F\-]{8,}\.json$")
STATE_FILE = "base_state.json"


def _snapshot(value: Any) -> tuple:
    tot = [0, 0, 0, 0, 0.0]
    for m in ((value or {}).get("usage_to_metrics") or {}).values():
        acc = (m or {}).get("accumulated_token_usage") or {}
        for i, k in enumerate(
            ("prompt_tokens", "cache_read_tokens", "completion_tokens", "reasoning_tokens")
        ):
            tot[i] += c.as_int(acc.get(k)) or 0
        tot[4] += c.as_float((m or {}).get("accumulated_cost")) or 0.0
    return tuple(tot)


class _Builder:
    def __init__(self) -> None:
        self.turns: list = []
        self.by_response: dict[str, Any] = {}
        self.by_call: dict[str, Any] = {}
        self.snap: tuple | None = None
        self.at_last_turn: tuple = (0, 0, 0, 0, 0.0)
        self.system: Any = None
        self.instruction: Any = None

    def _new_turn(self, ev: dict, **fields: Any) -> Any:
        usage = None
        if self.snap is not None:
            d = [a - b for a, b in zip(self.snap, self.at_last_turn, strict=True)]
            usage = c.new_usage(
                input_tokens=d[0],
                cached_tokens=d[1],
                output_tokens=d[2],
                reasoning_tokens=d[3] or None,
                source="running_total_diff",
                cost_usd=d[4] or None,
            )
            self.at_last_turn = self.snap
        t = c.turn(len(self.turns), usage=usage, started_at=ev.get("timestamp"), **fields)
        self.turns.append(t)
        return t

    def action(self, ev: dict) -> None:
        tc = c.as_dict(ev.get("tool_call"))
        call_id = tc.get("id") or ev.get("tool_call_id")
        call = c.tool_call(str(tc.get("name") or ev.get("tool_name")), tc.get("arguments"), call_id)
        action = c.as_dict(ev.get("action"))
        if call.command is None and call.kind == "shell":
            call.command = c.as_str(action.get("command"))
        key = ev.get("llm_response_id")
        t = self.by_response.get(key) if key else None
        if t is None:
            t = self._new_turn(
                ev,
                text=c.as_str(ev.get("thought")),
                reasoning=c.as_str(ev.get("reasoning_content")),
                tool_calls=[],
            )
            if key:
                self.by_response[key] = t
        t.tool_calls.append(call)
        if call_id:
            self.by_call[call_id] = t

    def observation(self, ev: dict, is_error: bool | None = None) -> None:
        call_id: Any = ev.get("tool_call_id")
        obs = c.as_dict(ev.get("observation"))
        t = self.by_call.get(call_id)
        if t is None:
            cmd = obs.get("command")
            call = c.tool_call(str(ev.get("tool_name")), {"command": cmd} if cmd else None, call_id)
            t = self._new_turn(ev, tool_calls=[call], extra={"reconstructed": True})
            self.by_call[call_id] = t
        text = c.as_str(obs.get("content")) if obs else c.as_str(ev.get("error"))
        err = obs.get("is_error") if isinstance(obs.get("is_error"), bool) else is_error
        timeout = obs.get("timeout") if isinstance(obs.get("timeout"), bool) else None
        t.observations.append(
            c.observation(call_id, text, c.as_int(obs.get("exit_code")), err, timeout)
        )

    def feed(self, ev: dict) -> None:
        kind = ev.get("kind")
        if kind == "ConversationStateUpdateEvent" and ev.get("key") == "stats":
            self.snap = _snapshot(ev.get("value"))
        elif kind == "ActionEvent":
            self.action(ev)
        elif kind == "ObservationEvent":
            self.observation(ev)
        elif kind in ("AgentErrorEvent", "UserRejectObservation"):
            self.observation(ev, is_error=True)
        elif kind == "SystemPromptEvent":
            self.system = c.as_str((ev.get("system_prompt") or {}).get("text"))
        elif kind == "MessageEvent":
            msg = ev.get("llm_message") or {}
            text = c.as_str(msg.get("content"))
            if ev.get("source") == "user" and self.instruction is None:
                self.instruction = text
            elif ev.get("source") == "agent":
                self._new_turn(ev, text=text, reasoning=c.as_str(msg.get("reasoning_content")))


def _build(events: list[tuple[Path, str, Any]]) -> _Builder:
    """Feed ``(file, place prefix, event)`` in order; an event without ``kind`` is an error."""
    b = _Builder()
    for path, where, ev in events:
        if not isinstance(ev, dict) or "kind" not in ev:
            raise c.InputError(path, f"{where}$.kind", "missing required field")
        b.feed(ev)
    return b


def _trajectory(b: _Builder, ctx: c.Ctx, id: str, keep_raw: bool, raw: list, **fields: Any) -> Any:
    return c.trajectory(
        ctx,
        NAME,
        id=id,
        agent="openhands",
        system_prompt=b.system,
        instruction=b.instruction,
        turns=b.turns,
        keep_raw=keep_raw,
        raw=raw,
        **fields,
    )


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    """An ``events.jsonl`` export: one event per line."""
    b = _build([(ctx.path, f"line {n}: ", ev) for n, ev in lines])
    stem = ctx.path.parent.name if ctx.path.name == "events.jsonl" else ctx.path.stem
    return [_trajectory(b, ctx, stem, keep_raw, [ev for _, ev in lines])]


def event_index(path: Path) -> int | None:
    """``NNNNN`` of a persisted event file ``events/event-NNNNN-<event id>.json``, else None."""
    m = EVENT_FILE_RE.match(path.name)
    return int(m.group(1)) if m and path.parent.name == "events" else None


def _model(conversation: Path) -> str | None:
    """``agent.llm.model`` of the conversation's ``base_state.json``, when it is readable."""
    try:
        state = orjson.loads((conversation / STATE_FILE).read_bytes())
        return c.as_str(state["agent"]["llm"]["model"])
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return None


def convert_events(events: list[tuple[Path, Any]], keep_raw: bool = False) -> list:
    """A persisted conversation (``<id>/events/event-NNNNN-<event id>.json``, one event per file,
    beside ``<id>/base_state.json``): the events in index order make one trajectory, named after
    the conversation folder. ``events`` are ``(file, parsed event)`` of one ``events`` folder."""
    events = sorted(events, key=lambda pe: event_index(pe[0]) or 0)
    conversation = events[0][0].parent.parent
    b = _build([(path, "", ev) for path, ev in events])
    ctx = c.Ctx(conversation)
    raw = [ev for _, ev in events]
    return [_trajectory(b, ctx, conversation.name, keep_raw, raw, model=_model(conversation))]
