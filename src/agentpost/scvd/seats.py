"""Three offline SCVD judges that see different evidence (issue 29), each a full b.2 annotator.

- ``changes``: *what each call changed* (``changes.call_changes``: snapshot diffs, editor calls,
  parsed writes) and the exit status of later calls. The candidate is the end of the first
  stretch of target changes, cut by the first call that runs code or reads a changed file (not a
  view that only locates the next edit: it shows none of the lines the agent wrote, and the next
  change edits that file); the outcome comes from exit codes and error flags only (no output
  text is read).
- ``commands``: *the commands and their outputs*. The stretch is cut by a call that runs
  something, by a revert, or by an inspection of a changed file after which the agent changes
  a different file or nothing more (an inspection followed by more edits of the same file
  belongs to the construction, so an announced several-part change is one attempt); each
  check's output is read by the written rules of ``reading`` (environment, the check's own
  setup, expected exceptions, failures of other code).
- ``narration``: *the agent's own words*. The stretch is cut where the agent announces a check
  of the fix or behaviour ("run the reproduction script again", "verify the fix"), or where its
  reading of a check says something went wrong ("messed up", "did not work"); the outcome is the
  agent's own reading of each check in the first phase. Agents over-claim, so this seat errs
  differently from the other two, which is the point of a panel. It abstains (no annotation) on
  a trajectory with no narration.

All three start the stretch at the first change that does more than add imports (an import-only
edit is the candidate only when no other change follows), and carry it through a revert made
right after a change and followed by a new change with no look between (a restart of the same
attempt; seats/3), and through a ``grep`` for the text the last ``sed s`` replaced or put in when
another edit of that file follows (it only confirms the edit applied; seats/4). For all three an
inline probe of the interpreter (``reading.is_probe``) is no evidence about the candidate; the
narration seat reads "the test enforces the old behaviour" as saying nothing about the candidate
and "as expected, it fails" as a failure the agent foresaw (seats/4). All three take the candidate from the same change records (which calls changed what the task is
about); they differ in where the first attempt ends and how its first check is read. The first
verification phase is, for all three, the checks from the first one after the candidate up to
the next change of the target (a repair or a revert) or the submission (``data/real-labels.md``
section 5). For the two seats that read exit codes and outputs, a failing check that the agent
then cures by changing only its own test or script files (never the target), the same command
succeeding next, was the check's own fault and says nothing against the candidate (section 6).

Layer: pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from agentpost.scvd import shell
from agentpost.scvd.changes import IMPORT_ONLY, SED_SUB_FULL, CallChanges, call_changes, shell_text
from agentpost.scvd.reading import is_probe, read_output, unwanted_raises
from agentpost.scvd.records import Annotation
from agentpost.trajectory.calls import call_outputs, step_ids
from agentpost.trajectory.model import Observation, ToolCall, Trajectory

SEATS = ("changes", "commands", "narration")
SEATS_VERSION = "seats/4"  # bump on any rule change: it keys cached answers
_INSPECT_TOOLS = {"read", "grep", "glob", "ls", "read_file", "list_directory", "glob_tool",
                  "search_file_content", "open", "goto", "scroll_up", "scroll_down", "search_file",
                  "search_dir", "find_file", "view", "open_file"}  # fmt: skip
_NOOP = {"cd", "echo", "export", "source", ".", "true", "false", "sleep", "clear", "pwd", "whoami",
         "set", "unset", "alias", "history", "which", "type", "printf", "date", "exit", "wait",
         "read", "kill", "pkill", "ps", "jobs", "fg", "bg", "tmux", "C-c", "C-d"}  # fmt: skip
_SERVER = re.compile(r"-m\s+http\.server|\brunserver\b|\bflask\s+run\b|\buvicorn\b|\bgunicorn\b|"
                     r"\bnpm\s+(run\s+)?(start|dev|serve)\b|\bserve\s+-")  # fmt: skip
_QUERY = re.compile(r"\b(curl|wget|httpie)\b|\bhttp\s+(GET|POST)\b")
_ASSERTS = re.compile(r"\bassert\b|\bcheck\(|self\.assert")
# narration: announcing a check of the fix or behaviour (not of one's own edit)
_FIX_CHECK = re.compile(
    r"(?:verify|confirm|check|test|see (?:if|whether)|ensure|make sure)\b[^.\n]{0,60}?\b(?:fix|fixed|"
    r"works?|working|resolv\w*|behaviou?r|solution|bug|issue is|passes|output)|"
    r"\b(?:run|re-?run|execute)\b[^.\n]{0,30}\b(?:reproduc\w*|repro\b|tests?\b|test suite|"
    r"script again|again)|\bverify the changes? (?:by running|with)",
    re.I,
)
_WRONG = re.compile(
    r"\b(?:messed up|mistake|oops|did(?: not|n't) work|does(?: not|n't) work|broke|broken|wrong place|"
    r"incorrect(?:ly)?|not correct|syntax error|IndentationError|literal(?:ly)? `?\\n|still (?:fail|"
    r"broken|shows|has|present|the same)|failed|fails|failing|error|not applied|didn't apply|"
    r"not (?:fixed|resolved)|issue persists|regression|went wrong|is wrong)\b",
    re.I,
)
# the agent foresaw a failure of its own change and the check shows it ("As expected, it fails
# for named tuples"); not the unfixed code failing as the bug report says
_PREDICTED_FAIL = re.compile(
    r"\bas expected\b,?\s+(?:it|this|that|the \w+)\s+(?:fails|failed|crashes|crashed|breaks|broke)\b"
    r"(?![^.\n]{0,60}\b(?:without|before|original|old|unfixed|unpatched)\b)",
    re.I,
)
# the agent reads a failing test as asserting the behaviour the request removes
_OLD_BEHAVIOUR = re.compile(
    r"\btests?\b[^.\n]{0,80}\b(?:enforc\w*|expect\w*|assert\w*|encod\w*|check\w*)\s+(?:for\s+)?"
    r"the\s+(?:old|previous|original)\s+behaviou?r",
    re.I,
)
_UNRELATED = re.compile(r"pre-?existing|unrelated|not related|already fail|also fails without|"
                        r"independent of my change|not caused by my", re.I)  # fmt: skip
_ENV = re.compile(r"not installed|not available|command not found|timed out|cannot run|unable to "
                  r"run|no module named|network|could not build|can't build|failed to build", re.I)  # fmt: skip
_GOOD = re.compile(r"\b(?:works?|worked|passe[sd]|pass\b|success\w*|correct(?:ly)?|confirms?|fixed|"
                   r"resolved|as expected|looks (?:good|correct|right)|great|perfect|excellent|"
                   r"matches|now (?:returns|shows|prints|handles))\b", re.I)  # fmt: skip


@dataclass(frozen=True)
class View:
    """One call as the seats see it."""

    step: int
    index: int
    text: str  # the command or tool input
    kind: str  # modify | run | inspect | control | other
    changes: CallChanges
    obs: Observation | None
    before: str  # the narration that precedes the call (its turn's text)
    after: str  # the narration that follows it (the next turn's text)
    post_check: bool  # the call itself runs or reads something after its last write
    reads: tuple[str, ...]  # paths it reads or names
    added: tuple[str, ...] = ()  # the non-blank lines an editor call or ``sed`` writes


_PROGRAM = re.compile(
    r"^(?:python[\d.]*|pytest|node|bash|sh|zsh|ruby|perl|php|java|go|cargo|npm|npx|"
    r"yarn|make|mise|tox|nox|uv|\./\S+|bin/\S+|\S+\.(?:py|sh|js))$"
)


def _segment_kind(seg: str, scripts: dict[str, str]) -> str:
    """A shell segment as a check sees it: running a program (even one whose recorded body writes
    files: those writes are the change records' business) is ``run``; an unknown executable is
    ``run``; the shell's own classes otherwise."""
    words = shell.split_words(seg)
    if not words:
        return "other"
    w0 = words[0].rsplit("/", 1)[-1] if not words[0].startswith("./") else words[0]
    if _PROGRAM.match(w0) or _PROGRAM.match(words[0]):
        if not shell.setup_install(words) and not (
            len(words) > 1 and words[1] in ("install", "add")
        ):
            return "run"
    kind = shell.classify_segment(seg, scripts)
    if kind != "other":
        return kind
    known = shell.MODIFY | shell.INSPECT | shell.RUN | _NOOP | {"sed", "perl", "git", "pip", "pip3",
                                                                "apt", "apt-get", "conda"}  # fmt: skip
    if w0 in known or shell.is_control(seg):
        return "other"
    return "run"


def _call_kind(
    call: ToolCall, text: str, ch: CallChanges, scripts: dict[str, str]
) -> tuple[str, bool]:
    """(kind, post_check) of a call."""
    name = (call.name or "").lower()
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if (
        call.kind == "control"
        or shell.is_control(text)
        or name in ("finish", "submit", "task_complete")
    ):
        return "control", False
    if ch.changes and ch.evidence == "edit-tool":
        return "modify", False
    if (
        name in _INSPECT_TOOLS
        or args.get("command") == "view"
        or name in ("str_replace_editor",)
        and not ch.changes
    ):
        return "inspect", False
    if isinstance(args.get("code"), str) and not ch.changes:  # IPython (OpenHands agentskills)
        code = args["code"]
        calls = re.findall(r"\b([a-z_]+)\(", code)
        looks = {"open_file", "goto_line", "scroll_down", "scroll_up", "search_file", "search_dir",
                 "find_file", "print"}  # fmt: skip
        return ("inspect" if calls and set(calls) <= looks else "run"), False
    if not text:
        return "other", False
    kinds = []
    for seg in shell.split_segments(text):
        kinds.append(_segment_kind(seg, scripts))
        scripts.update(shell.heredoc_files(seg))
    if _SERVER.search(text) and not _QUERY.search(text):
        kinds = ["other" if k == "run" else k for k in kinds]
    if ch.target or ch.revert:
        # the writing segment: the last one whose parsed writes changed the target
        last = (
            ch.writer
            if ch.writer is not None
            else max((i for i, k in enumerate(kinds) if k == "modify"), default=0)
        )
        return "modify", any(k in ("run", "inspect") for k in kinds[last + 1 :])
    for k in ("run", "inspect"):
        if k in kinds:
            return k, False
    return "other", False


def views_of(traj: Trajectory, diffs: Mapping | None = None) -> list[View]:
    """Every call in order, with its changes, kind and narration."""
    chs = call_changes(traj, diffs)
    by_call = {(c.step, c.index): c for c in chs}
    turns = list(step_ids(traj).items())
    out, scripts = [], {}
    for t, (step, turn) in enumerate(turns):
        outs = call_outputs(turn)
        nxt = next((tu.text or "" for _, tu in turns[t + 1 :] if tu.text), "")
        for j, call in enumerate(turn.tool_calls):
            text = shell_text(call)
            ch = by_call[(step, j)]
            kind, post = _call_kind(call, text, ch, scripts)
            args = call.arguments if isinstance(call.arguments, dict) else {}
            reads = tuple(str(v) for k, v in args.items() if k in ("file_path", "path", "pattern"))
            out.append(View(step, j, text, kind, ch, outs[j], turn.text or "" if j == 0 else "",
                            nxt if j == len(turn.tool_calls) - 1 else "", post, reads,
                            _added(args)))  # fmt: skip
    return out


def _names_changed(v: View, changed: set[str]) -> bool:
    """The call names a changed file, or lists the directory that holds one."""
    hay = v.text + " " + " ".join(v.reads)
    if any(p and (p in hay or p.rsplit("/", 1)[-1] in hay) for p in changed):
        return True
    words = {w.rstrip("/") for w in hay.split()}
    dirs = {p.rsplit("/", 1)[0] for p in changed if "/" in p.strip("/")}
    return bool(dirs & words)


def _added(args: dict) -> tuple[str, ...]:
    """The non-blank lines an editor call writes (``new_str``, ``file_text``, ``content``,
    ``new_string``); () when unknown (a shell command's quoting makes its written text unsure)."""
    vals = [args.get(k) for k in ("new_str", "file_text", "content", "new_string")]
    lines = [ln for v in vals if isinstance(v, str) for ln in v.splitlines()]
    return tuple(ln.strip() for ln in lines if len(ln.strip()) >= 4)


def _next_change(views: list[View], k: int) -> int | None:
    """Position of the first call after ``k`` that changes the target (or reverts it), when only
    reads, refused edits and other non-running calls lie between; None otherwise."""
    for m in range(k + 1, len(views)):
        u = views[m]
        if u.changes.target or u.changes.revert:
            return m
        if u.kind in ("run", "control"):
            return None
    return None


def _named_paths(v: View, changed: set[str]) -> set[str]:
    hay = v.text + " " + " ".join(v.reads)
    return {p for p in changed if p and (p in hay or p.rsplit("/", 1)[-1] in hay)}


def _locates(views: list[View], k: int, changed: set[str]) -> bool:
    """Inspection ``k`` only locates text for the next edit (``data/real-labels.md`` section 3:
    "a view of the lines about to be replaced"): the next change edits a file it shows, and
    what it shows holds none of the lines the stretch has written so far."""
    v = views[k]
    m = _next_change(views, k)
    if m is None or not views[m].changes.target:
        return False
    shown = _named_paths(v, changed)
    if not shown & {c.path for c in views[m].changes.changes if c.role == "target"}:
        return False
    written = {ln for u in views[:k] if u.changes.target for ln in u.added}
    out = (v.obs.text or "") if v.obs else ""
    return bool(written) and not any(ln in out for ln in written)


def _unescape(x: str) -> str:
    return re.sub(r"\\(.)", r"\1", x).strip()


def _confirms_edit(views: list[View], k: int, changed: set[str]) -> bool:
    """Inspection ``k`` is a ``grep`` for the text the last ``sed s`` of the target replaced, or
    for its replacement: it only confirms that the edit applied. With a further edit of a file
    it names next (no run between), it is part of the construction (``data/real-labels.md``
    section 3: "a grep that the sed applied"), for every seat."""
    v = views[k]
    words = shell.split_words(v.text)
    if v.kind != "inspect" or not words or words[0] not in ("grep", "egrep", "rg"):
        return False
    args = [w for w in words[1:] if not w.startswith("-")]
    last = next((u for u in reversed(views[:k]) if u.changes.target), None)
    m = _next_change(views, k)
    if not args or last is None or m is None or not views[m].changes.target:
        return False
    if not _named_paths(v, changed) & {
        c.path for c in views[m].changes.changes if c.role == "target"
    }:
        return False
    sub = SED_SUB_FULL.search(last.text)
    if not sub:
        return False
    needle = _unescape(args[0])
    return bool(needle) and any(needle in _unescape(g) for g in (sub.group(2), sub.group(3)))


def _is_check(seat: str, views: list[View], k: int, changed: set[str]) -> bool:
    v = views[k]
    if _confirms_edit(views, k, changed):
        return False
    if v.kind == "run":
        return True
    if v.kind != "inspect" or not _names_changed(v, changed):
        return False
    if seat == "commands":
        # an inspection of one's own edit followed by more edits of that file is part of the
        # construction (an announced several-part change); followed by a change elsewhere, or
        # by no further change, it is the check of a finished attempt
        m = _next_change(views, k)
        if m is None:
            return True
        nxt = {c.path for c in views[m].changes.changes if c.role == "target"}
        return not (_named_paths(v, changed) & nxt)
    return not _locates(views, k, changed)


def _cuts_here(seat: str, views: list[View], k: int, changed: set[str]) -> bool:
    """Whether call ``views[k]`` ends the construction stretch (it is the first check)."""
    v = views[k]
    if seat == "narration":
        if v.kind not in ("run", "inspect") or _confirms_edit(views, k, changed):
            return False
        return bool(
            _FIX_CHECK.search(v.before) or (_WRONG.search(v.after) and _names_changed(v, changed))
        )
    return _is_check(seat, views, k, changed)


def _prep(v: View) -> bool:
    return all(c.why == IMPORT_ONLY for c in v.changes.changes if c.role == "target")


def candidate(seat: str, views: list[View]) -> int | None:
    """Position in ``views`` of the boundary call, or None when no call changed the target."""
    targets = [k for k, v in enumerate(views) if v.changes.target]
    if not targets:
        return None
    # an edit that only adds imports prepares the attempt; the attempt is the first change that
    # does more (the import-only edit is the candidate only when nothing else ever follows)
    first = next((k for k in targets if not _prep(views[k])), targets[0])
    cand = first
    changed = {c.path for c in views[first].changes.changes if c.role == "target"}
    if views[first].post_check:
        return first
    for k in range(first + 1, len(views)):
        v = views[k]
        if v.changes.revert and not v.changes.target:
            # a revert right after a change, followed by a new change with no check between, is a
            # restart of the same attempt (``data/real-labels.md``: one stretch); a revert after
            # a look at the change ends the attempt
            m = _next_change(views, k)
            looked = any(u.kind in ("run", "inspect") for u in views[cand + 1 : k])
            if m is not None and views[m].changes.target and not looked:
                continue
            break
        if v.changes.revert or v.kind == "control":
            break
        if v.changes.target:
            cand = k
            changed |= {c.path for c in v.changes.changes if c.role == "target"}
            if v.post_check:
                break
            continue
        if _cuts_here(seat, views, k, changed):
            break
    return cand


def _asserting(views: list[View], v: View) -> bool:
    """The run executes a file whose recorded content asserts (a silent run is then a pass)."""
    words = shell.split_words(v.text)
    target = words[1] if len(words) > 1 else ""
    base = target.rsplit("/", 1)[-1]
    for u in views:
        if u is v:
            break
        body = (u.obs.text if u.obs else "") + u.text
        if base and base in (u.text + " ".join(u.reads)) and _ASSERTS.search(body):
            return True
    return False


def _verdict(seat: str, views: list[View], v: View, changed: list[str], scripts: set[str],
             unwanted: frozenset[str] = frozenset()) -> str:  # fmt: skip
    if v.kind == "run" and is_probe(v.text, changed):
        return "void"  # a probe of the language says nothing about the candidate (every seat)
    if seat == "changes":
        o = v.obs
        if o is None:
            return "void"
        if o.timed_out or o.exit_code == 127:
            return "void"
        if o.exit_code == 5 and re.search(r"\bpytest\b", v.text):
            return "void"  # pytest's own status for "no tests collected"
        if o.exit_code not in (None, 0) or o.is_error:
            return "negative"
        return "positive" if (o.exit_code == 0 or (o.text or "").strip()) else "void"
    if seat == "narration":
        text = v.after
        if _UNRELATED.search(text) and not re.search(
            r"\bmy (?:change|fix)\b[^.]{0,30}\b(?:broke|caused)", text
        ):
            return "void" if not _GOOD.search(text) else "positive"
        if _ENV.search(text) and not _GOOD.search(text):
            return "void"
        if _OLD_BEHAVIOUR.search(text):
            return "void"  # the agent reads the failing test as encoding what the request changes
        if _PREDICTED_FAIL.search(text):
            return "negative"  # "As expected, it fails for ...": the failure the agent foresaw
        bad, good = _WRONG.search(text), _GOOD.search(text)
        if bad and (not good or bad.start() < good.start()):
            return "negative"
        return "positive" if good else "void"
    verdict = read_output(v.obs, v.kind, v.text, changed, scripts, unwanted)
    if verdict.value == "void" and verdict.rule == "silent-success" and _asserting(views, v):
        return "positive"
    return verdict.value


def _check_repaired(seat: str, views: list[View], i: int, changed: list[str],
                    scripts: set[str], unwanted: frozenset[str] = frozenset()) -> bool:  # fmt: skip
    """The failing check ``views[i]`` was itself at fault (``data/real-labels.md`` section 6, the
    check's own setup): the agent next changes only its own test or script files, never the
    target, and the same command then succeeds. A failure cured without touching the candidate
    said nothing against it."""
    v = views[i]
    fixed = False
    for u in views[i + 1 :]:
        if u.changes.target or u.changes.revert or u.kind == "control":
            return False
        if u.changes.changes and u.changes.applied:
            if any(c.role not in ("fixture", "scratch") for c in u.changes.changes):
                return False
            fixed = True
            continue
        if fixed and u.kind == "run" and u.text.strip() == v.text.strip():
            return _verdict(seat, views, u, changed, scripts, unwanted) == "positive"
    return False


def annotate_seat(traj: Trajectory, case_id: str, seat: str,
                  diffs: Mapping | None = None) -> Annotation | None:  # fmt: skip
    """The seat's b.2 annotation of ``traj`` (None: the seat abstains)."""
    if seat not in SEATS:
        raise ValueError(f"unknown seat {seat!r}; known: {SEATS}")
    views = views_of(traj, diffs)
    task = traj.task_id or ""
    if seat == "narration" and not any(v.before or v.after for v in views):
        return None
    k = candidate(seat, views)
    if k is None:
        return Annotation(case_id, task, False, None, None, None, False, None)
    c = views[k]
    changed = sorted(
        {ch.path for v in views[: k + 1] for ch in v.changes.changes if ch.role == "target"}
    )
    scripts = {ch.path.rsplit("/", 1)[-1] for v in views for ch in v.changes.changes
               if ch.role in ("scratch", "fixture")}  # fmt: skip
    inline = c.post_check
    unwanted = frozenset(unwanted_raises(traj.instruction or ""))
    outcomes = [_verdict(seat, views, c, changed, scripts, unwanted)] if inline else []
    started = inline
    for i in range(k + 1, len(views)):
        v = views[i]
        if v.changes.target or v.changes.revert or v.kind == "control":
            if started or v.changes.target or v.changes.revert:
                break
            continue
        if v.kind == "run" or (v.kind == "inspect" and _names_changed(v, set(changed))):
            started = True
            got = _verdict(seat, views, v, changed, scripts, unwanted)
            if (
                got == "negative"
                and seat != "narration"
                and _check_repaired(seat, views, i, changed, scripts, unwanted)
            ):
                got = "void"
            outcomes.append(got)
    triggered = bool(outcomes)
    z = None
    if triggered:
        z = ("exposes_error" if "negative" in outcomes else
             "supports_pass" if "positive" in outcomes else "no_effective_result")  # fmt: skip
    return Annotation(case_id, task, True, c.step, c.index,
                      "includes_first_verification" if inline else "clean", triggered, z)  # fmt: skip


def boundary_evidence(traj: Trajectory, step: int | None, index: int | None,
                      diffs: Mapping | None = None) -> dict:  # fmt: skip
    """Which evidence decided a boundary: the boundary call's change record (``state-diff``,
    ``edit-tool``, ``command``; ``none`` without a candidate) and the files it changed."""
    if step is None or index is None:
        return {"evidence": "none", "changes": []}
    for ch in call_changes(traj, diffs):
        if (ch.step, ch.index) == (step, index):
            return ch.summary()
    return {"evidence": "none", "changes": []}
