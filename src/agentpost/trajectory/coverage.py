"""What an import could read, per trajectory, and where that falls short of what its layout
promises.

An importer records the layout it recognised (``metadata["import"]["layout"]``, a key of
``PROMISES``) and the cross-check findings it made on the way (``metadata["import"]
["warnings"]``, ``[place, message]`` pairs). ``coverage`` counts, for one trajectory, what
every analysis depends on: turns with usage, tool calls with arguments, calls with an
observation and observations with text, shell observations with an exit code, and whether the
outcome is known. ``shortfalls`` compares those counts with what the layout promises (a tool call
with no observation where the layout records one for every call, a turn with no usage where
every call's usage is logged, a partial sum) and says each shortfall once, naming the field.
``Tally`` adds counts up per format for the coverage line ``agentpost import`` prints.

Layer: pure (reads the models' fields; no I/O).
"""

from __future__ import annotations

from typing import Any

# What each layout records for every model call / tool call / observation / run. A layout not
# listed here promises nothing, so it is never warned about (a custom importer, say).
USAGE, ARGS, OBS, TEXT, EXIT, OUTCOME = (
    "usage", "arguments", "observations", "text", "exit_codes", "outcome",
)  # fmt: skip
_CHAT = frozenset({ARGS, OBS, TEXT})
PROMISES: dict[str, frozenset[str]] = {
    "claude-code/2": _CHAT | {USAGE},
    "claude-code/1.0": _CHAT | {USAGE},
    "codex/count-after-items": _CHAT | {USAGE, EXIT},
    "codex/count-before-items": _CHAT | {USAGE, EXIT},
    "gemini-cli/session": _CHAT | {USAGE},
    "openhands-v1/current": _CHAT | {EXIT},
    "openhands-v1/early": _CHAT | {EXIT},
    "openhands-v1/eval": _CHAT | {EXIT, USAGE},
    "openhands-v0/events": frozenset({OBS, TEXT, EXIT}),
    "openhands-v0/session": frozenset({OBS, TEXT, EXIT, USAGE}),
    "openhands-v0/eval": frozenset({OBS, TEXT, EXIT}),
    "opendevin/pairs": frozenset({OBS, TEXT}),
    "swe-agent/trajectory": frozenset({TEXT}),
    "mini-swe-agent/1": _CHAT | {USAGE, EXIT},
    "mini-swe-agent/1.1": _CHAT | {USAGE, EXIT},
}
FIELDS = ("turns", "usage", "calls", "arguments", "expect", "answered", "orphans",
          "observations", "text", "shell", "exit_codes", "outcome")  # fmt: skip


def import_info(t: Any) -> dict[str, Any]:
    """``metadata["import"]`` of a trajectory (empty when its importer recorded nothing)."""
    info = t.metadata.get("import") if isinstance(t.metadata, dict) else None
    return info if isinstance(info, dict) else {}


def coverage(t: Any) -> dict[str, int]:
    """Counts of one trajectory: ``turns`` and those with ``usage`` (an input or output count),
    tool ``calls`` and those with ``arguments``, calls ``answered`` by an observation of their
    id (calls without ids: by position) of the calls that ``expect`` one (a control call such
    as ``finish`` left without a result does not), results of no call (``orphans``),
    ``observations`` and those with ``text`` (an empty
    output counts: the source said it), ``shell`` calls with a result (other than an error
    or timeout that gave no code: the command never exited) and how many have ``exit_codes``, and
    ``outcome`` (1 when resolved or a reward is known)."""
    n = dict.fromkeys(FIELDS, 0)
    for turn in t.turns:
        n["turns"] += 1
        u = turn.usage
        if u is not None and (u.input_tokens is not None or u.output_tokens is not None):
            n["usage"] += 1
        answered = {o.call_id for o in turn.observations if o.call_id is not None}
        coded = {o.call_id for o in turn.observations if o.exit_code is not None}
        # a failed or timed-out result without a code: the command did not run to an exit
        unran = {
            o.call_id
            for o in turn.observations
            if o.exit_code is None and (o.is_error or o.timed_out) and o.call_id is not None
        }
        loose = sum(1 for o in turn.observations if o.call_id is None)
        loose_codes = sum(
            1 for o in turn.observations if o.call_id is None and o.exit_code is not None
        )
        for c in turn.tool_calls:
            n["calls"] += 1
            n["arguments"] += c.arguments is not None
            n["expect"] += 1
            if c.id is not None and c.id in answered:
                got = True
            elif loose > 0:  # a source without ids: results answer calls in order
                loose -= 1
                got = True
            else:
                got = False
                if c.kind == "control":  # finish, submit: many scaffolds log no result for them
                    n["expect"] -= 1
            n["answered"] += got
            if c.kind == "shell" and got and c.id not in unran:  # (no result: counted above)
                n["shell"] += 1
                if c.id is not None and c.id in coded:
                    n["exit_codes"] += 1
                elif loose_codes > 0 and (c.id is None or c.id not in answered):
                    loose_codes -= 1
                    n["exit_codes"] += 1
        for o in turn.observations:
            n["observations"] += 1
            n["text"] += o.text is not None
    ids = {c.id for turn in t.turns for c in turn.tool_calls if c.id is not None}
    n["orphans"] = sum(
        1
        for turn in t.turns
        for o in turn.observations
        if o.call_id is not None and o.call_id not in ids
    )
    n["outcome"] = int(t.outcome.resolved is not None or t.outcome.reward is not None)
    return n


def shortfalls(t: Any, n: dict[str, int]) -> list[str]:
    """One line per field in which the trajectory holds less than its layout promises."""
    promised = PROMISES.get(import_info(t).get("layout") or "", frozenset())
    out = []
    if USAGE in promised and n["usage"] < n["turns"]:
        out.append(f"usage: {n['turns'] - n['usage']} of {n['turns']} turns have no token counts")
    if USAGE in promised and t.totals.partial:
        out.append("usage: the token sums cover only some calls (a lower bound, marked partial)")
    if ARGS in promised and n["arguments"] < n["calls"]:
        out.append(f"arguments: {n['calls'] - n['arguments']} of {n['calls']} tool calls have none")
    if OBS in promised and n["answered"] < n["expect"]:
        out.append(
            f"observations: {n['expect'] - n['answered']} of {n['calls']} tool calls have no result"
        )
    if OBS in promised and n["orphans"]:
        out.append(f"observations: {n['orphans']} results answer no tool call of this trajectory")
    if TEXT in promised and n["text"] < n["observations"]:
        lost = n["observations"] - n["text"]
        out.append(f"text: {lost} of {n['observations']} observations have no text")
    if EXIT in promised and n["exit_codes"] < n["shell"]:
        lost = n["shell"] - n["exit_codes"]
        out.append(f"exit_codes: {lost} of {n['shell']} shell results have no exit code")
    if OUTCOME in promised and not n["outcome"]:
        out.append("outcome: not recorded")
    return out


class Tally:
    """Coverage added up per source format (and the files each came from)."""

    def __init__(self) -> None:
        self.by_format: dict[str, dict[str, int]] = {}
        self.files: dict[str, set[str]] = {}

    def add(self, fmt: str, path: str | None, n: dict[str, int]) -> None:
        acc = self.by_format.setdefault(fmt, dict.fromkeys(("trajectories", *FIELDS), 0))
        acc["trajectories"] += 1
        for k, v in n.items():
            acc[k] += v
        self.files.setdefault(fmt, set()).add(path or "")

    def to_json(self) -> dict[str, dict[str, int]]:
        return {
            fmt: {"files": len(self.files[fmt]), **acc}
            for fmt, acc in sorted(self.by_format.items())
        }


def coverage_line(fmt: str, c: dict[str, int]) -> str:
    """``coverage FORMAT: turns with usage a/b, calls with arguments a/b, ...`` (one line)."""

    def part(label: str, k: str, of: str) -> str:
        return f"{label} {c[k]}/{c[of]}"

    return f"coverage {fmt} ({c['files']} files): " + ", ".join(
        [
            part("turns with usage", "usage", "turns"),
            part("calls with arguments", "arguments", "calls"),
            part("calls with a result", "answered", "expect"),
            part("results with text", "text", "observations"),
            part("shell results with exit code", "exit_codes", "shell"),
            part("outcome", "outcome", "trajectories"),
        ]
    )
