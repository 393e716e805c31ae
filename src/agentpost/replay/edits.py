"""File-editing tool semantics for replay: SWE-agent / OpenHands ``str_replace_editor`` (create,
str_replace, insert, view, undo_edit), plain ``write``/``write_file`` tools, and Gemini CLI's
``replace`` (old_string/new_string with ``expected_replacements``).

``parse_edit`` turns a tool call's arguments into an ``EditOp``; ``apply_edit`` computes the
new file content from the old. Both are pure string functions with no imports beyond the
standard library, because replay ships this module's source into the sandbox and runs it there
(the file is read and written by the sandbox, never by the host).

Departures from the tools: ``create`` overwrites an existing file (replay only applies an edit
that the recorded observation says succeeded, and some tool versions allow the overwrite);
SWE-agent's windowed tools (``create FILE``, ``edit N:M`` … ``end_of_edit``, ``edit SEARCH
REPLACE``, ``insert TEXT [LINE]``) act on the file its ``open``/``create`` made current;
``parse_swe_agent_edit`` takes that file from the caller. Departure: SWE-agent 0.x lint-reverts
an edit that breaks syntax; such an edit's observation says so and replay skips it.

Layer: pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WRITE_COMMANDS = {"create", "write", "write_file", "overwrite"}
READ_COMMANDS = {"view", "read", "read_file"}


class EditError(Exception):
    """The edit cannot be applied (the tool would have answered with an error)."""


@dataclass(frozen=True)
class EditOp:
    command: str  # create | str_replace | insert | view | undo_edit
    path: str
    text: str | None = None  # create: the whole file
    old: str | None = None  # str_replace
    new: str | None = None  # str_replace / insert
    line: int | None = None  # insert: after this line (0 = at the top)
    count: int | None = None  # str_replace: required occurrences (None: one; -1: all, >= 1)
    end: int | None = None  # replace_lines: last line replaced (1-based, inclusive)


def _first(args: dict, *keys: str):
    for k in keys:
        if args.get(k) is not None:
            return args[k]
    return None


def parse_edit(name: str, arguments: object) -> EditOp:
    """An ``EditOp`` from a call's tool name and (parsed) arguments; raises ``EditError``."""
    if not isinstance(arguments, dict):
        raise EditError(f"{name}: arguments are not an object")
    a = arguments
    path = _first(a, "path", "file_path", "filename", "file")
    if not isinstance(path, str) or not path:
        raise EditError(f"{name}: no path")
    command = a.get("command")
    if command is None:
        if name in ("replace",) or _first(a, "old_string", "old_str") is not None:
            command = "str_replace"
        elif _first(a, "content", "file_text") is not None:
            command = "create"
    if command in WRITE_COMMANDS or (command == "edit" and a.get("content") is not None):
        text = _first(a, "file_text", "content", "text")
        if not isinstance(text, str):
            raise EditError(f"{name} {command}: no file_text")
        return EditOp("create", path, text=text)
    if command == "str_replace":
        old = _first(a, "old_str", "old_string")
        if not isinstance(old, str):
            raise EditError(f"{name} str_replace: no old_str")
        new = _first(a, "new_str", "new_string") or ""
        count = a.get("expected_replacements")
        return EditOp(
            "str_replace", path, old=old, new=str(new), count=None if count is None else int(count)
        )
    if command == "insert":
        line = _first(a, "insert_line", "line")
        new = _first(a, "new_str", "text", "new_string")
        if not isinstance(line, int) or not isinstance(new, str):
            raise EditError(f"{name} insert: needs insert_line and new_str")
        return EditOp("insert", path, new=new, line=line)
    if command in READ_COMMANDS:
        return EditOp("view", path)
    if command == "undo_edit":
        return EditOp("undo_edit", path)
    raise EditError(f"{name}: unsupported edit command {command!r}")


_CLASSIC_EDIT = re.compile(r"^\s*edit\s+(\d+)\s*:\s*(\d+)\s*\n(.*?)\n?end_of_edit\s*$", re.S)
SWE_AGENT_EDIT_TOOLS = {"create", "edit", "insert", "append"}


def parse_swe_agent_edit(
    name: str, arguments: object, command: str | None, current: str | None
) -> EditOp:
    """An ``EditOp`` for SWE-agent's windowed tools; ``current`` is the open file (absolute)."""
    a = arguments if isinstance(arguments, dict) else {}
    cmd = (command or a.get("action") or "").strip()
    if name == "create":
        path = a.get("filename") or (cmd.split(maxsplit=1)[1] if len(cmd.split()) > 1 else None)
        if not path:
            raise EditError("create: no file name")
        return EditOp("create", str(path).strip().strip("'\""), text="")
    if current is None:
        raise EditError(f"{name}: no open file (no earlier open/create)")
    if name == "edit" and "search" in a:
        count = -1 if a.get("replace-all") or a.get("replace_all") else None
        return EditOp(
            "str_replace", current, old=str(a["search"]), new=str(a.get("replace", "")), count=count
        )
    if name == "edit":
        m = _CLASSIC_EDIT.match(cmd)
        if not m:
            raise EditError("edit: expected 'edit N:M' ... 'end_of_edit' or search/replace")
        return EditOp(
            "replace_lines", current, new=m.group(3), line=int(m.group(1)), end=int(m.group(2))
        )
    if name in ("insert", "append") and isinstance(a.get("text"), str):
        line = a.get("line") if name == "insert" else None
        return EditOp("insert" if line is not None else "append", current, new=a["text"], line=line)
    raise EditError(f"{name}: unsupported SWE-agent edit call")


def _replace_lines(op: EditOp, current: str) -> str:
    lines = current.split("\n")
    start, end = op.line or 1, op.end or 0
    if not (1 <= start and start - 1 <= end <= len(lines)):
        raise EditError(f"{op.path}: lines {start}:{end} outside 1..{len(lines)}")
    return "\n".join(lines[: start - 1] + (op.new or "").split("\n") + lines[end:])


def apply_edit(op: EditOp, current: str | None) -> str:
    """The file's new content after ``op`` (``current`` is None when the file does not exist).

    ``view`` and ``undo_edit`` are handled by the caller (a read, and the caller's history)."""
    if op.command == "create":
        return op.text or ""
    if current is None:
        raise EditError(f"{op.path}: no such file")
    if op.command == "str_replace":
        assert op.old is not None
        n = current.count(op.old) if op.old else 0
        if op.count == -1:
            if n < 1:
                raise EditError(f"{op.path}: search text not found")
            return current.replace(op.old, op.new or "")
        if op.count is None:
            if n != 1:
                raise EditError(f"{op.path}: old_str occurs {n} times, expected exactly once")
            return current.replace(op.old, op.new or "", 1)
        if n != op.count:
            raise EditError(f"{op.path}: old_string occurs {n} times, expected {op.count}")
        return current.replace(op.old, op.new or "")
    if op.command == "insert":
        lines = current.split("\n")
        assert op.line is not None
        if not 0 <= op.line <= len(lines):
            raise EditError(f"{op.path}: insert_line {op.line} outside 0..{len(lines)}")
        return "\n".join(lines[: op.line] + (op.new or "").split("\n") + lines[op.line :])
    if op.command == "replace_lines":
        return _replace_lines(op, current)
    if op.command == "append":
        sep = "" if not current or current.endswith("\n") else "\n"
        return current + sep + (op.new or "") + ("" if (op.new or "").endswith("\n") else "\n")
    raise EditError(f"{op.path}: {op.command} does not change the file")
