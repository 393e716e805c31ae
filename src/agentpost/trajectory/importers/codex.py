"""OpenAI Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): lines
``{timestamp, type, payload}`` with ``type`` ``session_meta``, ``turn_context``,
``response_item`` (the Responses-API items: ``message``, ``reasoning``, ``function_call``,
``function_call_output``, ``custom_tool_call`` and its output, ``local_shell_call``) and
``event_msg`` (UI events; ``token_count`` carries usage).

One turn is one model call: the response items the model produced, up to the ``token_count``
event Codex writes when that response completes. Its ``info.last_token_usage`` is the call's
usage (``input_tokens`` includes ``cached_input_tokens``; ``output_tokens`` includes
``reasoning_output_tokens``); a ``token_count`` whose ``total_token_usage`` did not change (a
rate-limit update) closes nothing. Tool outputs join their call by ``call_id``; the exit code
is read from the output's ``metadata.exit_code`` (JSON output) or its ``Exit code: N`` line.
``shell``/``exec_command``/``local_shell_call`` are shell calls (``command`` joined when it is a
list), ``apply_patch`` is an edit.

Layer: io. Departure: the reasoning text is the item's ``summary`` (the full reasoning is
encrypted in the file); the instruction is the first user message that is not Codex's own
context preamble (``<environment_context>``, ``<user_instructions>``, AGENTS.md).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Usage

NAME = "codex"
SHELL = {"shell", "exec_command", "local_shell", "container.exec", "shell_command"}
EXIT_LINE = re.compile(r"^Exit code: (-?\d+)$", re.M)
PREAMBLE = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")


def _text(content: Any) -> str | None:
    if not isinstance(content, list):
        return c.as_str(content)
    parts: list[str] = [
        t for p in content if isinstance(p, dict) and isinstance(t := p.get("text"), str)
    ]
    return "\n".join(parts) if parts else None


def _command(args: Any) -> str | None:
    cmd = args.get("command") if isinstance(args, dict) else None
    if cmd is None and isinstance(args, dict):
        cmd = args.get("cmd")
    if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
        if len(cmd) == 3 and cmd[0] in ("bash", "sh", "zsh") and cmd[1] in ("-lc", "-c"):
            return cmd[2]
        return shlex.join(cmd)
    return cmd if isinstance(cmd, str) else None


def _call(p: dict) -> Any:
    kind = p.get("type")
    name = str(p.get("name") or ("local_shell" if kind == "local_shell_call" else kind))
    args = p.get("arguments") if kind == "function_call" else p.get("input") or p.get("action")
    call = c.tool_call(name, args, p.get("call_id") or p.get("id"))
    if name in SHELL:
        c.setf(call, "kind", "shell")
        c.setf(call, "command", _command(call.arguments))
    elif name == "apply_patch":
        c.setf(call, "kind", "edit")
    return call


def _output(p: dict) -> Any:
    out = p.get("output")
    text, code = out if isinstance(out, str) else None, None
    parsed = c.parse_args(out) if isinstance(out, str) and out.startswith("{") else None
    if isinstance(parsed, dict):
        text = c.as_str(parsed.get("output")) if "output" in parsed else text
        meta = c.as_dict(parsed.get("metadata"))
        code = c.as_int(meta.get("exit_code"))
    elif isinstance(out, dict):
        text = c.as_str(out.get("content")) or c.as_str(out.get("output"))
    if code is None and text:
        m = EXIT_LINE.search(text[:400])
        code = c.as_int(m.group(1)) if m else None
    return c.observation(p.get("call_id"), text, code)


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    return c.new_usage(
        input_tokens=c.as_int(u.get("input_tokens")),
        cached_tokens=c.as_int(u.get("cached_input_tokens")),
        output_tokens=c.as_int(u.get("output_tokens")),
        reasoning_tokens=c.as_int(u.get("reasoning_output_tokens")),
        source="reported",
        cost_usd=None,
    )


class _Run:
    def __init__(self) -> None:
        self.turns: list = []
        self.open: Any = None
        self.calls: dict[str, Any] = {}
        self.instruction: str | None = None
        self.last_total: Any = None
        # each distinct ``token_count``: (line, turns made before it, the turn then open, info)
        self.counts: list[tuple[int, int, Any, dict]] = []

    def _turn(self, ts: Any) -> Any:
        if self.open is None:
            self.open = c.turn(len(self.turns), started_at=ts)
            self.turns.append(self.open)
        return self.open

    def item(self, p: dict, ts: Any) -> bool:
        """Add one response item; True when it is the model's output (a model call's item)."""
        kind = p.get("type")
        if kind == "message":
            text = _text(p.get("content"))
            if p.get("role") == "assistant":
                t = self._turn(ts)
                c.setf(t, "text", text if t.text is None else f"{t.text}\n{text}")
                return True
            if p.get("role") == "user" and self.instruction is None and text:
                if not text.lstrip().startswith(PREAMBLE):
                    self.instruction = text
        elif kind == "reasoning":
            summary = _text(p.get("summary"))
            t = self._turn(ts)
            if summary:
                c.setf(
                    t, "reasoning", summary if t.reasoning is None else f"{t.reasoning}\n{summary}"
                )
            return True
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call = _call(p)
            self._turn(ts).tool_calls.append(call)
            if call.id is not None:
                self.calls[call.id] = self.open
            return True
        elif kind in ("function_call_output", "custom_tool_call_output"):
            owner = self.calls.get(str(p.get("call_id"))) or (
                self.turns[-1] if self.turns else None
            )
            if owner is not None:
                owner.observations.append(_output(p))
        return False

    def token_count(self, p: dict, lineno: int) -> None:
        """A ``token_count`` whose running total changed ends a model call (its place among
        the call's items is decided once the whole file is read: ``place_usage``)."""
        info = p.get("info") if isinstance(p.get("info"), dict) else None
        if info is None or info.get("total_token_usage") == self.last_total:
            return
        self.last_total = info.get("total_token_usage")
        self.counts.append((lineno, len(self.turns), self.open, info))
        self.open = None


def place_usage(run: _Run) -> tuple[str, list[list[str]]]:
    """Give each ``token_count`` to the call it counts, and say which layout the file has.

    Codex 0.104 writes a call's ``token_count`` after that call's items; 0.58 wrote it before
    them. Decided from the data: when the first count came before any model item, every count
    belongs to the call that starts after it (``count-before-items``), else to the call it ends
    (``count-after-items``). Returns the layout and the cross-check findings."""
    warnings: list[list[str]] = []
    counts = run.counts
    before = bool(counts) and counts[0][1] == 0 and counts[0][2] is None and bool(run.turns)
    for line, made, open_turn, info in counts:
        usage = _usage(info.get("last_token_usage"))
        if before:
            target = run.turns[made] if made < len(run.turns) else None
        else:
            target = open_turn
        if target is None:
            warnings.append([f"line {line}: token_count", "counts no model call in this file"])
        elif target.usage is not None:
            warnings.append([f"line {line}: token_count", "a second count for one model call"])
        else:
            c.setf(target, "usage", usage)
    warnings += _running_total_checks(counts)
    return ("codex/count-before-items" if before else "codex/count-after-items"), warnings


_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def _running_total_checks(counts: list) -> list[list[str]]:
    """``total_token_usage`` is a running total: it never goes down, and each step is that
    call's ``last_token_usage``; a step that differs means a count was lost or doubled."""
    out: list[list[str]] = []
    prev: dict = {}
    for line, _, _, info in counts:
        total, last = (
            c.as_dict(info.get("total_token_usage")),
            c.as_dict(info.get("last_token_usage")),
        )
        for k in _KEYS:
            a, b, d = c.as_int(total.get(k)), c.as_int(prev.get(k, 0)), c.as_int(last.get(k))
            if a is None or b is None:
                continue
            if a < b:
                out.append([f"line {line}: total_token_usage.{k}", f"went down ({b} to {a})"])
            elif d is not None and a - b != d:
                out.append(
                    [
                        f"line {line}: last_token_usage.{k}",
                        f"{d}, but the running total grew by {a - b} (a count lost or doubled)",
                    ]
                )
        prev = total
    return out[:5]


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    run = _Run()
    meta: dict[str, Any] = {}
    model = None
    known = 0
    for lineno, rec in lines:
        if not isinstance(rec, dict):
            raise ctx.fail(f"line {lineno}", "expected an object")
        kind, p = rec.get("type"), rec.get("payload")
        if not isinstance(p, dict):
            if kind in ("session_meta", "response_item", "event_msg", "turn_context"):
                raise ctx.fail(f"line {lineno}: $.payload", "missing required field")
            continue
        if kind == "session_meta":
            meta = p
        elif kind == "turn_context":
            model = model or c.as_str(p.get("model"))
        elif kind == "response_item":
            known += 1
            run.item(p, rec.get("timestamp"))
        elif kind == "event_msg" and p.get("type") == "token_count":
            run.token_count(p, lineno)
    if not known and not meta:
        raise ctx.fail(
            "line 1",
            "a Codex rollout of a layout not known here: expected lines "
            '{"type": "session_meta" | "response_item" | "event_msg", "payload": {...}}',
        )
    layout, warnings = place_usage(run)
    sid = c.as_str(meta.get("id")) or ctx.path.stem
    git = c.as_dict(meta.get("git"))
    return [
        c.trajectory(
            ctx,
            NAME,
            id=sid,
            agent="codex",
            agent_version=c.as_str(meta.get("cli_version")),
            model=model or c.as_str(meta.get("model")),
            instruction=run.instruction,
            system_prompt=c.as_str(meta.get("instructions")),
            turns=run.turns,
            keep_raw=keep_raw,
            raw=[r for _, r in lines],
            metadata={
                k: v
                for k, v in {
                    "cwd": meta.get("cwd"),
                    "originator": meta.get("originator"),
                    "model_provider": meta.get("model_provider"),
                    "git_commit": git.get("commit_hash"),
                }.items()
                if v is not None
            }
            | c.import_note(layout, warnings),
        )
    ]
