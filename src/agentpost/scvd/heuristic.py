"""The earlier offline heuristic annotator (heuristic/3), kept for comparison: ``scvd calibrate
--legacy`` scores it next to the rule seats that replaced it in the default panel (``seats``,
issue 29), and a judge config can still seat its variants (``broad``, ``artifact``, ``run``).

Rules over the recorded commands, their outputs and edits, following the b.2 procedure:

1. Each tool call is classified from its command text (``shell``): ``modify`` (writes a file or
   changes state: redirects, cp/mv/rm, ``sed -i``, inline scripts that open files for writing,
   builds, installs, edit-tool calls), ``run`` (tests, the produced program, ``python -c``,
   ``test``/``diff``/``curl``), ``inspect`` (cat/head/ls/grep/...), ``control`` (task-complete
   pseudo-calls) or ``other``.
2. The candidate is the end of the first construction stretch: starting at the first
   modifying call, later modifying calls extend it until the first call that counts as a check
   (see the variants), a control call, or the end. A modifying call whose later segments run
   or inspect something ends the stretch itself and is ``includes_first_verification``.
3. Verification is triggered when a check follows the candidate (or sits in the candidate call).
   The first phase is the consecutive checks up to the next modifying call.
4. A check's outcome: ``negative`` on a non-zero exit or a clear failure marker in its output
   (traceback, AssertionError, FAILED, "No such file"); ``void`` on a timeout, a missing tool
   (exit 127, "command not found") or no output and no exit code; otherwise ``positive``.

heuristic/3 (issue 13, measured on hand-labelled real trajectories, see
``data/real-calibration.json``) adds: an edit the tool reports as not applied, and editor-tool
writes to probe files (``reproduce.py``, ``check_*.py``, …; SWE-agent's windowed edits apply to
the file it has open) change no candidate; installing the project itself (``pip install -e .``)
is set-up; starting a server without querying it is not a check; an inspection's output is code
or data, so failure words in it (``SyntaxError(`` in a listing) are not a verdict; a missing
module the agent did not write, or no network, is the environment's failure (void); listing the
directory that holds a written file inspects it.
   Priority as b.2: any negative → exposes_error; else any positive → supports_pass; else
   no_effective_result.

Variants (different strictness about what counts as a check; the default panel uses all three):
- ``broad``: any run or inspect call after a modification is a check;
- ``artifact``: run calls are checks; an inspect call only when it names a file the agent wrote;
- ``run``: only run calls are checks (inspections never trigger verification).

Known limits (measured in ``data/calibration.jsonl``, not assumed): a successful ``cat`` whose
content visibly contradicts the task is read as a pass (the spec calls it an error); scripts run
by name are assumed not to modify state; the three variants share most rules, so their
agreement overstates what three independent judges would give.

Layer: pure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agentpost.scvd import shell
from agentpost.scvd.protocol import _observation_for, step_ids
from agentpost.scvd.records import Annotation
from agentpost.trajectory.model import Observation, ToolCall, Trajectory

VARIANTS = ("broad", "artifact", "run")
_EDITOR = ("view", "create", "str_replace", "insert", "undo_edit")  # str_replace_editor commands
HEURISTIC_VERSION = "heuristic/3"  # bump on any rule change: it keys cached answers
_NEGATIVE = re.compile(
    r"Traceback \(most recent call last\)|AssertionError|\bFAILED\b|\bFAIL\b|No such file or "
    r"directory|Segmentation fault|\b[1-9][0-9]* failed\b|SyntaxError:|error: |Error: "
)
# What an inspection (cat/grep/view of source) shows is code, not a verdict: only these count.
_INSPECT_NEGATIVE = re.compile(r"No such file or directory|cannot open|cannot access")
# The environment, not the candidate, failed: a missing tool or module, no network.
_VOID = re.compile(
    r"command not found|No module named pytest|Could not resolve host|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable"
)
_MISSING_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.]+)")
# An edit the tool reports it did not apply (SWE-agent lint gate, editor errors): no change.
_EDIT_FAILED = re.compile(
    r"Your proposed edit has introduced new syntax error|Your changes have NOT been applied|"
    r"No replacement was performed|did not appear verbatim|Ran into \[Errno|^\s*ERROR:|"
    r"Invalid `path` parameter|already exists and is not empty|not found in the file",
    re.M,
)
# Starting a server is not a check unless the same call then queries it.
_SERVER = re.compile(
    r"-m\s+http\.server|\brunserver\b|\bflask\s+run\b|\buvicorn\b|\bgunicorn\b|"
    r"\bnpm\s+(run\s+)?(start|dev|serve)\b|\bserve\s+-"
)
_QUERY = re.compile(r"\b(curl|wget|httpie)\b|\bhttp\s+(GET|POST)\b")


@dataclass(frozen=True)
class CallView:
    """One tool call as the heuristic sees it."""

    step: int
    index: int
    kinds: tuple[str, ...]  # per segment, in order
    segments: tuple[str, ...]
    text: str
    written: tuple[str, ...]
    obs: Observation | None
    control: bool

    @property
    def kind(self) -> str:
        if self.control:
            return "control"
        return max(self.kinds, key=shell.RANK.__getitem__, default="other")

    def trailing(self) -> list[tuple[str, str]]:
        """(kind, segment) after the last modifying segment of a modifying call."""
        if "modify" not in self.kinds:
            return []
        last = max(i for i, k in enumerate(self.kinds) if k == "modify")
        return list(zip(self.kinds[last + 1 :], self.segments[last + 1 :], strict=True))


def _call_text(call: ToolCall) -> str:
    if call.command is not None:
        return call.command
    args = call.arguments
    if isinstance(args, dict):
        for key in ("command", "cmd", "keystrokes", "code"):
            if isinstance(args.get(key), str):
                return args[key]
    return args if isinstance(args, str) else json.dumps(args, sort_keys=True)


def _edit_path(call: ToolCall, args: dict, open_file: str | None) -> str:
    path = args.get("path") or args.get("filename")
    if (
        path is None and call.command
    ):  # SWE-agent: ``create PATH``, windowed ``edit`` on the open file
        words = call.command.split()
        path = words[1] if words[0] == "create" and len(words) > 1 else open_file
    return str(path or "")


def _view(step: int, j: int, call: ToolCall, obs: Observation | None, state: dict) -> CallView:
    """Classify one call. ``state`` carries ``scripts`` (path → body of files written from
    heredocs so far, so running a recorded script is judged by what it does) and ``open`` (the
    file SWE-agent's windowed editor has open)."""
    scripts = state.setdefault("scripts", {})
    text = _call_text(call)
    control = call.kind == "control" or shell.is_control(text)
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if call.kind == "edit" or (call.command is None and args.get("command") in _EDITOR):
        viewing = args.get("command") == "view"
        path = "" if viewing else _edit_path(call, args, state.get("open"))
        if call.command and call.command.split()[:1] == ["create"] and path:
            state["open"] = path
        text = f"{args.get('command') or call.name} {path or args.get('path', '')}".strip()
        failed = obs is not None and (obs.is_error or _EDIT_FAILED.search((obs.text or "")[:600]))
        aside = bool(path) and (path.startswith(shell.SCRATCH) or bool(shell.PROBE.search(path)))
        if viewing or failed or aside:
            # a read, an edit that was not applied, or a probe script: no candidate change
            kind = "inspect" if viewing else "other"
            return CallView(step, j, (kind,), (text,), text, (), obs, control)
        return CallView(step, j, ("modify",), (text,), text, (path,) if path else (), obs, control)
    if call.name == "open" and call.command:  # SWE-agent's viewer sets the file edits apply to
        words = call.command.split()
        state["open"] = words[1].strip("'\"") if len(words) > 1 else state.get("open")
    segs = shell.split_segments(text)
    kinds, written = [], []
    for seg in segs:
        kinds.append(shell.classify_segment(seg, scripts))
        written += shell.written_paths(seg, scripts)
        scripts.update(shell.heredoc_files(seg))
    kinds = tuple(kinds) or ("other",)
    if _SERVER.search(text) and not _QUERY.search(text):
        kinds = tuple("other" if k == "run" else k for k in kinds)
    return CallView(step, j, kinds, tuple(segs) or (text,), text, tuple(written), obs, control)


def call_views(traj: Trajectory) -> list[CallView]:
    """Every tool call in trajectory order."""
    out, state = [], {}
    for step, turn in step_ids(traj).items():
        for j, call in enumerate(turn.tool_calls):
            out.append(_view(step, j, call, _observation_for(turn, j), state))
    return out


def _names_artifact(text: str, written: set[str]) -> bool:
    """The inspection names a written file, or lists the directory that holds one."""
    names = {w.rsplit("/", 1)[-1] for w in written if w}
    if any(n and n in text for n in names):
        return True
    dirs = {w.rsplit("/", 1)[0].rstrip("/") for w in written if "/" in w.strip("/")}
    words = {t.rstrip("/") for t in text.split()}
    return bool(dirs & words)


def _counts(kind: str, text: str, variant: str, written: set[str]) -> bool:
    if kind == "run":
        return True
    if kind == "inspect":
        return variant == "broad" or (variant == "artifact" and _names_artifact(text, written))
    return False


def _is_check(view: CallView, variant: str, written: set[str]) -> bool:
    return view.kind in ("run", "inspect") and _counts(view.kind, view.text, variant, written)


def _self_checks(view: CallView, variant: str, written: set[str]) -> bool:
    """A modifying call that checks its own result after its last modification."""
    return any(_counts(k, seg, variant, written) for k, seg in view.trailing())


def outcome_of(view: CallView, written: set[str] | None = None) -> str:
    """positive / negative / void for one check call, from its recorded output. An inspection's
    output is code or data, so failure words in it are not a verdict; a missing module the agent
    did not write, or no network, is the environment's failure (void), not the candidate's."""
    obs = view.obs
    if obs is None:
        return "void"
    text = obs.text or ""
    negative = _INSPECT_NEGATIVE if view.kind == "inspect" else _NEGATIVE
    if obs.timed_out:
        return "negative" if negative.search(text) else "void"
    missing = _MISSING_MODULE.search(text)
    ours = {w.rsplit("/", 1)[-1].split(".")[0] for w in written or ()}
    if (
        obs.exit_code == 127
        or _VOID.search(text)
        or (missing and missing.group(1).split(".")[0] not in ours)
    ):
        return "void"
    if (obs.exit_code not in (None, 0)) or obs.is_error or negative.search(text):
        return "negative"
    if obs.exit_code is None and not text.strip():
        return "void"
    return "positive"


def _phase_outcome(outcomes: list[str]) -> str:
    if "negative" in outcomes:
        return "exposes_error"
    if "positive" in outcomes:
        return "supports_pass"
    return "no_effective_result"


def annotate(traj: Trajectory, case_id: str, variant: str = "artifact") -> Annotation:
    """The heuristic's annotation of ``traj`` (always satisfies consistency rules 1–5)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown heuristic variant {variant!r}; known: {VARIANTS}")
    views = call_views(traj)
    task = traj.task_id or ""
    first = next((k for k, v in enumerate(views) if v.kind == "modify"), None)
    if first is None:
        return Annotation(case_id, task, False, None, None, None, False, None)
    written = set(views[first].written)
    cand = first
    for k in range(first, len(views)):
        v = views[k]
        if k > first and (v.kind == "control" or _is_check(v, variant, written)):
            break
        if v.kind == "modify":
            cand = k
            written |= set(v.written)
            if _self_checks(v, variant, written):
                break
    outcomes = []
    c = views[cand]
    inline = _self_checks(c, variant, written)
    if inline:
        outcomes.append(outcome_of(c, written))
    started = inline
    for v in views[cand + 1 :]:
        if v.kind in ("modify", "control"):
            if started or v.kind == "modify":
                break
            continue
        if _is_check(v, variant, written):
            started = True
            outcomes.append(outcome_of(v, written))
    triggered = bool(outcomes)
    return Annotation(
        case_id=case_id,
        task_name=task,
        candidate_formed=True,
        candidate_step=c.step,
        candidate_tool_call_index=c.index,
        boundary_type="includes_first_verification" if inline else "clean",
        verification_triggered=triggered,
        verification_outcome=_phase_outcome(outcomes) if triggered else None,
    )
