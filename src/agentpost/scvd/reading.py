"""Reading a verification output: does it expose an error of the candidate, support it, or say
nothing about it (spec b.2 step 5; ``data/real-labels.md`` section 6, issue 29).

``read_output`` gives one check's verdict: ``negative`` (clear evidence against the candidate),
``positive`` (interpretable evidence for it) or ``void`` (no usable evidence), with the rule that
decided and the text anchor it matched (``Verdict``). Rules, in order:

1. *Environment* (void): a timeout; a missing tool (exit 127, ``command not found``), or a check
   script the interpreter cannot open (``can't open file``); a missing
   module the candidate does not provide (``No module named X``; also when the traceback passes
   through the changed module, if X is not of the repository's own packages and the failing
   import is not in a changed file: seats/4); no network; an install failing;
   a test runner that collected or selected nothing (``no tests ran``, ``Ran 0 tests``, ``0
   selected``; pytest's exit 5); a build that stops
   before compiling anything (no ``file:line: error`` diagnostic, and its directory, cache or a
   package it needs is missing: ``can't cd to .../build``, ``could not load cache``, CMake's failed
   ``find_package``, ``No rule to make target 'Makefile'``); a test environment that says its own
   results are not to be trusted (``not built with the correct FreeType version``, ``Expect many
   image comparison failures``) when every failure is of the kind it predicted.
2. *The check's own setup* (void): the check script or fixture is broken, not the candidate: a
   traceback whose frames are all in the check script or the standard library and whose error is
   a setup error (``ImproperlyConfigured``, ``settings are not configured``, ``Apps aren't loaded
   yet``, ``no such table``, ``NameError``, ``SyntaxError`` in the script itself, ``unexpected
   keyword argument`` or ``missing N required positional argument`` raised by the script's own
   call). The check's own *state* (``no such table``, settings not configured, apps not loaded,
   ``ImproperlyConfigured``) is its setup wherever in unchanged source it surfaces (seats/4).
   An inline probe (``python -c`` importing nothing of the repository and naming no changed
   file) checks the interpreter, not the candidate (rule ``probe``; every seat: seats/4).
3. *Expected exceptions* (positive): the output says the exception it got was the expected one
   (``raised as expected``, ``Caught expected``, ``expected error``, ``SUCCESS: ... raised``),
   unless it also judges an outcome unexpected (``Unexpected success``; the word inside a quoted
   message, ``unexpected keyword argument``, does not count). A test run whose every failure is a
   literal ``assert 0`` / ``assert False`` fails on purpose to show its report (the bug report's
   own test): positive, its output is what to read.
4. *Failures about other code* (void): a test run (a runner, or the repository's own test module
   run directly, ``python test_x.py``, not one of the agent's scripts) whose failures name neither a
   changed file nor its module (by path, file name, its test module ``test_<stem>``, or the stem
   qualified by its package ``template.engine``; a bare word such as the attribute ``self.engine``
   is no mention: seats/4): an unrelated, pre-existing failure; a run whose every failure is
   that an exception the request complains is raised ("raises a `ValueError` instead of ...") is
   no longer raised (``DID NOT RAISE``, ``ValueError not raised``): the test encodes the behaviour
   the request changes (rule ``removed-behaviour``, seats/4); and a run
   of the changed module's own tests whose every failure section raises a warning turned error or
   an exception from other source, with no traceback frame in a changed file and no failed
   assertion.
5. *Failures* (negative): a traceback or failed assertion, failing tests, a non-zero exit of a run,
   a reproduction that says the bug is still there (``ISSUE REPRODUCED``, ``FAILURE``,
   ``Test FAILED``), a build error; for an inspection only a missing file (``No such file or
   directory``) counts, since its output is code or data, and a contiguous listing of a changed
   Python file that shows a block opener (``def``, ``if``, ``else``, ...) followed at once by a
   line no deeper: the block lost its body (rule ``broken-block``, seats/4).
6. Otherwise *positive* when the check produced interpretable output (exit 0 or text), *void*
   when it produced nothing.

Departure from b.2's wording, written down because it is a judgement: an inspection whose listing
shows a defect only a reader of the code would see (a literal ``\\n`` in a source line, an
``elif`` before its ``if``) reads as positive here; the narration seat (``seats``) can still
catch it from the agent's own words.

Layer: pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentpost.trajectory.model import Observation

_TIMEOUT = re.compile(r"timed out|TimeoutExpired|Timeout exceeded|has been killed", re.I)
_MISSING_TOOL = re.compile(r"command not found|: not found\s*$|No such file or directory: '(?:\w+)'$",
                           re.M)  # fmt: skip
_MISSING_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.]+)")
_NETWORK = re.compile(r"Could not resolve host|Temporary failure in name resolution|Name or service "
                      r"not known|Network is unreachable|Connection refused|Max retries exceeded")  # fmt: skip
_INSTALL_FAIL = re.compile(r"Unable to locate package|No matching distribution|Could not find a "
                           r"version that satisfies|ERROR: Could not install|E: Package")  # fmt: skip
# a build that stops before compiling anything: its directory, cache or a package it needs is
# missing (``can't cd to .../build``, CMake's failed ``find_package``); no compiler diagnostic
_BUILD_ENV = re.compile(r"can't cd to|could not load cache|Could not find a package configuration "
                        r"file|Could NOT find \w+|No targets specified and no makefile found|"
                        r"CMake Error at \S*CMakeLists\.txt:\d+ \(find_package\)|"
                        r"\bMakefile: No such file or directory|No rule to make target '?Makefile")  # fmt: skip
_BUILD = re.compile(r"\bc?make\b|go build|cargo build|npm run build|\bninja\b|\bmeson\b")
_COMPILER_DIAG = re.compile(
    r"^\S+\.\w+:\d+(?::\d+)?:\s*(?:fatal )?error\b|^error(?:\[E\d+\])?:", re.M
)
# the test environment says its own results are not to be trusted (matplotlib built with another
# FreeType), and the failures are the kind it predicted (image comparisons)
_ENV_DECLARED = re.compile(
    r"not built with the correct \w+ version|Expect (?:many )?[\w ]*failures"
)
_IMAGE_FAIL = re.compile(r"ImageComparisonFailure|images not close|image comparison failed", re.I)
_NO_TESTS = re.compile(
    r"\bno tests ran\b|\bRan 0 tests\b|collected 0 items|0 passed|/ 0 selected\b", re.I
)
# the check's own script is not there: the interpreter could not open it (nothing was checked)
_NO_SCRIPT = re.compile(r"^\S*python[\d.]*: can't open file .*No such file or directory", re.M)
_SETUP_ERROR = re.compile(
    r"ImproperlyConfigured|settings are not configured|Apps aren't loaded yet|AppRegistryNotReady|"
    r"no such table|NameError|got an unexpected keyword argument|ModuleNotFoundError|"
    r"IndentationError|SyntaxError|RuntimeError: Model class|Mock object has no attribute|"
    r"missing \d+ required positional argument",
)
# the check's own state, not its code: wherever in unchanged source it surfaces, it is the setup
_SETUP_STATE = re.compile(r"no such table|settings are not configured|Apps aren't loaded yet|"
                          r"AppRegistryNotReady|ImproperlyConfigured")  # fmt: skip
_EXPECTED = re.compile(r"as expected|Caught expected|expected (?:error|exception)|raised correctly|"
                       r"correctly raised|SUCCESS: .*(?:raise|error)", re.I)  # fmt: skip
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
_FRAME = re.compile(r'File "([^"]+)", line \d+')
_NEGATIVE = re.compile(
    r"Traceback \(most recent call last\)|AssertionError|\bFAILED\b|\bFAIL:|^FAIL\b|\bFAILURE\b|"
    r"Test FAILED|\b[1-9][0-9]* failed\b|failures=[1-9]|errors=[1-9]|\bERROR: test|"
    r"(?<!NOT )\b(?:ISSUE|BUG|Issue|Bug) REPRODUCED\b|(?<!not )\bIssue reproduced\b|"
    r"^E\s{3,}\w+|SyntaxError:|error: |Error: |Segmentation fault|DID NOT RAISE|"
    r"does not match|did not match|\bmismatch\b|\bnomatch\b|ImportError|cannot import name",
    re.M,
)
_INSPECT_NEGATIVE = re.compile(
    r"No such file or directory|cannot open|cannot access|not found$", re.M
)
_TEST_RUN = re.compile(r"\bpytest\b|runtests\.py|\bunittest\b|bin/test\b|manage\.py test|\btox\b|"
                       r"go test|cargo test|npm (?:run )?test|mise run test|\bmake (?:test|check)\b|"
                       r"\bmake\b|\bcmake\b|go build|cargo build|npm run build|\bmise run\b")  # fmt: skip
_TEST_ID = re.compile(r"(?:FAILED|ERROR|FAIL:|ERROR:)\s+(\S+)")


# "unexpected" as a judgement of the outcome (not a quoted message such as "unexpected keyword
# argument", which is often the very error a check expects)
_UNEXPECTED = re.compile(
    r"(?-i:UNEXPECTED)|\bunexpected(?:ly)?\s+(?:success\w*|succeeded|result|behaviou?r|output|pass\w*|"
    r"exception|error|value|type)\b|not as expected|NOT raised",
    re.I,
)
# the bug report's own device: a test that fails on purpose to show its output (``assert 0``)
_DELIBERATE = re.compile(r"^E\s+assert (?:0|False)\s*$", re.M)
_SECTION = re.compile(r"^_{3,} .+ _{3,}\s*$|^(?:FAIL|ERROR): \S", re.M)
_SECTION_END = re.compile(r"^={5,}|^-{20,}\s*$\n^Ran \d", re.M)
_EXC = re.compile(r"^E\s+(?:[\w.]+\.)?(\w+(?:Error|Exception|Warning|Failure))\b|"
                  r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Warning)):|^\S+\.py:\d+: (\w+)$", re.M)  # fmt: skip
_PYTEST_FRAME = re.compile(r"^(\S+\.py):\d+: \w+", re.M)


def _deliberate(text: str) -> bool:
    """Every failure of the run is a literal ``assert 0`` / ``assert False``: the check fails on
    purpose so that its report shows (the bug report's own test); the rest of the output is what
    to read."""
    sections = _sections(text)
    return bool(sections) and all(_DELIBERATE.search(sec) for sec in sections)


def _sections(text: str) -> list[str]:
    """The failure sections of a test run's report (pytest's ``___ name ___``, unittest's
    ``FAIL:``/``ERROR:`` blocks), each up to the next section or summary rule."""
    starts = [m.start() for m in _SECTION.finditer(text)]
    out = []
    for i, a in enumerate(starts):
        b = starts[i + 1] if i + 1 < len(starts) else len(text)
        body = text[a:b]
        head, _, rest = body.partition("\n")
        end = _SECTION_END.search(rest)
        out.append(head + "\n" + (rest[: end.start()] if end else rest))
    return [sec for sec in out if "FAILURES" not in sec.split("\n", 1)[0]]


def _all_elsewhere(text: str, changed: list[str]) -> bool:
    """Every failure section of a test run raises something other than an assertion, from code
    none of whose frames is a changed file: a warning turned error (a deprecation), or an
    exception raised in other source. A failing assertion, or a frame in a changed file, is about
    the candidate."""
    sections = _sections(text)
    if not sections:
        return False
    names = {p.rsplit("/", 1)[-1] for p in changed}
    for sec in sections:
        frames = _frames(sec) + _PYTEST_FRAME.findall(sec)
        if any(f.rsplit("/", 1)[-1] in names for f in frames):
            return False
        excs = [next(g for g in m.groups() if g) for m in _EXC.finditer(sec)]
        if not excs or any(e in ("AssertionError", "Failed", "Failure") for e in excs):
            return False
        if re.search(r"^E\s+assert\b|DID NOT RAISE|not raised", sec, re.M):
            return False
        inner = frames[-1].rsplit("/", 1)[-1] if frames else ""
        warned = all(e.endswith("Warning") for e in excs)
        if not warned and (not inner or re.match(r"test_|.*_test\.py$|tests?\.py$", inner)):
            return False
    return True


@dataclass(frozen=True)
class Verdict:
    value: str  # positive | negative | void
    rule: str  # which rule decided (environment, check-setup, expected, unrelated, failure, ...)
    anchor: str | None = None  # the text that matched


def _frames(text: str) -> list[str]:
    return _FRAME.findall(text)


def _mentions(text: str, changed: list[str]) -> bool:
    """The text names a changed file (path, file name, or module stem of 4+ letters)."""
    for path in changed:
        base = path.rsplit("/", 1)[-1]
        stem = base.rsplit(".", 1)[0]
        mod = path.rsplit(".", 1)[0].replace("/", ".")
        if path in text or base in text or (len(mod) > 6 and mod in text):
            return True
        parent = path.rsplit("/", 2)[-2] if path.count("/") else ""
        s = re.escape(stem)
        # the module itself: its test module, or the stem qualified by its parent package; a bare
        # word (an attribute ``self.engine``, prose) is not a mention of ``template/engine.py``
        forms = [rf"\btest_{s}\b", rf"\b{s}_test\b"]
        if parent:
            forms.append(rf"\b{re.escape(parent)}[./]{s}\b")
        if (
            len(stem) >= 4
            and stem not in ("__init__", "base", "utils", "main", "core")
            and re.search("|".join(forms), text)
        ):
            return True
    return False


_TEST_FILE = re.compile(r"^(?:\S*/)?(?:test_\w+|\w+_tests?|tests?)\.py$")
_INLINE = re.compile(r"\bpython[\d.]*\s+-c\s+(['\"])(.*)\1", re.S)
_IMPORTED = re.compile(r"\b(?:from|import)\s+([A-Za-z_][\w.]*)")


def _test_run(command: str, scripts: set[str]) -> bool:
    """A run of tests: a test runner, or the repository's own test module run directly
    (``python test_requests.py``; not a file the agent wrote, which ``scripts`` names)."""
    if _TEST_RUN.search(command):
        return True
    words = command.split()
    for i, w in enumerate(words[:-1]):
        if re.fullmatch(r"(?:\S*/)?python[\d.]*", w):
            f = words[i + 1]
            return bool(_TEST_FILE.match(f)) and f.rsplit("/", 1)[-1] not in scripts
    return False


def _own_names(changed: list[str]) -> set[str]:
    """The repository's package and module names the changed files sit in (every directory
    component and the module stems)."""
    out = set()
    for p in changed:
        parts = p.split("/")
        out |= {x for x in parts[:-1] if x and x not in (".", "src", "lib")}
        out.add(parts[-1].rsplit(".", 1)[0])
    return out


def is_probe(command: str, changed: list[str]) -> bool:
    """An inline program (``python -c "..."``) that imports no module of the repository and names
    no changed file: a probe of the interpreter or its standard library, which says nothing about
    the candidate whatever it prints."""
    m = _INLINE.search(command)
    if not m or not changed:
        return False
    code = m.group(2)
    own = _own_names(changed)
    tops = {x for name in _IMPORTED.findall(code) for x in name.split(".")}
    return not (tops & own) and not _mentions(code, changed)


def _foreign_missing(text: str, mod: str, changed: list[str]) -> bool:
    """``No module named X`` where X is not of the repository's own packages and the import that
    failed is not in a changed file: the environment lacks a package the unchanged source needs."""
    if mod.split(".")[0] in _own_names(changed):
        return False
    frames = _frames(text)
    return bool(frames) and not _mentions(frames[-1], changed)


# the request complains that a call raises an exception (present tense: "raises a `ValueError`
# instead of ..."; "should raise" asks for it and is not matched)
_COMPLAINT = re.compile(r"(?<!should )(?<!must )\braises\s+(?:an?\s+)?`?(\w+(?:Error|Exception))`?")
_NOT_RAISED = re.compile(r"\b(\w+(?:Error|Exception)) not raised|DID NOT RAISE")
_RAISES_CALL = re.compile(
    r"\b(?:raises|assertRaises\w*)\(\s*(?:[\w.]+\.)?(\w+(?:Error|Exception))\b"
)


def unwanted_raises(instruction: str) -> set[str]:
    """The exceptions the request complains a call raises (``raises a `ValueError` instead of``):
    a test that fails because one of them is no longer raised encodes the behaviour the request
    asks to change. Only the request's own text is read (the PR description when marked)."""
    text = instruction or ""
    m = re.search(r"<pr_description>(.*?)</pr_description>", text, re.S)
    return set(_COMPLAINT.findall(m.group(1) if m else text[:4000]))


def _removed_behaviour(text: str, unwanted: set[str]) -> bool:
    """Every failure section of a test run is an exception of ``unwanted`` not raised."""
    sections = _sections(text)
    if not unwanted or not sections:
        return False
    for sec in sections:
        m = _NOT_RAISED.search(sec)
        if not m:
            return False
        named = m.group(1) or next(iter(_RAISES_CALL.findall(sec)), None)
        if named not in unwanted or re.search(r"^E\s+assert\b", sec, re.M):
            return False
    return True


_OPENER = re.compile(r"^(\s*)(?:async\s+)?(?:def|class|if|elif|else|for|while|try|except|finally|"
                     r"with)\b[^#]*:\s*(?:#.*)?$")  # fmt: skip
_NUMBERED = re.compile(r"^\s*\d+(?:\t|:|-|  )")


def _broken_block(text: str, command: str, changed: list[str]) -> str | None:
    """A listing of a changed Python file in which a block opener (``def f():``, ``if x:``) is
    followed at once by a non-blank line no deeper than it: the block lost its body and the file
    no longer compiles. Returns the opener line, or None. Only contiguous listings (``sed -n``,
    ``cat``, ``nl``, ``head``; not ``grep`` matches or ``diff`` hunks); line numbers are stripped
    first."""
    if not any(p.endswith(".py") and p.rsplit("/", 1)[-1] in command for p in changed):
        return None
    if re.search(r"\b(?:grep|rg|ag|diff|git)\b", command):
        return None  # matches or hunks, not a contiguous listing
    lines = [ln for ln in text.splitlines() if not ln.startswith(("<returncode>", "<output>",
                                                                    "</output>"))]  # fmt: skip
    if lines and sum(bool(_NUMBERED.match(ln)) for ln in lines) > len(lines) // 2:
        lines = [_NUMBERED.sub("", ln, count=1) for ln in lines]
    body = [ln for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    for a, b in zip(body, body[1:], strict=False):
        m = _OPENER.match(a)
        if m and len(b) - len(b.lstrip()) <= len(m.group(1)):
            return a.strip()
    return None


def _other_failure(text: str) -> bool:
    """A failure whose exception is not an image comparison (pytest's ``E   SomeError: ...``
    lines and its ``file.py:LINE: SomeError`` failure trailers)."""
    kinds = re.findall(r"^E\s+(?:[\w.]+\.)?(\w+(?:Error|Exception|Failure))\b", text, re.M)
    kinds += re.findall(r"^\S+\.py:\d+: (\w+)$", text, re.M)
    return any(not _IMAGE_FAIL.search(k) for k in kinds)


def _own_setup(text: str, scripts: set[str], changed: list[str]) -> str | None:
    """The anchor of a failure raised by the check's own script or fixture (every traceback frame
    outside the changed files and the repository's source), or None."""
    m = _SETUP_ERROR.search(text)
    if not m:
        return None
    frames = _frames(text)
    if any(_mentions(f, changed) for f in frames):
        return None
    if _SETUP_STATE.search(m.group(0)):
        return m.group(0)
    if m.group(0).startswith("missing") and not frames:
        return None  # a caught message: whose call it was is unknown
    if frames and not any(
        f.rsplit("/", 1)[-1] in scripts or "site-packages" in f or "/lib/python" in f
        or f.startswith("<") for f in frames[-1:]
    ):  # fmt: skip
        return None
    return m.group(0)


def read_output(
    obs: Observation | None,
    kind: str,
    command: str = "",
    changed: list[str] | None = None,
    scripts: set[str] | None = None,
    unwanted: set[str] | frozenset[str] = frozenset(),
) -> Verdict:
    """One check's verdict. ``kind``: ``run`` or ``inspect``; ``changed``: the target files the
    candidate changed (relative paths); ``scripts``: file names of the agent's own scripts;
    ``unwanted``: the exceptions the request complains are raised (``unwanted_raises``)."""
    changed = changed or []
    scripts = scripts or set()
    if obs is None:
        return Verdict("void", "no output")
    text = obs.text or ""
    if obs.timed_out or _TIMEOUT.search(text[-600:]):
        return Verdict("void", "environment", "timeout")
    if kind == "inspect":
        if obs.exit_code not in (None, 0) and re.search(
            r"\bgrep\s+-\w*q|\bcmp\b|\bdiff\b", command
        ):
            return Verdict("negative", "quiet-check", f"exit {obs.exit_code}")
        m = _INSPECT_NEGATIVE.search(text)
        if m and not text.strip().startswith(("diff ", "@@")):
            return Verdict("negative", "missing-artifact", m.group(0))
        broken = _broken_block(text, command, changed)
        if broken:
            return Verdict("negative", "broken-block", broken)
        return Verdict("positive", "inspection") if text.strip() else Verdict("void", "empty")
    for rx, rule in ((_MISSING_TOOL, "environment"), (_NETWORK, "environment"),
                     (_INSTALL_FAIL, "environment")):  # fmt: skip
        m = rx.search(text)
        if m and (obs.exit_code not in (0, None) or obs.is_error or rx is not _INSTALL_FAIL):
            if not _TRACEBACK.search(text) or rx is _MISSING_TOOL:
                return Verdict("void", rule, m.group(0))
    if obs.exit_code == 127:
        return Verdict("void", "environment", "exit 127")
    if _NO_SCRIPT.search(text):
        return Verdict("void", "check-setup", _NO_SCRIPT.search(text).group(0))
    mm = _MISSING_MODULE.search(text)
    ours = {p.rsplit("/", 1)[-1].rsplit(".", 1)[0] for p in changed}
    if mm and mm.group(1).split(".")[0] not in ours and not _mentions(text, changed):
        return Verdict("void", "environment", mm.group(0))
    if mm and _TRACEBACK.search(text) and _foreign_missing(text, mm.group(1), changed):
        return Verdict("void", "environment", mm.group(0))
    if is_probe(command, changed):
        return Verdict("void", "probe", command[:60])
    if (
        _BUILD.search(command)
        and _BUILD_ENV.search(text)
        and not _COMPILER_DIAG.search(text)
        and not _TRACEBACK.search(text)
    ):
        return Verdict("void", "environment", _BUILD_ENV.search(text).group(0))
    if _ENV_DECLARED.search(text) and _IMAGE_FAIL.search(text) and not _other_failure(text):
        return Verdict("void", "environment", _ENV_DECLARED.search(text).group(0))
    own = _own_setup(text, scripts, changed)
    if own:
        return Verdict("void", "check-setup", own)
    neg = _NEGATIVE.search(text)
    exp = _EXPECTED.search(text)
    if exp and not _UNEXPECTED.search(text):
        if not neg or neg.start() > exp.start() - 200 and "Traceback" not in text[: exp.start()]:
            return Verdict("positive", "expected-exception", exp.group(0))
    if neg and _deliberate(text):
        return Verdict("positive", "deliberate-assert", "assert 0")
    if neg and _test_run(command, scripts) and _removed_behaviour(text, set(unwanted)):
        return Verdict("void", "removed-behaviour", _NOT_RAISED.search(text).group(0))
    if neg and _test_run(command, scripts) and changed and not _mentions(text, changed):
        ids = _TEST_ID.findall(text)
        if ids or re.search(r"\b[1-9][0-9]* failed\b|failures=|errors=|Error \d|\*\*\*", text):
            return Verdict("void", "unrelated-failure", neg.group(0))
    if neg and _test_run(command, scripts) and changed and _all_elsewhere(text, changed):
        return Verdict("void", "unrelated-failure", neg.group(0))
    if neg:
        return Verdict("negative", "failure", neg.group(0))
    if (
        _TEST_RUN.search(command)
        and _NO_TESTS.search(text)
        and not re.search(r"[1-9]\d* passed", text)
    ):
        return Verdict("void", "environment", "no tests ran")
    if obs.exit_code not in (None, 0) or obs.is_error:
        return Verdict("negative", "exit-status", f"exit {obs.exit_code}")
    if not text.strip() or re.fullmatch(
        r"\s*(<returncode>0</returncode>\s*<output>\s*</output>)?\s*", text
    ):
        return Verdict("positive" if obs.exit_code == 0 else "void", "silent-success")
    return Verdict("positive", "output")
