"""OpenHands V1 SDK event log (``events.jsonl``): ``ActionEvent``, ``ObservationEvent``,
``MessageEvent``, ``AgentErrorEvent`` and ``ConversationStateUpdateEvent`` (``stats``).

One turn is one LLM response (``llm_response_id``). The SDK logs no per-call usage, only the
cumulative ``stats`` snapshots, so a turn's usage is the difference between the snapshot before
it and the one before the previous turn (``running_total_diff``); the sum over turns therefore
equals the last snapshot before the last turn. Snapshots add up every LLM in ``usage_to_metrics``
(agent and condenser).

Layer: io. Departure: an observation whose action event is missing (a truncated log) becomes a
turn rebuilt from the observation (``extra.reconstructed``), since it proves a model call.
"""

from __future__ import annotations

from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Usage

NAME = "openhands-v1"


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
        self.system = self.instruction = None

    def _new_turn(self, ev: dict, **fields: Any) -> Any:
        usage = None
        if self.snap is not None:
            d = [a - b for a, b in zip(self.snap, self.at_last_turn, strict=True)]
            usage = c.construct(
                Usage,
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
        tc = ev.get("tool_call") if isinstance(ev.get("tool_call"), dict) else {}
        call_id = tc.get("id") or ev.get("tool_call_id")
        call = c.tool_call(str(tc.get("name") or ev.get("tool_name")), tc.get("arguments"), call_id)
        action = ev.get("action") if isinstance(ev.get("action"), dict) else {}
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
        call_id = ev.get("tool_call_id")
        obs = ev.get("observation") if isinstance(ev.get("observation"), dict) else {}
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


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    b = _Builder()
    for lineno, ev in lines:
        if not isinstance(ev, dict) or "kind" not in ev:
            raise c.InputError(ctx.path, f"line {lineno}: $.kind", "missing required field")
        b.feed(ev)
    stem = ctx.path.parent.name if ctx.path.name == "events.jsonl" else ctx.path.stem
    return [
        c.trajectory(
            ctx,
            NAME,
            id=stem,
            agent="openhands",
            system_prompt=b.system,
            instruction=b.instruction,
            turns=b.turns,
            keep_raw=keep_raw,
            raw=[ev for _, ev in lines],
        )
    ]
