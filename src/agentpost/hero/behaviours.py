"""Unproductive-behaviour detectors of spec b.8: repeated calls, over-exploration, tool errors.

The classifier lists are data (``CLASSIFIERS``, with a ``version``) and every report records that
version. Per turn the detectors return flags; a turn is *unproductive* if any call of it repeats
an earlier call, it belongs to a run of ≥ ``over_exploration_run`` read-only turns, or any of its
observations is an error.

Toolkit choices beyond the spec (``[unspecified]`` there):
- a turn with no tool call is read-only (vacuously: none of its calls changes state);
- a ``control`` call (submit, finish) is not read-only, so it ends an exploration run;
- ``cd``, ``true``, ``nl`` and ``which`` join the spec's read-only command heads; ``find`` with
  ``-delete``/``-exec``/``-fprint`` and ``sed -i`` are writes (``write_options``);
  redirections to ``/dev/null`` and fd duplications (``2>&1``) do not count as writes;
- a timed-out observation counts as a tool error; exit 1 of a command whose last segment is
  ``grep``/``rg``/``diff``/``cmp`` is not one (it means "no match" / "differ");
- ``repeat_window`` as int: the earlier call lies at most that many turns back.

Layer: pure.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from agentpost.trajectory.model import ToolCall, Trajectory, Turn

CLASSIFIERS: dict[str, Any] = {
    "version": "hero-behaviours/5",
    "read_only_tools": [
        "read",
        "grep",
        "glob",
        "ls",
        "todowrite",
        "view",
        "find_file",
        "search_file",
        "search_dir",
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
    ],
    "write_tools": ["edit", "write", "multiedit", "notebookedit", "create"],
    "read_only_heads": [
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "find",
        "pwd",
        "wc",
        "stat",
        "file",
        "tree",
        "echo",
        "cd",
        "true",
        "nl",
        "which",
    ],
    "read_only_subcommands": {"git": ["status", "log", "diff", "show"], "sed": ["-n"]},
    # options that make a read-only head write or run something else
    "write_options": {
        "find": ["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fls"],
        "sed": ["-i", "--in-place"],
    },
    "editor_read_only_commands": ["view"],
    "error_regex": (
        r"(?im)^(Traceback \(most recent call last\)|.*command not found|"
        # Gemini CLI's shell tool always prints an ``Error:`` line; ``Error: (none)`` is success
        r".*No such file or directory|(\w+)?Error: (?!\(none\))|fatal: |Exception: |"
        r".*Permission denied|Usage: |ERROR\b(?!: \(none\)))"
    ),
    "over_exploration_run": 15,
    # exit 1 of these heads means "no match" / "files differ", not a failure
    "benign_exit_codes": {
        "grep": [1],
        "rg": [1],
        "egrep": [1],
        "fgrep": [1],
        "diff": [1],
        "cmp": [1],
    },
}

_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT = re.compile(r"(\d?>>?|&>)\s*(?!&\d)(\S+)")


@dataclass(frozen=True)
class TurnFlags:
    """b.8 flags of one turn."""

    read_only: bool
    repeated_call: bool
    over_exploration: bool
    tool_error: bool

    @property
    def unproductive(self) -> bool:
        return self.repeated_call or self.over_exploration or self.tool_error


def signature(call: ToolCall) -> str:
    """Tool name + canonical JSON arguments (or the command), whitespace collapsed."""
    args = call.command if call.command is not None else call.arguments
    try:
        text = json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = str(args)
    return re.sub(r"\s+", " ", f"{call.name.lower()}:{text}").strip()


# git options that come before the subcommand and take a separate value (`git -C repo status`)
_GIT_VALUE_OPTIONS = {"-C", "-c", "--git-dir", "--work-tree", "--namespace"}


def _subcommand_words(head: str, words: list[str]) -> list[str]:
    """Where a head's read-only subcommand may stand: git's first word after its global options
    (so `git -C repo log` is read-only), else the first two words (`sed -n`)."""
    if head != "git":
        return words[1:3]
    rest = iter(words[1:])
    for word in rest:
        if word in _GIT_VALUE_OPTIONS:
            next(rest, None)
        elif not word.startswith("-"):
            return [word]
    return []


def command_is_read_only(command: str, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    """True if every segment of a shell command is a read-only head and nothing is written."""
    for target in (m.group(2) for m in _REDIRECT.finditer(command)):
        if target != "/dev/null":
            return False
    if "<<" in command or re.search(r"\btee\b", command):
        return False
    for segment in _SEPARATORS.split(command):
        segment = _REDIRECT.sub(" ", segment).strip()
        if not segment:
            continue
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        subs = lists["read_only_subcommands"]
        writes = lists.get("write_options", {}).get(head, [])
        if any(w.startswith(opt) for w in words[1:] for opt in writes):
            return False
        if head in subs:
            if not any(w in subs[head] for w in _subcommand_words(head, words)):
                return False
        elif head not in lists["read_only_heads"]:
            return False
    return True


def call_is_read_only(call: ToolCall, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    """Whether one call cannot change repository or environment state."""
    if call.kind == "control":
        return False
    if call.command is not None and call.kind in ("shell", "keystrokes", "other"):
        return command_is_read_only(call.command, lists)
    name = call.name.lower()
    if call.kind == "edit" or name in lists["write_tools"] or "editor" in name:
        sub = call.arguments.get("command") if isinstance(call.arguments, dict) else None
        return sub in lists["editor_read_only_commands"]
    return name in lists["read_only_tools"]


def turn_is_read_only(turn: Turn, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    return all(call_is_read_only(c, lists) for c in turn.tool_calls)


def _benign_exit(call: ToolCall | None, code: int, lists: dict[str, Any]) -> bool:
    """Whether ``code`` is a non-failure exit of the command's last segment (grep's 1)."""
    if call is None or not call.command:
        return False
    segments = [x.strip() for x in _SEPARATORS.split(call.command) if x.strip()]
    if not segments:
        return False
    head = segments[-1].split()[0].rsplit("/", 1)[-1]
    return code in lists.get("benign_exit_codes", {}).get(head, [])


def turn_has_error(turn: Turn, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    """is_error, else a non-zero exit code, else (neither known) the versioned error regex."""
    regex = re.compile(lists["error_regex"])
    calls = {c.id: c for c in turn.tool_calls if c.id}
    for k, obs in enumerate(turn.observations):
        if obs.is_error or obs.timed_out:
            return True
        if obs.exit_code is not None and obs.exit_code != 0:
            call = calls.get(obs.call_id) or (
                turn.tool_calls[k] if k < len(turn.tool_calls) else None
            )
            if not _benign_exit(call, obs.exit_code, lists):
                return True
        if obs.is_error is None and obs.exit_code is None and obs.text and regex.search(obs.text):
            return True
    return False


def _repeated(turns: list[Turn], window: str | int, lists: dict[str, Any]) -> list[bool]:
    seen: dict[str, int] = {}  # signature → turn index of its latest occurrence
    out = []
    for k, turn in enumerate(turns):
        flag = False
        for call in turn.tool_calls:
            sig = signature(call)
            last = seen.get(sig)
            if last is not None and (not isinstance(window, int) or k - last <= window):
                flag = True
            if window == "since_last_write" and not call_is_read_only(call, lists):
                seen.clear()  # the write itself stays the "earlier call" of what follows
            seen[sig] = k
        out.append(flag)
    return out


def detect(
    trajectory: Trajectory,
    *,
    repeat_window: str | int = "since_last_write",
    lists: dict[str, Any] = CLASSIFIERS,
) -> list[TurnFlags]:
    """Per-turn b.8 flags for one trajectory."""
    if not (repeat_window in ("since_last_write", "anywhere") or isinstance(repeat_window, int)):
        raise ValueError(
            f"repeat_window must be since_last_write, anywhere or an int: {repeat_window!r}"
        )
    turns = trajectory.turns
    ro = [turn_is_read_only(t, lists) for t in turns]
    run = lists["over_exploration_run"]
    over = [False] * len(turns)
    start = 0
    for k in range(len(turns) + 1):
        if k == len(turns) or not ro[k]:
            if k - start >= run:
                over[start:k] = [True] * (k - start)
            start = k + 1
    rep = _repeated(turns, repeat_window, lists)
    return [
        TurnFlags(
            read_only=ro[k],
            repeated_call=rep[k],
            over_exploration=over[k],
            tool_error=turn_has_error(t, lists),
        )
        for k, t in enumerate(turns)
    ]
