"""Unified diffs: split into file sections, strip sections that touch tests, judge validity.

Spec b.6: hunks touching hidden test files are stripped before applying; a diff that then holds
nothing (or never held a file section with a hunk) earns −1. We strip whole file sections (a
section only ever touches one file), and treat as a test file any path with a ``tests``/``test``
directory component or a ``test_*.py`` / ``*_test.py`` / ``conftest.py`` name.

Layer: pure.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_TEST_DIRS = {"tests", "test"}


@dataclass(frozen=True)
class FileSection:
    path: str  # the target path with a/ b/ prefixes removed ("/dev/null" never: falls back to old)
    text: str
    hunks: int
    binary: bool = False


def _clean(path: str) -> str:
    path = path.split("\t")[0].strip()
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path.lstrip("/")


def _section_path(lines: list[str]) -> str:
    old = new = ""
    for line in lines:
        if line.startswith("--- ") and not old:
            old = _clean(line[4:])
        elif line.startswith("+++ ") and not new:
            new = _clean(line[4:])
        elif line.startswith("diff --git ") and not (old or new):
            parts = line.split()
            if len(parts) >= 4:
                new = _clean(parts[3])
    if new and new != "dev/null":
        return new
    return old


def split_sections(diff: str) -> list[FileSection]:
    """File sections of a unified diff (git style or plain ``---``/``+++`` pairs). O(lines)."""
    lines = diff.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.startswith("diff --git ")]
    if not starts:  # plain diff: a section starts at a '---' line followed by '+++'
        starts = [
            i
            for i, ln in enumerate(lines[:-1])
            if ln.startswith("--- ") and lines[i + 1].startswith("+++ ")
        ]
    sections = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        chunk = lines[start:end]
        hunks = sum(1 for ln in chunk if _HUNK.match(ln))
        binary = any(ln.startswith(("Binary files", "GIT binary patch")) for ln in chunk)
        sections.append(FileSection(_section_path(chunk), "".join(chunk), hunks, binary))
    return sections


def is_test_path(path: str) -> bool:
    parts = posixpath.normpath(path).split("/")
    name = parts[-1]
    if _TEST_DIRS.intersection(parts[:-1]):
        return True
    return (
        (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


@dataclass(frozen=True)
class PatchVerdict:
    """What a submitted diff holds. ``kind``: ok | empty | invalid | tests_only."""

    kind: str
    patch: str  # the diff with test sections removed (what gets applied)
    stripped: tuple[str, ...]
    kept: tuple[str, ...]


def inspect_patch(diff: str | None) -> PatchVerdict:
    """Classify a candidate diff and strip its test-file sections."""
    if diff is None or not diff.strip():
        return PatchVerdict("empty", "", (), ())
    sections = [s for s in split_sections(diff) if s.hunks > 0 or s.binary or _is_pure_mode(s)]
    if not sections:
        return PatchVerdict("invalid", "", (), ())
    stripped = tuple(s.path for s in sections if is_test_path(s.path))
    kept = [s for s in sections if not is_test_path(s.path)]
    if not kept:
        return PatchVerdict("tests_only", "", stripped, ())
    text = "".join(s.text if s.text.endswith("\n") else s.text + "\n" for s in kept)
    return PatchVerdict("ok", text, stripped, tuple(s.path for s in kept))


def _is_pure_mode(section: FileSection) -> bool:
    """A git section that only deletes/renames a file or changes its mode (no hunks)."""
    return any(
        ln.startswith(("deleted file mode", "rename from", "new mode"))
        for ln in section.text.splitlines()
    )
