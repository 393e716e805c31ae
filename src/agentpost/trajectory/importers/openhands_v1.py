"""OpenHands V1 SDK event log: an ``events.jsonl`` export or a JSON list of events, a persisted
conversation folder (``<id>/events/event-NNNNN-<event id>.json``, one event per file, and
``<id>/base_state.json``, which gives the model and the per-call usage), or the ``history`` of
one line of a V1
evaluation ``output.jsonl`` (``openhands.py`` hands such lines here). Events: ``ActionEvent``,
``ObservationEvent``, ``MessageEvent``, ``AgentErrorEvent`` and ``ConversationStateUpdateEvent``
(``stats``).

One turn is one LLM response (``llm_response_id``). Usage, strongest first: the response's
entry in a ``token_usages`` list (``response_id``; the evaluation line's ``metrics`` or the
folder's ``base_state.json`` ``stats``), reported; else the difference between the cumulative
``stats`` snapshot before the turn and the one before the previous turn
(``running_total_diff``; snapshots add up every LLM in ``usage_to_metrics``, agent and
condenser), so the sum over turns equals the last snapshot before the last turn.

Two event layouts (``LAYOUTS``), both read. The early SDK (autumn 2025) kept litellm's tool
call (``tool_call.function.name/arguments``, until SDK PR #550, 2025-10-02), the tool output in
``observation.output`` (or ``message``) with an ``error`` flag or text and the exit code only in
``observation.metadata.exit_code`` (until PR #929, 2025-11-05), a cumulative ``metrics``
snapshot on a response's last action, and stats under ``service_to_metrics``; the current one
``tool_call.name/arguments``, ``content`` parts, ``is_error``, ``exit_code`` and
``usage_to_metrics``. An action event with neither tool-call
shape is an error naming both, never a call with no name.

Layer: io. Departure: an observation whose action event is missing (a truncated log) becomes a
turn rebuilt from the observation (``extra.reconstructed``), since it proves a model call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentpost.trajectory.importers import _common as c

NAME = "openhands-v1"
# The SDK's persistence layout (``openhands.sdk.conversation.persistence_const``)
EVENT_FILE_RE = re.compile(r"^event-(\d{5,})-[0-9a-fA-F\-]{8,}\.json$")
STATE_FILE = "base_state.json"


LAYOUTS = ("openhands-v1/current", "openhands-v1/early")
KINDS = frozenset(
    {"ActionEvent", "ObservationEvent", "MessageEvent", "AgentErrorEvent", "SystemPromptEvent",
     "ConversationStateUpdateEvent", "UserRejectObservation"}
)  # fmt: skip
_SNAP_KEYS = ("prompt_tokens", "cache_read_tokens", "completion_tokens", "reasoning_tokens")


def _snapshot(value: Any) -> tuple:
    tot = [0, 0, 0, 0, 0.0]
    v = c.as_dict(value)
    metrics = c.as_dict(v.get("usage_to_metrics") or v.get("service_to_metrics"))
    for m in metrics.values():
        m = c.as_dict(m)
        acc = c.as_dict(m.get("accumulated_token_usage"))
        for i, k in enumerate(_SNAP_KEYS):
            tot[i] += c.as_int(acc.get(k)) or 0
        tot[4] += c.as_float(m.get("accumulated_cost")) or 0.0
    return tuple(tot)


def per_call_usage(token_usages: Any) -> dict[str, Any]:
    """``response_id`` -> that call's ``Usage`` (reported), from a ``token_usages`` list."""
    out: dict[str, Any] = {}
    for u in token_usages if isinstance(token_usages, list) else []:
        if isinstance(u, dict) and isinstance(u.get("response_id"), str) and u["response_id"]:
            out[u["response_id"]] = c.new_usage(
                input_tokens=c.as_int(u.get("prompt_tokens")),
                cached_tokens=c.as_int(u.get("cache_read_tokens")),
                output_tokens=c.as_int(u.get("completion_tokens")),
                reasoning_tokens=c.as_int(u.get("reasoning_tokens")) or None,
                source="reported",
                cost_usd=None,
            )
    return out


class UnknownLayout(ValueError):
    """An event of a shape neither layout has (raised by the builder, named by ``_build``)."""


def _tool_call(ev: dict) -> tuple[Any, bool]:
    """The action's call, and whether it had the old litellm shape."""
    tc = c.as_dict(ev.get("tool_call"))
    fn = tc.get("function")
    old = isinstance(fn, dict)
    src = fn if isinstance(fn, dict) else tc
    name = src.get("name") or ev.get("tool_name")
    if not isinstance(name, str):
        raise UnknownLayout(
            "an ActionEvent of an unknown layout: expected tool_call.name (SDK 1.x) or "
            "tool_call.function.name (SDK 0.x) or tool_name"
        )
    return c.tool_call(name, src.get("arguments"), tc.get("id") or ev.get("tool_call_id")), old


def _observation_fields(obs: dict, ev: dict, is_error: Any) -> tuple[Any, Any, Any, Any, bool]:
    """Text, exit code, error and timeout of an observation in either layout; True when it is
    the old one (``output``, ``error``, ``metadata.exit_code``)."""
    old = "output" in obs and "content" not in obs
    if obs:
        text = c.as_str(obs.get("content"))
        if text is None:
            text = c.as_str(obs.get("output"))
        if text is None and isinstance(obs.get("error"), str):
            text = obs["error"]
        if text is None:  # SDK 0.x FinishObservation
            text = c.as_str(obs.get("message"))
    else:
        text = c.as_str(ev.get("error"))
    err = obs.get("is_error")
    if not isinstance(err, bool):
        e = obs.get("error")
        err = e if isinstance(e, bool) else (True if isinstance(e, str) and e else is_error)
    code = c.as_int(obs.get("exit_code"))
    if code is None and old:  # SDK 0.x filled only the PS1 metadata's exit code
        code = c.as_int(c.as_dict(obs.get("metadata")).get("exit_code"))
    timeout = obs.get("timeout") if isinstance(obs.get("timeout"), bool) else None
    return text, code, err, timeout, old


class _Builder:
    def __init__(self, per_call: dict[str, Any] | None = None) -> None:
        self.turns: list = []
        self.by_response: dict[str, Any] = {}
        self.by_call: dict[str, Any] = {}
        self.snap: tuple | None = None
        self.at_last_turn: tuple = (0, 0, 0, 0, 0.0)
        self.system: Any = None
        self.instruction: Any = None
        self.per_call: dict[str, Any] = per_call or {}
        self.used: set[str] = set()  # response ids whose per-call usage a turn took
        self.old = False  # an event in the SDK 0.x layout was seen

    def _new_turn(self, ev: dict, **fields: Any) -> Any:
        usage = None
        rid = ev.get("llm_response_id")
        if isinstance(rid, str) and rid in self.per_call:
            usage = self.per_call[rid]
            self.used.add(rid)
        elif self.snap is not None:
            d = [a - b for a, b in zip(self.snap, self.at_last_turn, strict=True)]
            usage = c.new_usage(
                input_tokens=d[0],
                cached_tokens=d[1],
                output_tokens=d[2],
                reasoning_tokens=d[3] or None,
                source="running_total_diff",
                cost_usd=d[4] or None,
            )
        if self.snap is not None:
            self.at_last_turn = self.snap
        t = c.turn(len(self.turns), usage=usage, started_at=ev.get("timestamp"), **fields)
        self.turns.append(t)
        return t

    def action(self, ev: dict) -> None:
        call, old = _tool_call(ev)
        self.old = self.old or old
        call_id = call.id
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
        metrics = ev.get("metrics")  # SDK 0.x: a cumulative snapshot on a response's last action
        if isinstance(metrics, dict) and self.snap is None:
            self.snap = _snapshot({"usage_to_metrics": {"agent": metrics}})

    def observation(self, ev: dict, is_error: bool | None = None) -> None:
        call_id: Any = ev.get("tool_call_id")
        obs = c.as_dict(ev.get("observation"))
        t = self.by_call.get(call_id)
        if t is None:
            cmd = obs.get("command")
            call = c.tool_call(str(ev.get("tool_name")), {"command": cmd} if cmd else None, call_id)
            t = self._new_turn(ev, tool_calls=[call], extra={"reconstructed": True})
            self.by_call[call_id] = t
        text, code, err, timeout, old = _observation_fields(obs, ev, is_error)
        self.old = self.old or old
        t.observations.append(c.observation(call_id, text, code, err, timeout))

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

    def note(self, where: str, layout: str | None = None) -> dict[str, Any]:
        """``metadata["import"]``: the layout seen (or ``layout``), and per-call usage that no
        turn took."""
        warnings = []
        left = len(self.per_call) - len(self.used)
        if left:
            warnings.append(
                [f"{where}token_usages", f"{left} calls' usage matches no model call's response id"]
            )
        return c.import_note(layout or (LAYOUTS[1] if self.old else LAYOUTS[0]), warnings)


def _build(events: list[tuple[Path, str, Any]], per_call: Any = None) -> _Builder:
    """Feed ``(file, place prefix, event)`` in order; an event without ``kind``, or of a
    layout not known here, is an error naming its place."""
    b = _Builder(per_call)
    known = 0
    for path, where, ev in events:
        if not isinstance(ev, dict) or "kind" not in ev:
            raise c.InputError(path, f"{where}.kind", "missing required field")
        known += ev["kind"] in KINDS
        try:
            b.feed(ev)
        except UnknownLayout as e:
            raise c.InputError(path, f"{where}.tool_call", str(e)) from None
    if events and not known:
        path, where, _ = events[0]
        raise c.InputError(
            path,
            f"{where}.kind",
            f"an OpenHands V1 log of a layout not known here: no event of "
            f"the kinds {', '.join(sorted(KINDS))}",
        )
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
        metadata=b.note(""),
        **fields,
    )


def convert(data: Any, ctx: c.Ctx, keep_raw: bool = False) -> list:
    """A JSON list of events (as the SDK's clients save a conversation), or a page of the agent
    server's event search (``{"items": [...]}``)."""
    items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ctx.fail("$", 'expected a list of OpenHands V1 events (or {"items": [...]})')
    where = "$.items" if isinstance(data, dict) else "$"
    b = _build([(ctx.path, f"{where}[{i}]", ev) for i, ev in enumerate(items)])
    return [_trajectory(b, ctx, ctx.path.stem, keep_raw, items)]


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    """An ``events.jsonl`` export: one event per line."""
    b = _build([(ctx.path, f"line {n}: $", ev) for n, ev in lines])
    stem = ctx.path.parent.name if ctx.path.name == "events.jsonl" else ctx.path.stem
    return [_trajectory(b, ctx, stem, keep_raw, [ev for _, ev in lines])]


def event_index(path: Path) -> int | None:
    """``NNNNN`` of a persisted event file ``event-NNNNN-<event id>.json`` (in the SDK's
    ``events/`` folder, or a folder of such files copied out of it), else None."""
    m = EVENT_FILE_RE.match(path.name)
    return int(m.group(1)) if m else None


def conversation_of(path: Path) -> Path:
    """The conversation folder of an event file: above ``events/``, else its own folder."""
    return path.parent.parent if path.parent.name == "events" else path.parent


def _state(conversation: Path) -> tuple[str | None, Any]:
    """``agent.llm.model`` and ``stats`` of the conversation's ``base_state.json`` (None, None
    when it is absent or unreadable)."""
    state = c.companion(conversation / STATE_FILE)
    if not isinstance(state, dict):
        return None, None
    llm = c.as_dict(c.as_dict(state.get("agent")).get("llm"))
    return c.as_str(llm.get("model")), state.get("stats")


def stats_usages(stats: Any) -> list:
    """Every ``token_usages`` entry of a ``stats`` block (one list per LLM)."""
    st = c.as_dict(stats)
    metrics = c.as_dict(st.get("usage_to_metrics") or st.get("service_to_metrics"))
    out: list = []
    for m in metrics.values():
        usages = c.as_dict(m).get("token_usages")
        out += usages if isinstance(usages, list) else []
    return out


def convert_events(events: list[tuple[Path, Any]], keep_raw: bool = False) -> list:
    """A persisted conversation (``<id>/events/event-NNNNN-<event id>.json``, one event per file,
    beside ``<id>/base_state.json``): the events in index order make one trajectory, named after
    the conversation folder. ``events`` are ``(file, parsed event)`` of one ``events`` folder."""
    events = sorted(events, key=lambda pe: event_index(pe[0]) or 0)
    conversation = conversation_of(events[0][0])
    model, stats = _state(conversation)
    b = _build([(path, "$", ev) for path, ev in events], per_call_usage(stats_usages(stats)))
    ctx = c.Ctx(conversation)
    raw = [ev for _, ev in events]
    return [_trajectory(b, ctx, conversation.name, keep_raw, raw, model=model)]


def build_history(history: list, ctx: c.Ctx, metrics: Any) -> _Builder:
    """The events of one V1 evaluation line (``history``), usage per call from its
    ``metrics.token_usages``."""
    per_call = per_call_usage(c.as_dict(metrics).get("token_usages"))
    where = f"{ctx.record}: $.history"
    return _build([(ctx.path, f"{where}[{i}]", ev) for i, ev in enumerate(history)], per_call)
