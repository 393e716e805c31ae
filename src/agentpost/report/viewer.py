"""Report section: the trajectory viewer (list, sort, filter, search, open one turn by turn).

The viewer reads two kinds of data, like Inspect view's lazy logs: an **index** of every
trajectory (one column per field: id, task, agent, run, outcome, turns, tokens, unproductive
turns, mean entropy, flags; a few bytes each, so 100,000 trajectories list, sort and filter at
once) and **shards** of about ``SHARD_BYTES`` holding the full trajectories, loaded only when one
of theirs is opened. Texts are kept whole (a single text above ``MAX_TEXT`` characters, far
beyond anything readable, is cut with a visible mark). Small runs embed index and shards in the
page as ``<script type="application/json">`` blocks (one offline file); larger ones write them
beside it (``report.viewer_store``). Links of the form ``#traj=ID&turn=N`` (the verdict, the
compare section, chart bars, a bookmark) open a trajectory at a turn.

Per turn the viewer shows the assistant text and reasoning, tool calls and outputs, tokens
(prompt, cached, completion), entropy, the HERO flags and the HERO turn advantage, and marks the
SCVD candidate boundary with the trajectory's verification outcome.

This module builds the data (pure); ``viewer_store`` writes it, ``viewer_script`` reads it.

Layer: pure.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from agentpost.report.html import Section, note
from agentpost.trajectory.model import Trajectory

TITLE = "Trajectories"
MAX_TEXT = 1_000_000  # characters of one text; a longer one is cut, visibly
BEHAVIOUR_FILTERS = {
    "R": "repeated call",
    "O": "over-exploration",
    "E": "tool error",
    "r": "read-only",
    "U": "any unproductive turn",
    "unverified": "SCVD: candidate left unverified",
    "missed": "SCVD: wrong candidate, error not flagged",
}
# the index's numeric columns: key → header (sortable, with a ≥ / ≤ filter each)
NUMERIC = {"turns": "turns", "tokens": "tokens", "unprod": "unprod. turns", "h": "mean h"}


def _cut(text: str | None, n: int = MAX_TEXT) -> str | None:
    if text is None or len(text) <= n:
        return text
    return text[:n] + f"\n… [cut: {len(text) - n} more characters]"


def _call(c) -> dict[str, Any]:
    cmd = c.command if c.command is not None else json.dumps(c.arguments, default=str)
    return {"name": c.name, "cmd": _cut(cmd)}


def _turn(t, flags: list[str], ent: list, adv: list[float] | None, i: int) -> dict:
    u = t.usage
    return {
        "i": t.index,
        "step": t.step,
        "text": _cut(t.text),
        "reasoning": _cut(t.reasoning),
        "calls": [_call(c) for c in t.tool_calls],
        "obs": [
            {"text": _cut(o.text), "exit": o.exit_code, "err": o.is_error, "timeout": o.timed_out}
            for o in t.observations
        ],
        "in": u.input_tokens if u else None,
        "cached": u.cached_tokens if u else None,
        "out": u.output_tokens if u else None,
        "h": ent[i] if i < len(ent) else None,
        "f": flags[i] if i < len(flags) else "",
        "adv": adv[i] if adv is not None and i < len(adv) else None,
    }


def _scvd(rec: dict[str, Any] | None) -> dict[str, Any] | None:
    if not rec:
        return None
    r, d = rec.get("record") or {}, rec.get("decision") or {}
    tags = []
    if r.get("I_c") and r.get("I_v") is False:
        tags.append("unverified")
    if r.get("I_c") and r.get("y_c") == 0 and r.get("z") != "error":
        tags.append("missed")
    return {"I_c": r.get("I_c"), "I_v": r.get("I_v"), "z": r.get("z"), "y_c": r.get("y_c"),
            "y_f": r.get("y_f"), "step": d.get("candidate_step"), "tags": tags}  # fmt: skip


def letters(row: dict[str, Any]) -> str:
    """The trajectory's flag letters (sorted), plus U when any turn is unproductive."""
    out = "".join(sorted(set("".join(row.get("turn_flags") or []))))
    return out + "U" if set(out) & set("ROE") else out


def entry(
    t: Trajectory, row: dict[str, Any], rec: dict | None, adv: list[float] | None
) -> dict[str, Any]:
    """One trajectory as a shard holds it: its turns in full, its instruction and SCVD marker."""
    flags = list(row.get("turn_flags") or [])
    ent = list(row.get("turn_entropy") or [])
    return {
        "id": t.id,
        "instruction": _cut(t.instruction),
        "scvd": _scvd(rec),
        "turns": [_turn(u, flags, ent, adv, i) for i, u in enumerate(t.turns)],
    }


def meta(t: Trajectory, row: dict[str, Any], rec: dict | None) -> dict[str, Any]:
    """One trajectory as the index lists it (no text); ``agent`` is set when the run is read."""
    scvd = _scvd(rec)
    return {
        "id": t.id,
        "task": t.task_id or "",
        "run": t.run_id,
        "resolved": t.outcome.resolved,
        "turns": len(t.turns),
        "tokens": row.get("tokens"),
        "unprod": row.get("unproductive_turns"),
        "h": row.get("mean_entropy"),
        "flags": letters(row),
        "tags": scvd["tags"] if scvd else [],
    }


def index(metas: list[dict[str, Any]], agents: list[str], places: list[tuple[int, int]],
          digests: list[str], data_dir: str | None) -> dict[str, Any]:  # fmt: skip
    """The viewer's index, one column per field (names, tasks and runs as positions in a table
    of distinct values): ``agents[i]`` is trajectory i's agent label, ``places[i]`` its
    (shard, position), ``digests[s]`` shard s's digest (a shard from another build of the report
    is refused), ``data_dir`` the folder of external shards (None: embedded)."""

    def table(values: list) -> tuple[list, list[int]]:
        names = sorted({v for v in values if v is not None}, key=str)
        at = {v: k for k, v in enumerate(names)}
        return names, [at.get(v, -1) for v in values]

    tasks, task_col = table([m["task"] for m in metas])
    names, agent_col = table(agents)
    runs, run_col = table([m["run"] for m in metas])
    cols: dict[str, list] = {"id": [m["id"] for m in metas], "task": task_col,
                             "agent": agent_col, "run": run_col}  # fmt: skip
    for key in ("resolved", *NUMERIC, "flags", "tags"):
        cols[key] = [m[key] for m in metas]
    cols["shard"] = [s for s, _ in places]
    cols["pos"] = [p for _, p in places]
    return {"n": len(metas), "tasks": tasks, "agents": names, "runs": runs, "cols": cols,
            "digests": digests, "dir": data_dir, "filters": BEHAVIOUR_FILTERS,
            "numeric": NUMERIC}  # fmt: skip


def json_block(element_id: str, value: Any) -> str:
    """``value`` as an inert JSON block; ``<``, ``>`` and ``&`` are JSON-escaped
    (``\\u003c``…), so no text can close the script element or read as markup."""
    text = json.dumps(value, default=str)
    safe = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{safe}</script>'


LEGEND = (
    '<p class="src">Flags per turn (HERO spec b.8): <b>R</b> repeated call, <b>O</b> '
    "over-exploration, <b>E</b> tool error, <b>r</b> read-only (not unproductive by itself). "
    "<b>adv.</b> is the HERO turn advantage (all tokens of a turn share it); <b>h</b> the "
    "mean entropy of its tokens in nats (needs logprobs). SCVD: the candidate boundary t_c is "
    "the earliest point where the environment holds a complete candidate solution that "
    "could be graded; y_c (measured by replaying the run up to t_c) is 1 when that candidate "
    "passes the task's tests, 0 when not; z is what the agent's first check after it "
    "concluded: error, no-error or unresolved. Click a column to sort; the boxes under the "
    "numeric columns keep the rows within a range.</p>"
)


def render(n: int, data_html: str, data_dir: str | None) -> Section:
    """The section for ``n`` trajectories; ``data_html``: the embedded index and shards, or
    the script tag of the external index (``data_dir``: its folder beside the page)."""
    from agentpost.report.viewer_script import controls

    if not n:
        return Section("trajectories", TITLE, '<p class="skip">Not run: no trajectories.</p>',
                       present=False)  # fmt: skip
    where = (
        f"the full trajectories are in the folder {data_dir}/ beside this page, loaded when "
        "one is opened (keep the two together)"
        if data_dir
        else "the full trajectories are embedded in this page"
    )
    head = note(f"{n} trajectories: {where}.") if data_dir else ""
    return Section("trajectories", TITLE, head + LEGEND + controls(data_dir) + data_html,
                   provenance=[f"{n} trajectories; {where}; texts in full (a text above "
                               f"{MAX_TEXT} characters is cut, visibly)"])  # fmt: skip


def escape_attr(s: str) -> str:
    return escape(s, quote=True)
