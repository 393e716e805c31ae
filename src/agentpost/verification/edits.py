"""File-editing tool semantics for replay: SWE-agent / OpenHands ``str_replace_editor`` (create,
str_replace, insert, view, undo_edit), plain ``write``/``write_file`` tools, and Gemini CLI's
``replace`` (old_string/new_string with ``expected_replacements``).

``parse_edit`` turns a tool call's arguments into an ``EditOp``; ``apply_edit`` computes the
new file content from the old. Both are pure string functions with no imports beyond the
standard library, because replay ships this module's source into the sandbox and runs it there
(the file is read and written by the sandbox, never by the host).

Departures from the tools: ``create`` overwrites an existing file (replay only applies an edit
that the recorded observation says succeeded, and some tool versions allow the overwrite);
SWE-agent's classic windowed ``edit N:M`` needs the open-file state of its custom shell tools
and is not supported (the call fails replay, visibly).

Layer: pure.
"""

from __future__ import annotations

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
    count: int | None = None  # str_replace: required occurrences (None: exactly one)


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
    raise EditError(f"{op.path}: {op.command} does not change the file")
