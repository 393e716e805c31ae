"""What each tool call changed, and whether that change is a change to what the task is about.

The evidence layer of the SCVD judges (issue 29; ``data/real-labels.md`` sections 2 and 4). For
every call it gives the files it changed (``Change``: path, operation, role) and which evidence
said so (``CallChanges.evidence``), strongest first:

1. ``state-diff``: the run recorded a snapshot after each call (``run --snapshots``); the files
   whose content differs from the previous snapshot, with added/modified/deleted known exactly;
2. ``edit-tool``: an editor call names its path (``str_replace_editor``, Claude Code
   ``Edit``/``Write``, Gemini CLI ``write_file``/``replace``, SWE-agent's windowed ``edit``,
   OpenHands agentskills in IPython) and its reply says whether it applied;
3. ``command``: a shell command's parsed writes (redirects, ``sed -i``, heredocs, ``cp``/``mv``,
   ``git checkout FILE``, a recorded script run by name whose body opens a file for writing).

A change's ``role`` says what it is to the task (``target.Layout``): ``target`` (tracked source of a
SWE task, a file the instruction names (a new one only by a project-file name such as LICENSE in a
SWE task: other files an issue names are the reporter's scripts), a file a terminal task or session creates in its work
directory), ``scratch`` (reproduction and probe files, ``/tmp``, new files at a SWE repository's
root or in new directories), ``fixture`` (test files and apps the agent makes for its own check),
``setup`` (installs, virtualenvs, site-packages, directories, an empty file ``touch`` makes unless
the instruction asks for an empty one), ``debug`` (print/log lines added to
source), ``cosmetic`` (comment-only or formatter changes). ``revert`` marks an operation that
restores a file (``git checkout FILE``, ``git stash``): it changes the target without building a
candidate.

Rules added in seats/3 (issue 29, classes held-out v3 showed): ``mkdir -p a/b/c`` makes every
parent not seen before the agent's, and any file under a directory named for reproduction or
scratch (``reproduce_issue/``, ``repro/``) is scratch, so the agent's reproduction package is never
a candidate; a code line commented out (``sed 's/^/#/'``, or an editor edit whose comment lines are
the removed code) is a change, not a cosmetic edit; an edit that only adds imports is marked
(``IMPORT_ONLY``: the seats take it as the candidate only when nothing else follows); a ``sed``
whose replacement is its pattern less a ``print``/``DEBUG`` call removes instrumentation
(``debug``); a ``sed -i s...`` whose pattern the next read of the file still shows, literally, with
no trace of the replacement did not apply; a Python script run that writes the target and ends
in its traceback with a non-zero exit did not apply.

Rules added in seats/4 (issue 29, classes held-out v4 showed): a print behind a one-line guard
(``if x: print(...)``) is a debug line; ``sed -i '/pat/a \\    print(...)'`` (a space before the
backslash) is read like ``a\\``; after a one-line debug insertion ``sed -i 'Na\\'`` (or ``'Ni\\'``),
a ``sed -i 'Md'`` of the same file that deletes exactly that line (M = N+1, or N), with no other
change of the file between, removes instrumentation (``debug``), not a candidate.

Departure from a full shell parser: commands are read by ``shell``'s segment reader;
what it cannot read changes nothing.

Layer: pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from agentpost.replay.edits import EditError, parse_edit, parse_swe_agent_edit
from agentpost.scvd import shell
from agentpost.scvd.target import Layout, layout_of, task_text
from agentpost.trajectory.calls import call_outputs, step_ids
from agentpost.trajectory.model import Observation, ToolCall, Trajectory

ROLES = ("target", "scratch", "fixture", "setup", "debug", "cosmetic", "unknown")
EVIDENCE = ("state-diff", "edit-tool", "command", "none")
# An edit the tool reports it did not apply.
NOT_APPLIED = re.compile(
    r"Your proposed edit has introduced new syntax error|have NOT been applied|No replacement was "
    r"performed|did not appear verbatim|No exact match found|Ran into \[Errno|has not been read yet|"
    r"doesn't want to proceed|tool use was rejected|NOT written to the file|Invalid `(?:path|new_str|"
    r"old_str|view_range)` parameter|Parameter `\w+` is required|Multiple occurrences of old_str|"
    r"already exists and is not empty|File does not exist|not found in the file|<tool_use_error>|"
    r"^\s*ERROR:",
    re.M,
)
_SHELL_FAILED = re.compile(r"^sed: |: No such file or directory|Permission denied|cannot create|"
                           r"^bash: .*: command not found", re.M)  # fmt: skip
SCRATCH_NAME = re.compile(
    r"(^|/)(reproduc\w*|repro\w*|debug\w*|scratch\w*|check_\w*|verify\w*|inspect\w*|apply_fix\w*|"
    r"temp\w*|tmp\w*|test_(?:fix|issue|repro|my|edge|new|bug)\w*|my_test\w*|new_funcs?|"
    r"modify_\w+|patch_\w+|run_test\w*|final_test\w*)\.[a-z]+$|(^|/)(__pycache__|\.pytest_cache|"
    r"result_images)/|\.pyc$|"
    # a file under a directory named as the agent's own reproduction or scratch package
    r"(^|/)(reproduc\w*|repro|repro_\w+|scratch\w*|test_(?:fix|issue|repro|bug)\w*|my_test\w*)/"
)
TEST_PATH = re.compile(r"(^|/)(tests?|testing|spec)/|(^|/)(test_[^/]*|[^/]*_test\.\w+|tests\.py|"
                       r"conftest\.py)$")  # fmt: skip
SETUP_PATH = re.compile(r"site-packages/|dist-packages/|(^|/)\.?venv/|node_modules/|\.egg-info|"
                        r"^/usr/|^/etc/apt|^~/\.|^/root/\.|(^|/)build(/|$)|(^|/)dist(/|$)")  # fmt: skip
_CODE_LINE = re.compile(r"\S")
_DEBUG_LINE = re.compile(
    r"^\s*(?:if\s[^:\n]+:\s*)?(print\s*\(|console\.(log|error|debug)\(|logging\.\w+\(|log\.\w+\(|logger\.\w+\(|"
    r"fmt\.Print|System\.(out|err)\.print|eprintln!|println!|dbg!|import pdb|breakpoint\(\))"
)
_COMMENT_LINE = re.compile(
    r"^\s*(#|//|/\*|\*|--|;)(?!.*\b(nolint|noqa|type:\s*ignore|eslint-disable|"
    r"pylint:\s*disable|ts-ignore|ts-expect-error|NOSONAR|pragma)\b)"
)
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+[\w.]+\s+import\s+\S|import\s+[\w.]+(?:\s+as\s+\w+)?\s*(?:,|$)|"
                          r"#include\s*[<\"]|use\s+[\w:]+;|require\(['\"])")  # fmt: skip
COMMENTS_OUT = "(comments out code)"  # a sed that puts a comment marker before lines
IMPORT_ONLY = "only import lines added"


def _uncomment(line: str) -> str:
    return re.sub(r"^\s*(#|//|--|;)\s?", "", line).strip()


_SKILL_EDIT = re.compile(r"\b(edit_file_by_replace|create_file|append_file|insert_content_at_line|"
                         r"edit_file)\(\s*['\"]([^'\"]+)['\"]")  # fmt: skip
_PATH_LITERAL = re.compile(r"['\"]((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w{0,6})['\"]")
_INLINE_PY = re.compile(r"^(python3?|python\d\.\d+)\s+(-c\b|-\s*<<|<<)")
_REVERT = re.compile(r"^git\s+(checkout|restore|stash|reset)\b")
_SED_TEXT = re.compile(
    r"""(?:^|\s)-i\S*\s+['"]?(?:/[^/]*/|\d+(?:,\d+)?)?\s*([aic])\s*\\?\s*(.*)""", re.S
)
INSTALL = re.compile(
    r"^(?:sudo\s+)?(?:pip3?|python3?\s+-m\s+pip|uv\s+pip|conda|mamba|apt(?:-get)?|yum|dnf|apk|brew|"
    r"npm|yarn|pnpm|gem|cargo|go|poetry)\s+(?:-\S+\s+)*(install|add|get|i|sync)\b|^(?:python3?\s+-m\s+)?"
    r"(?:venv|virtualenv)\b|^python3?\s+setup\.py\s+(develop|install)\b|^(?:wget|curl)\b.*\s(-o|-O)\b"
)


@dataclass(frozen=True)
class Change:
    path: str  # relative to the work root when inside it
    op: str  # write | create | touch | edit | delete | move | revert | install | mkdir | format | run
    role: str  # one of ROLES
    why: str


@dataclass(frozen=True)
class CallChanges:
    step: int
    index: int
    changes: tuple[Change, ...]
    evidence: str  # one of EVIDENCE
    applied: bool = True
    writer: int | None = None  # the last shell segment that changed the target (None: not shell)

    @property
    def target(self) -> bool:
        """The call changed what the task is about (a revert does not build a candidate)."""
        return self.applied and any(c.role == "target" and c.op != "revert" for c in self.changes)

    @property
    def revert(self) -> bool:
        return self.applied and any(c.op == "revert" and c.role == "target" for c in self.changes)

    def summary(self) -> dict:
        return {"evidence": self.evidence, "applied": self.applied,
                "changes": [[c.path, c.op, c.role, c.why] for c in self.changes]}  # fmt: skip


def added_lines(old: str | None, new: str | None) -> list[str]:
    """Lines of ``new`` that are not lines of ``old`` (blank lines dropped)."""
    before = set((old or "").splitlines())
    return [ln for ln in (new or "").splitlines() if ln not in before and _CODE_LINE.search(ln)]


def content_role(lines: list[str], removed: list[str] | None = None) -> str | None:
    """``debug`` when every added line prints or logs, ``cosmetic`` when every one is a comment
    (but not when the comments are the removed code lines commented out: disabling code is a
    change), ``setup`` when every one is an import (a preparation: it changes no behaviour by
    itself); None when some line is code (or nothing was added)."""
    if not lines:
        return None
    if lines == [COMMENTS_OUT]:
        return None
    if all(_COMMENT_LINE.match(ln) for ln in lines):
        code = {ln.strip() for ln in removed or [] if not _COMMENT_LINE.match(ln)}
        if code and code <= {_uncomment(ln) for ln in lines}:
            return None
        return "cosmetic"
    if all(_IMPORT_LINE.match(ln) or _COMMENT_LINE.match(ln) for ln in lines):
        return "setup"
    if all(_DEBUG_LINE.match(ln) or _COMMENT_LINE.match(ln) for ln in lines):
        return "debug"
    return None


def path_role(path: str, layout: Layout, new: bool, seen: set[str]) -> tuple[str, str]:
    """(role, reason) of a written path, from where it is, whether it existed, and the task."""
    rel = layout.rel(path)
    if "$" in rel or "`" in rel or "*" in rel:
        return "unknown", "a path the shell computes"
    if layout.is_named(rel) and (layout.kind != "swe" or not new or layout.names_project_file(rel)):
        # an issue names files of the reporter's machine (a new 'test.py' is their script), but
        # a new LICENSE or README it asks for is the requested change
        return "target", "named by the instruction"
    if SETUP_PATH.search(rel):
        return "setup", "environment path"
    if rel.startswith(tuple(shell.SCRATCH)) or SCRATCH_NAME.search(rel):
        return "scratch", "scratch or probe file"
    if not layout.inside(rel):
        return "scratch", "outside the work directory"
    if TEST_PATH.search(rel) and layout.kind == "swe":
        return "fixture", "test file (the task does not ask for tests)"
    if layout.kind != "swe":
        if any(not n.startswith("/") for n in layout.named) and new:
            return "scratch", "a new file the instruction does not name"
        return "target", "a file in the work directory"
    if not new:
        return "target", "tracked file"
    parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if parent and any(s == parent or s.startswith(parent + "/") for s in seen):
        return "target", "new file in an existing source directory"
    return "scratch", "new file outside the source tree"


_PATHISH = re.compile(
    r"(?<![\w.-])((?:\.?/)?(?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z]\w{0,6})(?![\w/])"
)
_FORMAT = re.compile(r"^(gofmt\s+-\w*w|go\s+fmt|black\b|ruff\s+format|isort\b|prettier\s+.*--write|"
                     r"cargo\s+fmt|autopep8\s+.*-i|yapf\s+.*-i|mise\s+run\s+fmt|make\s+fmt)")  # fmt: skip
_EDIT_NAMES = {"edit", "write", "multiedit", "notebookedit", "write_file", "replace", "create",
               "insert", "append", "str_replace_editor", "str_replace_based_edit_tool",
               "edit_file", "create_file", "file_editor"}  # fmt: skip


class _Reader:
    """Walks a trajectory's calls in order, remembering what the agent has seen and written."""

    def __init__(self, layout: Layout, empty_asked: bool = False):
        self.layout = layout
        self.empty_asked = empty_asked  # the instruction asks for an empty file: touch builds it
        self.seen: set[str] = set()  # paths (relative) seen in commands or outputs so far
        self.created: set[str] = set()  # files the agent created (untracked)
        self.scripts: dict[str, str] = {}  # recorded script path -> body
        self.open_file: str | None = None  # SWE-agent's windowed editor
        self.early: set[str] | None = None  # what was seen before the agent first wrote a file
        self.debug_line: dict[str, int] = {}  # file -> the line a sed debug insertion now holds

    def note(self, text: str | None, command: bool = False) -> None:
        """Remember the paths ``text`` mentions (a command: only its segments' first lines, so
        the body of a heredoc the agent writes does not count as evidence that a file exists)."""
        if command:
            text = "\n".join(seg.split("\n", 1)[0] for seg in shell.split_segments(text or ""))
        for m in _PATHISH.finditer(text or ""):
            rel = self.layout.rel(m.group(1))
            self.seen.add(rel)
            while "/" in rel:
                rel = rel.rsplit("/", 1)[0]
                self.seen.add(rel)

    def _created(self, rel: str) -> bool:
        return rel in self.created or any(rel.startswith(d + "/") for d in self.created)

    def change(
        self, path: str, op: str, content: list[str] | None = None, removed: list[str] | None = None
    ) -> Change:
        rel = self.layout.rel(path)
        if op == "delete":
            if self._created(rel) or rel not in self.seen:
                return Change(rel, op, "scratch", "removes a file the agent made or never saw")
        made = self._created(rel)
        if op in ("create", "write", "touch") and self.early is None:
            self.early = set(self.seen)
        early = self.early if self.early is not None else self.seen
        known = rel in self.seen if "/" in rel or self.layout.kind != "swe" else rel in early
        new = (op in ("create", "write", "touch") and not known) or made
        if new or op == "mkdir":
            self.created.add(rel)
        if op == "mkdir":  # mkdir -p: every parent not seen before is the agent's too
            parent = rel
            while "/" in parent:
                parent = parent.rsplit("/", 1)[0]
                if parent in self.seen:
                    break
                self.created.add(parent)
            return Change(rel, op, "setup", "directory")
        if op == "delete" and self.layout.kind == "swe" and "/" not in rel:
            return Change(rel, op, "scratch", "removes a file at the repository root")
        role, why = path_role(rel, self.layout, new, self.seen)
        if role == "target" and made and self.layout.kind == "swe":
            if not self.layout.names_project_file(rel):
                role, why = "scratch", "a file in a directory the agent made"
        if role == "target" and op == "touch" and not self.empty_asked:
            role, why = "setup", "an empty file (a stub, not an attempt)"
        if role == "target" and content is not None:
            special = content_role(content, removed)
            if special == "setup":  # stays a change of the target, read by the seats as a
                why = IMPORT_ONLY  # preparation when a later change follows
            elif special:
                role, why = special, f"only {special} lines added"
        if role == "target" and op == "edit" and content == ["(debug cleanup)"]:
            role, why = "debug", "removes debug lines"
        if role == "target" and op == "edit" and content == [] and removed:
            if all(_DEBUG_LINE.match(ln) for ln in removed):  # an editor removing debug prints
                role, why = "debug", "removes debug lines"
        return Change(rel, op, role, why)

    # -- editor tools ------------------------------------------------------------------------
    def edit_tool(self, call: ToolCall) -> list[Change] | None:
        args = call.arguments if isinstance(call.arguments, dict) else {}
        name = (call.name or "").lower()
        if isinstance(args.get("code"), str):  # OpenHands agentskills in IPython
            code = args["code"]
            hits = [self.change(p, "edit") for _, p in _SKILL_EDIT.findall(code)]
            return (
                hits + self.inline_writes(code)
                if hits or shell._INLINE_WRITE.search(code)
                else None
            )
        if call.kind != "edit" and name not in _EDIT_NAMES and args.get("command") not in (
            "create", "str_replace", "insert", "undo_edit", "view"):  # fmt: skip
            return None
        if isinstance(args.get("edits"), list) and args.get("file_path"):  # Claude MultiEdit
            olds = "\n".join(
                str(e.get("old_string", "")) for e in args["edits"] if isinstance(e, dict)
            )
            news = "\n".join(
                str(e.get("new_string", "")) for e in args["edits"] if isinstance(e, dict)
            )
            return [self.change(args["file_path"], "edit", added_lines(olds, news),
                                added_lines(news, olds))]  # fmt: skip
        try:
            if call.command is not None and call.kind == "edit" and not args.get("command"):
                op = parse_swe_agent_edit(call.name, call.arguments, call.command, self.open_file)
            else:
                op = parse_edit(call.name, args)
        except EditError:
            return None if args.get("command") == "view" else []
        if op.command == "view":
            return None
        if op.command == "create":
            if call.name == "create":
                self.open_file = op.path
            existed = self.layout.rel(op.path) in self.seen
            return [self.change(op.path, "edit" if existed else "create",
                                added_lines(None, op.text) if existed else None)]  # fmt: skip
        if op.command == "undo_edit":
            return [self.change(op.path, "revert")]
        return [
            self.change(op.path, "edit", added_lines(op.old, op.new), added_lines(op.new, op.old))
        ]

    # -- shell -------------------------------------------------------------------------------
    def inline_writes(self, body: str) -> list[Change]:
        if not shell._INLINE_WRITE.search(body):
            return []
        paths = shell._WRITE_TARGET.findall(body)
        if not paths:  # open(file_path, 'w') with the path in a variable: its literals
            paths = [p for p in _PATH_LITERAL.findall(body) if self.layout.rel(p) in self.seen]
        return [self.change(p, "write") for p in dict.fromkeys(paths)]

    def segment(self, seg: str) -> list[Change]:
        out: list[Change] = []
        for part in shell._pipe_parts(seg):
            words = shell.split_words(part)
            if not words:
                continue
            head = " ".join(words)
            w0 = words[0]
            if INSTALL.search(head) or shell.setup_install(words):
                out.append(
                    Change("(environment)", "install", "setup", "package install or download")
                )
                continue
            if w0 == "mkdir":
                out += [self.change(p, "mkdir") for p in shell._args(words)]
                continue
            if _FORMAT.search(head):
                out.append(Change("(formatter)", "format", "cosmetic", "formatter run"))
                continue
            if _REVERT.search(head):
                files = [a for a in shell._args(words)[1:] if a not in ("HEAD",) and "." in a]
                for p in files or ["(all)"]:
                    ch = (
                        self.change(p, "revert")
                        if p != "(all)"
                        else Change(p, "revert", "target", "reset")
                    )
                    out.append(ch)
                continue
            body = shell.heredoc_files(part)
            self.scripts.update(body)
            if _INLINE_PY.search(part):
                out += self.inline_writes(part)
                continue
            script = shell._script_path(words, self.scripts)
            if script is not None and not shell._targets(part):
                out += self.script_writes(script)
                continue
            mod = shell._modification(words, part)
            if mod is None:
                continue
            op = {"rm": "delete", "mv": "move", "touch": "create"}.get(w0, "write")
            if w0 in ("sed", "perl"):
                op = "edit"
            content = sed_content(part) if w0 == "sed" else None
            for p in mod or []:
                if (
                    p.startswith(("-", "+"))
                    or p in ("/dev/null",)
                    or ">" in p
                    or "<" in p
                    or re.fullmatch(r"[0-7]{3,4}|[ugoa]*[+-=][rwxXst]+", p)
                ):
                    continue
                if op == "write" and self.layout.rel(p) not in self.seen:
                    op_p = "create"
                elif op == "create" and w0 == "touch" and self.layout.rel(p) not in self.seen:
                    op_p = "touch"  # a new, empty file
                else:
                    op_p = op
                ch = self.change(p, op_p, content)
                if w0 == "sed" and op_p == "edit":
                    ch = self._debug_line(ch, part)
                out.append(ch)
        return out

    def _debug_line(self, ch: Change, part: str) -> Change:
        """Follow a one-line debug print a ``sed -i 'Na\\'``/``'Ni\\'`` inserted: a later ``sed -i
        'Md'`` of the same file that deletes exactly its line (M = N+1, or N) is debug cleanup.
        Any other change of the file forgets the line (numbers may have moved)."""
        ins = _SED_INSERT_AT.search(part)
        if ch.role == "debug" and ins and "\\n" not in part:
            n = int(ins.group(1))
            self.debug_line[ch.path] = n + 1 if ins.group(2) == "a" else n
            return ch
        held = self.debug_line.pop(ch.path, None)
        dele = _SED_DELETE_AT.search(part)
        if ch.role == "target" and dele and held == int(dele.group(2)):
            return Change(ch.path, ch.op, "debug", "removes debug lines")
        return ch

    def script_writes(self, script: str) -> list[Change]:
        body = self.scripts.get(script, "")
        if script.endswith(".py"):
            return self.inline_writes(body)
        out = []
        for seg in shell.split_segments(body):
            out += self.segment(seg)
        return out

    def shell_call(self, text: str) -> tuple[list[Change], int | None]:
        """The call's changes and the index of the last segment that changed the target."""
        out, writer = [], None
        for i, seg in enumerate(shell.split_segments(text)):
            chs = self.segment(seg)
            if any(c.role == "target" for c in chs):
                writer = i
            out += chs
        return out, writer


_SED_SUB = re.compile(r"""(?<![A-Za-z])s([/|#,])(?:(?!\1).)*\1((?:(?!\1).)*)\1""")
# s/^/#/, s/^\(\s*\)/\1# /: a comment marker put before each line (code commented out)
_SED_COMMENT_OUT = re.compile(
    r"""(?<![A-Za-z])s([/|,])\^(?:\\\(\\s\*\\\)|\\?\(\[ \]\*\\?\))?\1(?:\\1|&)?\s*(#|//|--)"""
)
_DEBUG_TEXT = re.compile(r"\bprint\(|DEBUG|console\.log\(")
SED_SUB_FULL = re.compile(
    r"""\bsed\s+-i\S*\s+(?:"|')s([|#,/])((?:(?!\1).)*)\1((?:(?!\1).)*)\1g?(?:"|')"""
)
_SED_DEL = re.compile(r"""['"]\s*/([^/]*)/\s*d\s*['"]|['"]\d+(?:,\d+)?d(?:;\d+d)*['"]""")


_SED_INSERT_AT = re.compile(r"""-i\S*\s+['"]?(\d+)([ai])\b""")
_SED_DELETE_AT = re.compile(r"""-i\S*\s+(['"]?)(\d+)d\1(?:\s|$)""")


def sed_content(part: str) -> list[str] | None:
    """The lines a ``sed -i`` adds (a/i/c text, or a substitution's replacement), or
    ``["(debug cleanup)"]`` when it only deletes lines that print or say DEBUG; None when unknown."""
    sub = SED_SUB_FULL.search(part)
    if sub and _DEBUG_TEXT.search(sub.group(2)) and not _DEBUG_TEXT.search(sub.group(3)):
        if sub.group(3).strip() and sub.group(3).strip() in sub.group(2):
            return ["(debug cleanup)"]  # the replacement is the pattern less a debug print
    m = _SED_DEL.search(part)
    if m and not _SED_SUB.search(part):
        pat = m.group(1) or ""
        return ["(debug cleanup)"] if re.search(r"DEBUG|print|console\.log", pat) else None
    if _SED_COMMENT_OUT.search(part):
        return [COMMENTS_OUT]
    m = _SED_TEXT.search(part)
    if m:
        return [ln for ln in m.group(2).replace("\\n", "\n").splitlines()]
    m = _SED_SUB.search(part)
    if m:
        return [m.group(2).replace("\\n", "\n")]
    return None


def _applied(obs: Observation | None, editor: bool) -> bool:
    if obs is None:
        return True
    text = (obs.text or "")[:1500]
    if editor:
        return not (obs.is_error or NOT_APPLIED.search(text))
    if obs.exit_code not in (None, 0) and _SHELL_FAILED.search(text):
        return False
    return not (obs.exit_code is None and obs.is_error and _SHELL_FAILED.search(text))


def call_changes(
    traj: Trajectory,
    diffs: Mapping[tuple[int, int], list[tuple[str, str]]] | None = None,
    layout: Layout | None = None,
) -> list[CallChanges]:
    """Every call's changes, in trajectory order. ``diffs`` maps (step, index) to the files a
    snapshot diff says the call changed, as (path, status) with status added/modified/deleted;
    where it has an entry, it decides (evidence ``state-diff``)."""
    layout = layout or layout_of(traj)
    rd = _Reader(layout, bool(re.search(r"\bempty\b", task_text(traj), re.I)))
    if layout.kind != "swe":  # a SWE issue names files of the reporter's machine, not the repo's
        rd.note(traj.instruction)
    out: list[CallChanges] = []
    calls: list[tuple[str, Observation | None]] = []  # each call's text and output, in order
    for step, turn in step_ids(traj).items():
        outs = call_outputs(turn)
        for j, call in enumerate(turn.tool_calls):
            obs = outs[j]
            text = shell_text(call)
            if call.name == "open" and call.command:  # SWE-agent's viewer
                parts = call.command.split()
                rd.open_file = parts[1].strip("'\"") if len(parts) > 1 else rd.open_file
            if diffs is not None and (step, j) in diffs:
                chs = []
                for path, status in diffs[(step, j)]:
                    op = {"added": "create", "deleted": "delete"}.get(status, "edit")
                    chs.append(rd.change(path, op))
                out.append(CallChanges(step, j, tuple(chs), "state-diff"))
            elif call.kind == "control" or shell.is_control(text):
                out.append(CallChanges(step, j, (), "none"))
            else:
                edit = rd.edit_tool(call)
                if edit is not None:
                    out.append(CallChanges(step, j, tuple(edit), "edit-tool" if edit else "none",
                                           _applied(obs, True)))  # fmt: skip
                else:
                    chs, writer = rd.shell_call(text) if text else ([], None)
                    ok = _applied(obs, False) and not _script_crashed(text, writer, obs)
                    out.append(CallChanges(step, j, tuple(chs), "command" if chs else "none",
                                           ok, writer))  # fmt: skip
            calls.append((text, obs))
            rd.note(text, command=True)
            rd.note(obs.text if obs is not None else None)
    return _unapplied_seds(out, calls)


def _script_crashed(text: str, writer: int | None, obs: Observation | None) -> bool:
    """The segment that writes the target runs a Python script or ``python -c`` and the call
    ends in that script's traceback with a non-zero exit: where it stopped is unknown, so the
    write is not taken as applied (an ``open(..., 'r')`` that fails before the write)."""
    if writer is None or obs is None or obs.exit_code in (None, 0):
        return False
    segs = shell.split_segments(text)
    seg = segs[writer] if writer < len(segs) else ""
    return (
        bool(re.match(r"python[\d.]*\s", seg))
        and writer == len(segs) - 1
        and bool(re.search(r"Traceback \(most recent call last\)", obs.text or ""))
    )


def _sed_literals(text: str) -> tuple[str, str] | None:
    """(pattern, replacement) of a one-substitution ``sed -i`` taken literally, or None."""
    m = SED_SUB_FULL.search(text)
    if not m or text.count("sed ") != 1:
        return None
    old, new = m.group(2), m.group(3)
    if len(old.strip()) < 6 or old.strip() in new or re.search(r"\\[1-9&]|&", new):
        return None  # the old text survives a replacement that keeps it
    return old, new


def _unapplied_seds(out: list[CallChanges], calls: list[tuple[str, Observation | None]]) -> list:
    """A ``sed -i s...`` whose substitution matched nothing: the next read of the file (before it
    changes again) still shows the pattern's text, literally, and not the replacement's. sed exits
    0 either way, so only the later read tells (``data/real-labels.md`` section 2)."""
    for i, ch in enumerate(out):
        lit = _sed_literals(calls[i][0]) if ch.target and ch.evidence == "command" else None
        if lit is None:
            continue
        files = {c.path.rsplit("/", 1)[-1] for c in ch.changes if c.role == "target"}
        for k in range(i + 1, len(out)):
            text, obs = calls[k]
            if out[k].changes and {c.path.rsplit("/", 1)[-1] for c in out[k].changes} & files:
                break
            if not any(f in text for f in files) or obs is None:
                continue
            shown = obs.text or ""
            plain = re.sub(r"\\([^\w\s])", r"\1", lit[1]).strip()
            if lit[0] in shown and lit[1].strip() not in shown and plain not in shown:
                out[i] = CallChanges(ch.step, ch.index, ch.changes, ch.evidence, False, ch.writer)
            break
    return out


def shell_text(call: ToolCall) -> str:
    """The command a call runs (its ``command``, or a command-like argument)."""
    if call.command is not None:
        return call.command
    args = call.arguments
    if isinstance(args, dict):
        for key in ("command", "cmd", "keystrokes", "code"):
            if (
                isinstance(args.get(key), str)
                and key != "command"
                or (key == "command" and isinstance(args.get(key), str) and " " in args[key])
            ):
                return args[key]
    return args if isinstance(args, str) else ""
