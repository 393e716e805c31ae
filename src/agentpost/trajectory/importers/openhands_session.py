"""OpenHands v0 session folders: the app's file store keeps each conversation as
``sessions/<conversation id>/events/<N>.json`` (one v0 event per file, ``N`` from 0) beside
``metadata.json`` (``llm_model`` and the conversation's running totals ``prompt_tokens``,
``completion_tokens``, ``accumulated_cost``) and ``agent_state.pkl`` (not read: a pickle is code).

The events in ``N`` order are read as a v0 event list (``openhands._Builder``: one turn per LLM
response, usage from each response's ``usage``). Cross-check: the turns' input and output
tokens against ``metadata.json``'s totals; a difference is named in the import's warnings (a
turn without usage, or a session that went on after its metadata was written).

Layer: io.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.importers.openhands import _Builder
from agentpost.trajectory.model import Outcome

NAME = "openhands-v0"
EVENT_FILE_RE = re.compile(r"^(\d{1,9})\.json$")
METADATA = "metadata.json"


def event_number(path: Path) -> int | None:
    """``N`` of a session event file ``events/N.json``, else None."""
    m = EVENT_FILE_RE.match(path.name)
    return int(m.group(1)) if m and path.parent.name == "events" else None


def _checks(turns: list, meta: dict) -> list[list[str]]:
    out: list[list[str]] = []
    for key, field in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        total = c.as_int(meta.get(key))
        have = [getattr(t.usage, field) for t in turns if t.usage is not None]
        got = sum(x for x in have if x is not None)
        if total is not None and total != got and (total or have):
            out.append([f"{METADATA}: {key}", f"{total}, but the calls' {field} sum to {got}"])
    return out


def convert_session(events: list[tuple[Path, Any]], keep_raw: bool = False) -> list:
    """One session folder's events (``(file, parsed event)`` of one ``events/`` folder) as one
    trajectory named after the session folder."""
    events = sorted(events, key=lambda pe: event_number(pe[0]) or 0)
    session = events[0][0].parent.parent
    ctx = c.Ctx(session)
    b = _Builder(None)
    for path, ev in events:
        if not isinstance(ev, dict) or "source" not in ev:
            raise c.InputError(path, "$.source", "missing required field")
        b.feed([ev], c.Ctx(path), "$")
    meta = c.companion(session / METADATA)
    meta = meta if isinstance(meta, dict) else {}
    outcome = c.construct(Outcome, tests={}, details={"exit_status": b.final_state})
    warnings = b.warnings + _checks(b.turns, meta) if meta else b.warnings
    return [
        c.trajectory(
            ctx,
            NAME,
            id=c.as_str(meta.get("conversation_id")) or session.name,
            agent="openhands",
            model=c.as_str(meta.get("llm_model")) or b.model,
            system_prompt=b.system,
            instruction=b.instruction,
            turns=b.turns,
            outcome=outcome,
            keep_raw=keep_raw,
            raw=[ev for _, ev in events],
            metadata={"title": meta.get("title")} | c.import_note("openhands-v0/session", warnings),
        )
    ]
