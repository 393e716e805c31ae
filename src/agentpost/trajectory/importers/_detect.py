"""Format detection: a file's format from its name and first bytes, or from its parsed data.

Layer: io. Compiled with the importers (``trajectory/_native.py``): it runs for every file.
Its searches go through libc's ``memmem`` (``_findc.c``) when that build is present, else
``bytes.find``; the answers are the same.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.trajectory.importers import harbor
from agentpost.trajectory.importers._common import NotATrajectory

HEAD = 65536


# agentpost's own documents start with their format: {"format": "agentpost.run/1", ...}
_OWN_FORMAT = re.compile(rb'\{\s*"format"\s*:\s*"(agentpost\.[^"]{1,80})"')


_LEADING_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what ``bytes.strip`` strips
NEAR = 8192  # most markers sit near the top; mini's and eval's may not


def _memmem() -> Any:
    """``_findc.find`` (memmem), built with the compiled import path; None without it."""
    try:
        from agentpost.trajectory.importers._findc import find  # type: ignore  # a C module, no stubs
    except ImportError:
        return None
    return find


_memmem_find = _memmem()
LONG = 1024  # shorter ranges: ``bytes.find`` is as quick
_QUOTED: dict[bytes, bytes] = {}  # key -> b'"key"'


def find(raw: bytes, needle: bytes, start: int, end: int) -> int:
    """``raw.find(needle, start, end)``, through ``memmem`` when it is built (the same answer:
    a test compares the two): on JSON text it finds a key about 3x faster, and detection makes
    about ten such searches per file."""
    if _memmem_find is None or end - start < LONG:
        return raw.find(needle, start, end)
    return _memmem_find(raw, needle, start, end)


class _Head:
    """The first bytes of a file, searched for ``"key": value`` markers. Searches are bounded
    finds in the bytes given, never slices of them (a 64 KiB copy per slice adds up over a
    folder of small files); each key's first place is remembered, since the rules ask about
    the same keys near the top and deep, more than once."""

    def __init__(self, head: bytes, start: int = 0):
        self.raw = head
        self.full = min(len(head), HEAD)
        self.near = min(len(head), NEAR)
        self.first = head[start : min(start + 200, self.full)]  # from the first non-space byte
        self.seen: dict[bytes, tuple[int, int]] = {}  # needle -> (searched up to, first index)

    def _first(self, needle: bytes, end: int) -> int:
        """``self.raw.find(needle, 0, end)``, from what an earlier search found where it can."""
        known = self.seen.get(needle)
        if known is not None:
            searched, i = known
            if i >= 0:  # the first place overall: in range, or nothing is
                return i if i + len(needle) <= end else -1
            if searched >= end:
                return -1
        i = find(self.raw, needle, 0, end)
        self.seen[needle] = (end, i)
        return i

    def has(self, key: bytes, value: bytes = b"", deep: bool = False) -> bool:
        """``"key": value`` with or without the space JSON writers put after the colon."""
        end = self.full if deep else self.near
        raw = self.raw
        quoted = _QUOTED.get(key)
        if quoted is None:  # formatting it per call cost more than most searches
            quoted = _QUOTED[key] = b'"%s"' % key
        i = self._first(quoted, end)
        if not value or i < 0:
            return i >= 0
        # one scan for the key, then each occurrence's colon and value (not a scan per form)
        n = len(quoted)
        while i >= 0:
            j = i + n + 1  # past the colon
            if raw[i + n : j] == b":" and (
                (raw.startswith(value, j) and j + len(value) <= end)
                or (raw.startswith(b" " + value, j) and j + 1 + len(value) <= end)
            ):
                return True
            i = find(raw, quoted, i + 1, end)
        return False

    def near_has(self, marker: bytes) -> bool:
        return self._first(marker, self.near) >= 0


def _companion(name: str, h: _Head) -> None:
    """Raise ``NotATrajectory`` for files that sit beside trajectories but are not ones
    (including agentpost's own outputs, so a run or demo folder imports cleanly)."""
    own = _OWN_FORMAT.match(h.first)
    if own and not own.group(1).startswith(b"agentpost.trajectory/"):
        raise NotATrajectory(f"agentpost output ({own.group(1).decode()}), not a trajectory")
    if name == "judge_answers.jsonl" and h.has(b"judge") and h.has(b"case_id"):
        raise NotATrajectory("agentpost diagnose judge answers, not a trajectory")
    if name in ("grades.jsonl", "labels.jsonl") and h.has(b"func") and h.has(b"sec"):
        raise NotATrajectory("agentpost security grades, not a trajectory")
    if name.endswith((".yaml", ".yml")):
        if h.near_has(b"instances_by_exit_status"):
            raise NotATrajectory("mini-swe-agent exit-status index")
        if name in ("args.yaml", "config.yaml") and h.near_has(b"agent:"):
            raise NotATrajectory("SWE-agent run config, read with the run's .traj files")
        raise NotATrajectory("YAML file, not a trajectory")
    if name == "result.json" and h.has(b"verifier_result"):
        raise NotATrajectory("Harbor trial result, joined into its trajectory")
    why = harbor.companion(name, h)
    if why is not None:
        raise NotATrajectory(why)
    if name == "metadata.json" and (
        h.has(b"conversation_id") or h.has(b"agent_class") or h.has(b"eval_output_dir")
    ):
        raise NotATrajectory("OpenHands session or run metadata, read with its trajectories")
    if name == "base_state.json" and h.has(b"agent"):
        raise NotATrajectory("OpenHands V1 conversation state, read with its events/ folder")
    if name == "report.json" and h.has(b"tests_status"):
        raise NotATrajectory("SWE-bench report, joined into its trajectory")
    if name in ("all_preds.jsonl", "preds.json") or (
        h.has(b"model_patch") and not h.has(b"history", deep=True)
    ):
        raise NotATrajectory("predictions file (model patches), not a trajectory")


def _by_content(name: str, h: _Head) -> str | None:
    first, has = h.first, h.has
    if first.replace(b" ", b"").startswith(b'{"format":"agentpost.trajectory/'):
        return "agentpost"
    if has(b"schema_version", b'"ATIF'):
        return "atif"
    if name.endswith(".jsonl"):
        # Claude Code: every message line has a session id and its place in the message tree
        if has(b"sessionId") and (has(b"parentUuid") or has(b"isSidechain")):
            return "claude-code"
        # Codex rollout: {"timestamp", "type": "session_meta" | "response_item" ..., "payload"}
        if has(b"payload") and (
            has(b"type", b'"session_meta"') or has(b"type", b'"response_item"')
        ):
            return "codex"
    if name.endswith(".traj"):
        return "swe-agent"
    # mini-swe-agent writes ``info`` first; its markers can sit deep (after a long config)
    if first[:40].replace(b" ", b"").replace(b"\n", b"").startswith(b'{"info":') and (
        has(b"mini_version", deep=True) or has(b"trajectory_format", b'"mini-swe-agent', True)
    ):
        return "mini-swe-agent"
    if name.endswith(".jsonl") and (has(b"history", deep=True) or has(b"test_result")):
        # evaluation output (``instance_id``: v0 or V1 events), resolver output (``issue``),
        # the 2024 OpenDevin output (``history`` of [action, observation] pairs), a run a line
        if has(b"instance_id") or (has(b"issue") and has(b"git_patch", deep=True)):
            return "openhands-eval"
        if has(b"history", b"[[", deep=True):
            return "openhands-eval"
    if first.startswith(b"{") and has(b"kind") and has(b"source"):
        if b"Event" in first or name.endswith(".jsonl"):
            return "openhands-v1"
    if first.startswith(b"[") and (
        has(b"kind", b'"SystemPromptEvent"')
        or has(b"kind", b'"MessageEvent"')
        or has(b"kind", b'"ActionEvent"')
    ):
        return "openhands-v1"  # a JSON list of V1 events (their "action" is no v0 action)
    if first.startswith(b"[") and has(b"source", deep=True):
        if has(b"action", deep=True) or has(b"observation", deep=True):
            return "openhands-v0"
    if has(b"sessionId") and has(b"messages"):
        return "gemini-cli"
    if has(b"mini_version", deep=True):  # mini-swe-agent with another key first
        return "mini-swe-agent"
    if has(b"messages") and has(b"response", deep=True):
        return "openai-chat"
    if first.startswith(b"[") and first[1:].lstrip().startswith(b"{") and has(b"role", deep=True):
        return "openai-chat"
    return None


def detect(path: Path, head: bytes) -> str | None:
    """Format name from the file name and its first bytes; ``None`` when undecided.

    ``head`` may be the whole file: only its first ``HEAD`` bytes are read. Raises
    ``NotATrajectory`` for known companion files (SWE-bench exit-status index and reports,
    SWE-agent predictions, Harbor results) and ``InputError`` for empty or binary files.
    """
    end = min(len(head), HEAD)
    lead = _LEADING_SPACE.match(head, 0, end)  # always matches (the pattern may be empty)
    start = lead.end() if lead else 0
    if start == end:
        raise InputError(path, "byte 0", "empty file")
    nul = head.find(b"\x00", 0, end)
    if nul >= 0:
        raise InputError(path, f"byte {nul}", "binary data, not a JSON trajectory")
    h = _Head(head, start)
    _companion(path.name, h)
    return _by_content(path.name, h)


def detect_data(data: Any) -> str | None:
    """Format name from a parsed document (when the first bytes did not decide)."""
    if isinstance(data, dict):
        keys = data.keys()
        if "schema_version" in keys and "steps" in keys:
            return "atif"
        if "messages" in keys and "info" in keys:
            return "mini-swe-agent"
        if "trajectory" in keys or ("history" in keys and "environment" in keys):
            return "swe-agent"
        if "sessionId" in keys:
            return "gemini-cli"
        if "messages" in keys:
            return "openai-chat"
        if "history" in keys and not isinstance(data.get("history"), list):
            return None
        if "history" in keys:
            return "swe-agent"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "kind" in data[0] and "source" in data[0]:
            return "openhands-v1"
        if "source" in data[0]:
            return "openhands-v0"
        if "role" in data[0]:
            return "openai-chat"
    return None
