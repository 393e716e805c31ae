"""Replaying single calls of a planned trajectory against one sandbox: shell calls (one exec
each, with the previous call's cwd and exports restored when the scaffold's shell persists),
edit calls (applied inside the sandbox by ``replay/edits.py``'s own source) and runs of
keystroke calls (``replay/tmux.py``). Used by ``replay/run.py``.

Layer: io.
"""

from __future__ import annotations

import functools
import inspect
import json
import posixpath
import re
from dataclasses import asdict

from agentpost.ingress.keys import Refused
from agentpost.replay import edits
from agentpost.replay.model import CallRecord, PlannedCall
from agentpost.replay.tmux import keystroke_call, new_output, send_keystrokes
from agentpost.sandbox.base import Sandbox
from agentpost.tasks.model import Task
from agentpost.trajectory.model import Observation

TEXT_CHARS = 4000
_CWD_FILE, _ENV_FILE = "/tmp/.agentpost-cwd", "/tmp/.agentpost-env"
_HEAD = (
    f"[ -f {_ENV_FILE} ] && . {_ENV_FILE} >/dev/null 2>&1; "
    f'__ap_d=$(cat {_CWD_FILE} 2>/dev/null) && cd "$__ap_d" 2>/dev/null\n'
)
_TAIL = (
    f"\n__ap_rc=$?; pwd > {_CWD_FILE} 2>/dev/null; "
    f"export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_)=' > {_ENV_FILE} 2>/dev/null; "
    "exit $__ap_rc\n"
)
# SWE-agent's read-only navigation tools (absent from the sandbox); ``open`` sets the open file.
SWE_AGENT_NAV_TOOLS = {
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "find_file",
    "search_file",
    "search_dir",
    "filemap",
}
# Tools whose calls change no state, so skipping them keeps the replay faithful; any other call
# replay cannot run makes the replay unfaithful (excluded from y_c).
READ_ONLY_TOOLS = {"think", "web_read", "browser", "browse", "search", "view", "read_file"}
IPYTHON_TOOLS = {"execute_ipython_cell", "ipython", "python", "jupyter"}
_IPY_RUNNER = r"""
import subprocess, sys
def __ap_sh(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
"""
_EDIT_ERROR = re.compile(
    r"^\s*(ERROR|Error)\b|No replacement was performed|did not appear verbatim|"
    r"Invalid `insert_line`|already exists|Your changes have NOT been applied|"
    r"introduced new syntax error|not found in the file",
    re.M,
)


def _recorded_error(obs: Observation | None) -> bool:
    if obs is None:
        return False
    if obs.is_error is not None:
        return obs.is_error
    return bool(obs.text and _EDIT_ERROR.search(obs.text[:500]))


def _cap(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[-TEXT_CHARS:]


_EDIT_RUNNER = r"""
import hashlib, json, os, sys
req = json.load(sys.stdin)
op = EditOp(**req["op"])
path = op.path if os.path.isabs(op.path) else os.path.join(req["cwd"], op.path)
hp = os.path.join("/tmp/.agentpost-edit-history", hashlib.sha256(path.encode()).hexdigest())
def history():
    try:
        return json.load(open(hp))
    except (OSError, ValueError):
        return []
def save(h):
    os.makedirs(os.path.dirname(hp), exist_ok=True)
    json.dump(h, open(hp, "w"))
def write(text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)
try:
    cur = None
    if os.path.isfile(path):
        cur = open(path, encoding="utf-8", errors="surrogateescape", newline="").read()
    if op.command == "view":
        if cur is None and not os.path.isdir(path):
            raise EditError(f"{path}: no such file or directory")
        out = cur if cur is not None else "\n".join(sorted(os.listdir(path)))
    elif op.command == "undo_edit":
        h = history()
        if not h:
            raise EditError(f"no edit history for {path}")
        prev = h.pop()
        os.remove(path) if prev is None else write(prev)
        save(h)
        out = f"undid last edit of {path}"
    else:
        new = apply_edit(op, cur)
        save(history() + [cur])
        write(new)
        out = f"edited {path}"
    print(json.dumps({"ok": True, "output": out[-4000:]}))
except (EditError, OSError, UnicodeError) as e:
    print(json.dumps({"ok": False, "error": str(e)}))
"""


@functools.cache
def _edit_script() -> str:
    """The edit program sent into the sandbox (read and tokenised once: ``getsource`` per edit
    call ran under the GIL in every replay worker)."""
    return inspect.getsource(edits) + _EDIT_RUNNER


class Replayer:
    """Runs planned calls against one sandbox, keeping shell state between calls (and, for
    SWE-agent, the file its windowed tools have open)."""

    def __init__(
        self,
        task: Task,
        sandbox: Sandbox,
        persist: bool,
        call_timeout_s: float,
        max_duration_s: float,
        swe_agent: bool = False,
    ):
        self.task, self.sb, self.persist = task, sandbox, persist
        self.call_timeout_s, self.max_duration_s = call_timeout_s, max_duration_s
        self.swe_agent = swe_agent
        self.open_file: str | None = None

    def cwd(self) -> str:
        if not self.persist:
            return self.task.workdir
        try:
            return self.sb.get(_CWD_FILE, max_bytes=8192).decode().strip() or self.task.workdir
        except (FileNotFoundError, OSError, ValueError, Refused):  # the agent's file: bounded
            return self.task.workdir

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd(), path))

    def shell(self, p: PlannedCall) -> CallRecord:
        rec = CallRecord(p.step, p.call_index, "shell", "replayed")
        if not p.call.command:
            rec.action, rec.error = "failed", "shell call has no command"
            return rec
        words = p.call.command.split()
        if self.swe_agent and words and words[0] in SWE_AGENT_NAV_TOOLS:
            return self._swe_agent_nav(p, words, rec)
        cmd = _HEAD + p.call.command + _TAIL if self.persist else p.call.command
        res = self.sb.exec(cmd, cwd=self.task.workdir, timeout_s=self.call_timeout_s)
        rec.exit_code, rec.timed_out = res.exit_code, res.timed_out
        rec.text = _cap(res.stdout + res.stderr)
        return rec

    def _swe_agent_nav(self, p: PlannedCall, words: list[str], rec: CallRecord) -> CallRecord:
        """SWE-agent's read-only tools are not in the sandbox; ``open`` sets the open file."""
        rec.action = "skipped"
        if words[0] == "open" and not _recorded_error(p.observation):
            args = p.call.arguments if isinstance(p.call.arguments, dict) else {}
            path = args.get("path") or (words[1] if len(words) > 1 else None)
            if path:
                self.open_file = self._abs(str(path).strip("'\""))
        return rec

    def _parse(self, p: PlannedCall) -> edits.EditOp:
        args = p.call.arguments
        windowed = p.call.name in edits.SWE_AGENT_EDIT_TOOLS and not (
            isinstance(args, dict) and "command" in args
        )
        if self.swe_agent and windowed:
            op = edits.parse_swe_agent_edit(p.call.name, args, p.call.command, self.open_file)
            if op.command == "create":
                op = edits.EditOp("create", self._abs(op.path), text="")
                self.open_file = op.path
            return op
        return edits.parse_edit(p.call.name, args)

    def edit(self, p: PlannedCall) -> CallRecord:
        rec = CallRecord(p.step, p.call_index, "edit", "replayed")
        if _recorded_error(p.observation):
            rec.action = "skipped"  # it changed nothing when it was recorded
            return rec
        try:
            op = self._parse(p)
        except edits.EditError as e:
            rec.action, rec.error = "failed", str(e)
            return rec
        if op.command == "view":
            rec.action = "skipped"  # a read: no state to rebuild
            return rec
        req = {"op": asdict(op), "cwd": self.cwd()}
        script = ["python3", "-c", _edit_script()]
        res = self.sb.exec(script, stdin=json.dumps(req).encode(), timeout_s=60)
        try:
            out = json.loads(res.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            rec.action = "failed"
            rec.error = f"edit runner failed: {(res.stdout + res.stderr)[-500:]}"
            return rec
        rec.exit_code = 0 if out["ok"] else 1
        if not out["ok"]:
            rec.action, rec.error = "failed", out["error"]
        rec.text = _cap(out.get("output") or out.get("error") or "")
        return rec

    def other(self, p: PlannedCall) -> CallRecord:
        """A call of no shell/edit/keystroke kind: an IPython cell runs as python; a read-only
        tool is skipped; anything else is skipped and marks the replay unfaithful."""
        args = p.call.arguments if isinstance(p.call.arguments, dict) else {}
        if p.call.name in IPYTHON_TOOLS and isinstance(args.get("code"), str):
            return self.ipython(p, args["code"])
        rec = CallRecord(p.step, p.call_index, p.call.kind, "skipped")
        if p.call.kind != "control" and p.call.name not in READ_ONLY_TOOLS and not (
            args.get("command") == "view"):  # fmt: skip
            rec.unfaithful, rec.error = True, f"tool {p.call.name!r} cannot be replayed"
        return rec

    def ipython(self, p: PlannedCall, code: str) -> CallRecord:
        """An IPython cell as a python3 program in the work directory: ``!cmd`` lines run in a
        shell. Departures: no state carries over between cells (each is a fresh process), and a
        cell with ``%`` magics is not run, which marks the replay unfaithful."""
        rec = CallRecord(p.step, p.call_index, "ipython", "replayed")
        lines = []
        for line in code.splitlines():
            body = line.lstrip()
            if body.startswith("%"):
                rec.action, rec.unfaithful = "skipped", True
                rec.error = f"IPython magic {body.split()[0]!r} cannot be replayed"
                return rec
            pad = line[: len(line) - len(body)]
            lines.append(f"{pad}__ap_sh({body[1:]!r})" if body.startswith("!") else line)
        prog = _IPY_RUNNER + "\n".join(lines) + "\n"
        res = self.sb.exec(["python3", "-c", prog], cwd=self.cwd(), timeout_s=self.call_timeout_s)
        rec.exit_code, rec.timed_out = res.exit_code, res.timed_out
        rec.text = _cap(res.stdout + res.stderr)
        if res.exit_code != 0 and not _recorded_error(p.observation):
            rec.action = "failed"  # it worked when recorded: the state diverged
            rec.error = f"IPython cell failed on replay: {rec.text[-300:]}"
        return rec

    def keystrokes(self, group: list[PlannedCall]) -> list[CallRecord]:
        calls = [keystroke_call(p.call, self.max_duration_s) for p in group]
        screens, why = send_keystrokes(self.sb, calls, self.cwd())
        recs = []
        for i, p in enumerate(group):
            rec = CallRecord(p.step, p.call_index, "keystrokes", "replayed")
            if screens is None:
                rec.action, rec.error = "failed", f"tmux replay failed: {why}"
            else:
                rec.screen = screens[i + 1]
                rec.text = _cap(new_output(screens[i], screens[i + 1]))
            recs.append(rec)
        return recs
