"""Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``; subagents in
``<session>/subagents/agent-<id>.jsonl``): one JSON object a line, ``type`` ``user`` /
``assistant`` (plus bookkeeping lines: ``summary``, ``file-history-snapshot``, ``system``,
``queue-operation``, ``progress``, which are passed over).

Claude Code writes one line per content block of an API response (text, thinking, tool_use),
each repeating the response's ``message.id`` and ``usage``: lines with one ``message.id`` are
one turn and their usage counts once. ``usage`` is Anthropic's: ``input_tokens`` excludes cache
reads and writes, so the canonical ``input_tokens`` adds ``cache_read_input_tokens`` and
``cache_creation_input_tokens``, and ``cached_tokens`` is the cache reads. Claude Code 2.x writes
a line per block while the response streams, with the usage known then: input and cache counts
are final, the output count is not (a line with ``stop_reason`` has the final one). Without
such a line the turn's ``output_tokens`` is null, ``extra.output_tokens_at_least`` keeps the
logged figure and ``totals.unknown`` says ``output_tokens``. ``tool_result``
blocks in user lines are the observations (``is_error`` as given). ``Bash`` is a shell call,
``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` are edits. The instruction is the first user
text that holds a request: Claude Code's own records in user lines (``/clear`` or ``/exit`` and
their caveat and output, ``<ide_opened_file>`` notices, system reminders) and a bare greeting
("hello") are passed over; a session with no other user text keeps its first one.

Sidechains (``isSidechain: true``: a Task subagent's calls) become trajectories of their own,
one per ``agentId``, with ``metadata.parent_session_id``; a subagent file is all sidechain.
Claude Code 1.0.x wrote its subagents' lines into the session file without ``agentId``: each
subagent run starts at a sidechain line with no parent, and its lines follow ``parentUuid``
from there (``_Chains``), so two runs are two trajectories, not one.

Layer: io. Departures: Anthropic reports no reasoning-token count, so ``reasoning_tokens`` is
null (the thinking text is kept as ``reasoning``); synthetic lines
(``message.model == "<synthetic>"``, written for aborted calls) are not model calls and are
skipped; a rewound session's abandoned branch is imported in file order (branches are not
separated).
"""

from __future__ import annotations

import re
from typing import Any

from agentpost.trajectory.importers import _common as c

NAME = "claude-code"
SHELL = {"Bash"}
EDIT = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
CONTROL = {"ExitPlanMode"}


def _call(block: dict) -> Any:
    name = str(block.get("name"))
    args = block.get("input")
    call = c.tool_call(name, args, block.get("id"))
    if name in SHELL:
        c.setf(call, "kind", "shell")
        c.setf(call, "command", c.as_str(args.get("command")) if isinstance(args, dict) else None)
    elif name in EDIT:
        c.setf(call, "kind", "edit")
    elif name in CONTROL:
        c.setf(call, "kind", "control")
    return call


def _result_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    return c.as_str(content) if isinstance(content, list) else None


# Text Claude Code writes into user lines that is not the user's request: local slash-command
# records (/clear, /exit and their output), IDE notices, system reminders. A text made only of
# these, or a bare greeting, is not taken as the instruction (the request comes later).
_NOT_REQUEST = re.compile(
    r"<(local-command-caveat|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|ide_opened_file|ide_selection|system-reminder)>.*?</\1>",
    re.S,
)
_GREETING = re.compile(
    r"\s*(hi|hello|hey|hiya|yo|good (morning|afternoon|evening))( there)?[\s!.,]*", re.I
)


def request_text(text: str | None) -> str | None:
    """``text`` without Claude Code's wrapper blocks (unchanged when it has none), or None when
    nothing of a request is left (only wrappers, or a bare greeting)."""
    if text is None:
        return None
    rest = _NOT_REQUEST.sub("", text)
    if not rest.strip() or _GREETING.fullmatch(rest):
        return None
    return text if rest == text else rest.strip()


# content block types each side may hold; the ones not imported (images, documents, redacted
# thinking) carry nothing a trajectory records. Any other type is named in the import's warnings.
ASSISTANT_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
USER_BLOCKS = frozenset({"text", "tool_result", "image", "document"})


class _Run:
    def __init__(self) -> None:
        self.turns: list = []
        self.by_msg: dict[str, Any] = {}
        self.instruction: str | None = None
        self.first_text: str | None = None  # the first user text, request or not (a fallback)
        self.model: str | None = None
        self.version: str | None = None
        self.lines: list = []
        self.unread = 0  # assistant lines whose content is of no shape known here
        self.unknown: dict[str, list[int]] = {}  # block type -> [count, first line]
        self.lineno = 0  # the line being read

    def _known(self, b: dict, known: frozenset) -> bool:
        kind = b.get("type")
        if kind in known:
            return True
        seen = self.unknown.setdefault(str(kind), [0, self.lineno])
        seen[0] += 1
        return False

    def warnings(self) -> list[list[str]]:
        return [[f"line {first}: $.message.content[].type",
                 f"{n} content block(s) of type '{kind}' not known here: not imported"]
                for kind, (n, first) in sorted(self.unknown.items())]  # fmt: skip

    def assistant(self, rec: dict, msg: dict) -> None:
        if msg.get("model") == "<synthetic>":
            return
        if not isinstance(msg.get("content"), str | list):
            self.unread += 1
            return
        mid = msg.get("id") or rec.get("requestId") or rec.get("uuid")
        t = self.by_msg.get(mid) if mid is not None else None
        usage = c.usage_from_openai(msg.get("usage"))
        if t is None:
            t = c.turn(len(self.turns), usage=usage, started_at=rec.get("timestamp"), extra={})
            self.turns.append(t)
            if mid is not None:
                self.by_msg[mid] = t
        elif usage is not None and t.usage is not None:
            seen = [x for x in (t.usage.output_tokens, usage.output_tokens) if x is not None]
            c.setf(t.usage, "output_tokens", max(seen) if seen else None)
        if msg.get("stop_reason") is not None:
            t.extra["final"] = True
        self.model = self.model or c.as_str(msg.get("model"))
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for b in blocks if isinstance(blocks, list) else []:
            if not isinstance(b, dict) or not self._known(b, ASSISTANT_BLOCKS):
                continue
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                c.setf(t, "text", b["text"] if t.text is None else f"{t.text}\n{b['text']}")
            elif b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                r = b["thinking"]
                c.setf(t, "reasoning", r if t.reasoning is None else f"{t.reasoning}\n{r}")
            elif b.get("type") == "tool_use":
                t.tool_calls.append(_call(b))

    def _text(self, rec: dict, text: str | None) -> None:
        """A user text: the instruction when it is the first one that holds a request."""
        if self.instruction is not None or rec.get("isMeta") or text is None:
            return
        if self.first_text is None:
            self.first_text = text
        self.instruction = request_text(text)

    def user(self, rec: dict, msg: dict) -> None:
        content = msg.get("content")
        if isinstance(content, str):
            self._text(rec, content)
            return
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict) or not self._known(b, USER_BLOCKS):
                continue
            if b.get("type") == "tool_result" and self.turns:
                cid = b.get("tool_use_id")
                owner = _owner(self.turns, cid)
                err = b.get("is_error") if isinstance(b.get("is_error"), bool) else None
                owner.observations.append(
                    c.observation(cid, _result_text(b.get("content")), None, err)
                )
            elif b.get("type") == "text":
                self._text(rec, c.as_str(b.get("text")))


def _layout(version: str | None) -> str:
    return (
        "claude-code/1.0" if version is not None and version.startswith("1.") else "claude-code/2"
    )


def _owner(turns: list[Any], call_id: Any) -> Any:
    """The latest turn that made call ``call_id``; the last turn when none did."""
    for i in range(len(turns) - 1, -1, -1):  # (not reversed(): mypyc 2.4 fails to compile it)
        t = turns[i]
        for x in t.tool_calls:
            if x.id == call_id:
                return t
    return turns[-1]


def _settle_output(turns: list) -> None:
    """A message no line of which has ``stop_reason`` was logged mid-stream: its output count
    is a lower bound (kept in ``extra.output_tokens_at_least``), the output tokens unknown."""
    for t in turns:
        final = t.extra.pop("final", False)
        if t.usage is not None and not final and t.usage.output_tokens is not None:
            t.extra["output_tokens_at_least"] = t.usage.output_tokens
            c.setf(t.usage, "output_tokens", None)


class _Chains:
    """Which agent each line belongs to: the main session (``""``), a subagent's ``agentId``
    (Claude Code 2.x), or, for 1.0.x sidechains, which carry no ``agentId``, the subagent run
    whose first line (``parentUuid`` null or outside the sidechains) the line descends from:
    ``sidechain-1``, ``sidechain-2``... in order of their first lines."""

    def __init__(self) -> None:
        self.of: dict[Any, str] = {}  # uuid -> key
        self.roots = 0

    def key(self, rec: dict, message: bool) -> str | None:
        if not rec.get("isSidechain"):
            return ""  # (a main-chain parent starts a new sidechain run: not remembered)
        if rec.get("agentId"):
            key = str(rec["agentId"])
        else:
            parent = self.of.get(rec.get("parentUuid"))
            if parent:
                key = parent
            elif message:
                self.roots += 1
                key = f"sidechain-{self.roots}"
            else:
                return None
        uid = rec.get("uuid")
        if isinstance(uid, str):
            self.of[uid] = key
        return key


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    runs: dict[str, _Run] = {}
    session = None
    chains = _Chains()
    for lineno, rec in lines:
        if not isinstance(rec, dict):
            raise ctx.fail(f"line {lineno}", "expected an object")
        kind = rec.get("type")
        message = kind in ("user", "assistant")
        key = chains.key(rec, message)
        if not message or key is None:
            continue
        msg = c.req(ctx, rec, "message", f"line {lineno}: $", dict)
        session = session or c.as_str(rec.get("sessionId"))
        run = runs.setdefault(key, _Run())
        run.version = run.version or c.as_str(rec.get("version"))
        if keep_raw:
            run.lines.append(rec)
        run.lineno = lineno
        if kind == "assistant":
            run.assistant(rec, msg)
        else:
            run.user(rec, msg)
    if not runs:
        raise c.NotATrajectory("Claude Code session with no messages")
    if not any(r.turns for r in runs.values()) and any(r.unread for r in runs.values()):
        raise ctx.fail(
            "$.message.content",
            "a Claude Code session of a layout not known here: no "
            "assistant line has message.content as text or a list of content blocks",
        )
    for run in runs.values():
        _settle_output(run.turns)
    sid = session or ctx.path.stem
    out = []
    for key, run in runs.items():
        meta: dict[str, Any] = {"session_id": sid}
        if key:
            meta["parent_session_id"] = sid
            meta["agent_id"] = key
        traj = c.trajectory(
            ctx,
            NAME,
            id=f"{sid}:{key}" if key else sid,
            agent="claude-code",
            agent_version=run.version,
            model=run.model,
            instruction=run.instruction if run.instruction is not None else run.first_text,
            turns=run.turns,
            keep_raw=keep_raw,
            raw=run.lines,
            metadata=meta | c.import_note(_layout(run.version), run.warnings()),
        )
        if any("output_tokens_at_least" in t.extra for t in run.turns):
            traj.totals.unknown = ["output_tokens"]
        out.append(traj)
    return out
