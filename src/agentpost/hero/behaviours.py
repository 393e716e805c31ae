"""Unproductive-behaviour detectors of spec b.8: repeated calls, over-exploration, tool errors.

The classifier lists are data (``CLASSIFIERS``, with a ``version``) and every report records that
version. Per turn the detectors return flags; a turn is *unproductive* if any call of it repeats
an earlier call, it belongs to a run of ≥ ``over_exploration_run`` read-only turns, or any of its
observations is a tool error.

Two kinds of failed call, told apart by one rule (a departure from spec b.8, which counts every
failed call as a tool error):

- a **check run** fails by design: the call runs a script the agent itself wrote earlier in the
  trajectory (an edit or write tool's path, a shell redirect or ``tee`` target) with an
  interpreter or test runner (``run_heads``: ``python repro.py``, ``pytest tests/test_fix.py``,
  ``bash check.sh``, ``./repro.sh``). A reproduction script that shows the bug, or a check that
  fails before the fix, is the agent verifying, not misusing a tool, so it is flagged
  ``check_run`` (letter ``C``) and is not unproductive;
- a **tool error** (misuse) is every other failure: ``is_error``, a timeout, a non-zero exit (but
  for the ``benign_exit_codes``), or, when neither is recorded, the ``error_regex`` on the output.

A turn with both a misuse and a check run is a tool error. Reports show both kinds side by side.

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
    "version": "hero-behaviours/6",
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
    # a failed call of these heads on a file the agent wrote is a check run, not a tool error
    "run_heads": [
        "python",
        "python3",
        "python2",
        "pytest",
        "py.test",
        "node",
        "bash",
        "sh",
        "zsh",
        "ruby",
        "perl",
        "php",
        "go",
        "java",
        "tsx",
        "ts-node",
        "deno",
        "npx",
    ],
    # tools that write a whole file (an ``edit`` changes part of one), and the argument keys
    # that name the file
    "creating_tools": ["write", "create", "write_file", "create_file"],
    "written_path_keys": ["path", "file_path", "filename", "file", "notebook_path"],
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
_SPACES = re.compile(r"\s+")
_TEE = re.compile(r"\btee\b")
_TEE_TARGET = re.compile(r"\btee\s+(?:-a\s+)?(\S+)")


@dataclass(frozen=True)
class TurnFlags:
    """b.8 flags of one turn."""

    read_only: bool
    repeated_call: bool
    over_exploration: bool
    tool_error: bool
    check_run: bool = False  # failed by design: it ran a script the agent wrote (not unproductive)

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
    return _SPACES.sub(" ", f"{call.name.lower()}:{text}").strip()


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


_SHLEX_SPECIAL = re.compile(r"['\"\\]")
_SHLEX_SPACE = re.compile(r"[ \t\r\n]+")


def shell_words(segment: str, fallback: str | None = None) -> list[str]:
    """``shlex.split(segment)``, else (unbalanced quotes) ``(fallback or segment).split()``. A segment
    without quotes or backslashes is split on shlex's whitespace directly: the same words,
    without shlex's character-by-character reader (most of detect's time on real logs)."""
    if not _SHLEX_SPECIAL.search(segment):
        return [w for w in _SHLEX_SPACE.split(segment) if w]
    try:
        return shlex.split(segment)
    except ValueError:
        return (segment if fallback is None else fallback).split()


def command_is_read_only(command: str, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    """True if every segment of a shell command is a read-only head and nothing is written."""
    for target in (m.group(2) for m in _REDIRECT.finditer(command)):
        if target != "/dev/null":
            return False
    if "<<" in command or _TEE.search(command):
        return False
    for segment in _SEPARATORS.split(command):
        segment = _REDIRECT.sub(" ", segment).strip()
        if not segment:
            continue
        words = shell_words(segment)
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


def _failed(obs, call: ToolCall | None, regex: re.Pattern, lists: dict[str, Any]) -> bool:
    """is_error, else a non-zero exit code, else (neither known) the versioned error regex."""
    if obs.is_error or obs.timed_out:
        return True
    if obs.exit_code is not None and obs.exit_code != 0:
        return not _benign_exit(call, obs.exit_code, lists)
    return bool(
        obs.is_error is None and obs.exit_code is None and obs.text and regex.search(obs.text)
    )


def written_paths(call: ToolCall, lists: dict[str, Any] = CLASSIFIERS) -> set[str]:
    """The files a call creates (or overwrites whole): a write tool's path (``write``,
    ``create``, an editor's ``create`` command; not an ``edit`` of part of a file), shell ``>``
    redirect and ``tee`` targets (``/dev/null`` aside)."""
    out: set[str] = set()
    if call.command is not None and call.kind in ("shell", "keystrokes", "other"):
        for m in _REDIRECT.finditer(call.command):
            if (
                m.group(1).endswith(">")
                and not m.group(1).endswith(">>")
                and m.group(2) != "/dev/null"
            ):
                out.add(m.group(2))
        out |= {m.group(1) for m in _TEE_TARGET.finditer(call.command)}
    elif isinstance(call.arguments, dict):
        name = call.name.lower()
        whole = name in lists["creating_tools"] or call.arguments.get("command") == "create"
        if whole:
            out |= {v for k in lists["written_path_keys"]
                    if isinstance(v := call.arguments.get(k), str)}  # fmt: skip
    return {p.strip("'\"") for p in out if p}


def _same_file(word: str, path: str) -> bool:
    w, p = word.strip("'\"").removeprefix("./"), path.removeprefix("./")
    return bool(w) and (w == p or p.endswith("/" + w) or w.endswith("/" + p.lstrip("/")))


def runs_written(
    call: ToolCall | None, written: set[str], lists: dict[str, Any] = CLASSIFIERS
) -> bool:
    """Whether the call runs (with a ``run_heads`` interpreter or test runner, or as ``./x``) a
    file in ``written``."""
    if call is None or not call.command or not written:
        return False
    for segment in _SEPARATORS.split(call.command):
        words = shell_words(_REDIRECT.sub(" ", segment), fallback=segment)
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        args = (
            words[1:]
            if head in lists["run_heads"]
            else words[:1]
            if words[0].startswith("./")
            else []
        )
        if any(_same_file(a, p) for a in args for p in written):
            return True
    return False


def turn_errors(
    turn: Turn, written: set[str] | None = None, lists: dict[str, Any] = CLASSIFIERS
) -> tuple[bool, bool]:
    """(tool error, check run) of one turn: a failed observation is a check run when its call
    runs a file in ``written`` (see the module docstring), else a tool error."""
    regex = re.compile(lists["error_regex"])
    calls = {c.id: c for c in turn.tool_calls if c.id}
    misuse = check = False
    for k, obs in enumerate(turn.observations):
        call = calls.get(obs.call_id) or (turn.tool_calls[k] if k < len(turn.tool_calls) else None)
        if _failed(obs, call, regex, lists):
            if runs_written(call, written or set(), lists):
                check = True
            else:
                misuse = True
    return misuse, check


def turn_has_error(turn: Turn, lists: dict[str, Any] = CLASSIFIERS) -> bool:
    """Whether any observation of the turn failed (a tool error or a check run)."""
    misuse, check = turn_errors(turn, None, lists)
    return misuse or check


def _repeated(turns: list[Turn], window: str | int, read_only: list[list[bool]]) -> list[bool]:
    """Per turn: does a call repeat an earlier one (``read_only[k][j]``: call j of turn k)."""
    seen: dict[str, int] = {}  # signature → turn index of its latest occurrence
    out = []
    for k, turn in enumerate(turns):
        flag = False
        for j, call in enumerate(turn.tool_calls):
            sig = signature(call)
            last = seen.get(sig)
            if last is not None and (not isinstance(window, int) or k - last <= window):
                flag = True
            if window == "since_last_write" and not read_only[k][j]:
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
    calls_ro = [[call_is_read_only(c, lists) for c in t.tool_calls] for t in turns]  # once each
    ro = [all(x) for x in calls_ro]
    run = lists["over_exploration_run"]
    over = [False] * len(turns)
    start = 0
    for k in range(len(turns) + 1):
        if k == len(turns) or not ro[k]:
            if k - start >= run:
                over[start:k] = [True] * (k - start)
            start = k + 1
    rep = _repeated(turns, repeat_window, calls_ro)
    out, written = [], set()
    for k, t in enumerate(turns):
        for call in t.tool_calls:  # a script written in this turn can be run in it too
            written |= written_paths(call, lists)
        misuse, check = turn_errors(t, written, lists)
        out.append(TurnFlags(read_only=ro[k], repeated_call=rep[k], over_exploration=over[k],
                             tool_error=misuse, check_run=check and not misuse))  # fmt: skip
    return out
