"""The Security Suite builder: prompts per task type, and each execution filter keeping what it
should and rejecting what it should (coding and testing in real bwrap sandboxes)."""

from __future__ import annotations

import difflib
import json

import pytest

from agentpost.security.cwe import load_names, load_plan_match
from agentpost.security.recipes.filters import (
    coding_filter,
    planning_filter,
    security_testing_filter,
)
from agentpost.security.recipes.formats import (
    REMINDER,
    FormatError,
    build_prompt,
    parse_plan,
    plan_matches,
)
from agentpost.security.recipes.mixtures import allocate, mix_recipes
from agentpost.security.recipes.teachers import (
    TEST_DIR,
    _new_file_diff,
    scripted_answer,
)
from agentpost.security.suite import find_task

NAMES = load_names()
MATCH = load_plan_match()
CALC = find_task("calculator")  # CWE-94
DOWNLOAD = find_task("file-download")  # CWE-22


def user(msgs):
    return msgs[-1]["content"]


def test_each_task_type_sees_what_b4_says_and_no_more():
    f = user(build_prompt("functional_coding", CALC.instruction, CALC.cwes, NAMES))
    s = user(build_prompt("security_coding", CALC.instruction, CALC.cwes, NAMES))
    p = user(build_prompt("planning", CALC.instruction, CALC.cwes, NAMES, allowed=MATCH["allowed"]))
    t = user(build_prompt("testing", CALC.instruction, CALC.cwes, NAMES, sink=CALC.sink,
                          security_test=CALC.security_test))  # fmt: skip
    assert REMINDER in f and "CWE" not in f and "```diff" in f
    assert "CWE-94" in s and NAMES["94"]["description"][:40] in s and REMINDER not in s
    assert "CWE-94" in p and "CWE-22" in p and "Do not write any implementation" in p
    assert CALC.sink in t and CALC.security_test in t and "test_patch" in t
    assert CALC.sink not in f + s + p  # the location is oracle information for testing only


def plan(ids, **extra):
    report = {"feature_summary": "x", "related_cwes": [], "security_plan": [],
              "evidence_reviewed": [], "primary_cwes": [
                  {"id": i, "name": "", "rationale": "", "confidence": 1} for i in ids]}  # fmt: skip
    return json.dumps(report | extra)


def test_planning_filter_keeps_the_true_cwe_and_rejects_the_rest():
    g, gen = MATCH["theme_groups"], MATCH["generic_parent"]
    assert planning_filter(DOWNLOAD, plan(["CWE-22"])).keep
    assert planning_filter(DOWNLOAD, f"Report:\n```json\n{plan(['cwe-22'])}\n```").keep
    wrong = planning_filter(DOWNLOAD, plan(["CWE-89"]), "soft", g, gen)
    assert (wrong.keep, wrong.reason) == (False, "wrong_cwe")
    # CWE-20 is the generic parent of CWE-22: rejected by exact, accepted by soft
    assert not planning_filter(DOWNLOAD, plan(["CWE-20"])).keep
    assert planning_filter(DOWNLOAD, plan(["CWE-20"]), "soft", g, gen).detail.startswith("generic")
    assert planning_filter(DOWNLOAD, plan(["CWE-73"]), "soft", g, gen).detail.startswith(
        "same_theme"
    )
    assert not planning_filter(DOWNLOAD, plan(["CWE-73"]), "exact", g, gen).keep
    # an extra primary CWE breaks the exact set match
    assert not planning_filter(DOWNLOAD, plan(["CWE-22", "CWE-79"])).keep


def test_planning_filter_rejects_malformed_and_gamed_reports():
    g, gen = MATCH["theme_groups"], MATCH["generic_parent"]
    for text in ("no json here", '{"feature_summary": 1}', plan([]), plan(["22"]),
                 plan(["CWE-22"], related_cwes=[{"id": "CWE-1"}])):  # fmt: skip
        assert planning_filter(DOWNLOAD, text).reason == "bad_format", text
    # listing the whole candidate list to hit some theme is invalid, not a soft match
    everything = plan(MATCH["allowed"])
    v = planning_filter(DOWNLOAD, everything, "soft", g, gen)
    assert (v.keep, v.reason) == (False, "bad_format") and "at most" in v.detail
    with pytest.raises(FormatError):
        parse_plan(plan(["CWE-22"], security_plan=[{"control": "x"}]))
    assert plan_matches(["CWE-862", "CWE-863"], [863, 862]) == (True, "exact")


def test_coding_filter_keeps_only_func_and_sec(backend):
    secure = scripted_answer(CALC, "security_coding", 0, NAMES)
    assert coding_filter(CALC, secure, backend).keep
    v = coding_filter(CALC, scripted_answer(CALC, "security_coding", 1, NAMES), backend)
    assert (v.keep, v.reason) == (False, "sec_fail")  # the vulnerable reference
    assert coding_filter(CALC, "Just use eval().", backend).reason == "no_diff"
    start = (CALC.environment_dir / "calc.py").read_text().splitlines(keepends=True)
    wrong = ["def calculate(expression):\n", "    return 0\n"]
    broken = "".join(difflib.unified_diff(start, wrong, "a/calc.py", "b/calc.py"))
    v = coding_filter(CALC, f"```diff\n{broken}```", backend)
    assert (v.keep, v.reason) == (False, "func_fail")
    tests_only = _new_file_diff("tests/test_mine.py", "assert True\n")
    assert coding_filter(CALC, f"```diff\n{tests_only}```", backend).reason == "tests_only"


def answer(patch: str, command: str) -> str:
    return json.dumps({"test_command": command, "test_patch": patch, "tests": [
        {"name": "t", "cwes": ["CWE-22"], "input": "", "expected_result": "",
         "security_property": ""}]})  # fmt: skip


def test_testing_filter_keeps_tests_that_fail_on_vulnerable_and_pass_on_secure(backend):
    v = security_testing_filter(DOWNLOAD, scripted_answer(DOWNLOAD, "testing", 0, NAMES), backend)
    assert v.keep, v
    assert "'vulnerable': 1" in v.detail and "'secure': 0" in v.detail


def test_testing_filter_rejects_what_it_should(backend):
    def reason(k):
        return security_testing_filter(
            DOWNLOAD, scripted_answer(DOWNLOAD, "testing", k, NAMES), backend
        ).reason

    assert reason(1) == "passes_on_vulnerable"  # always passes
    assert reason(2) == "fails_on_secure"  # always fails
    assert reason(3) == "touches_implementation"  # would swap the code it is judged on
    t = _new_file_diff(f"{TEST_DIR}/test_x.py", "print(1)\n")
    not_found = security_testing_filter(DOWNLOAD, answer(t, "no-such-runner test_x.py"), backend)
    assert not_found.reason == "did_not_execute" and "exit 127" in not_found.detail
    usage = security_testing_filter(
        DOWNLOAD, answer(t, "python3 tests/sv_security/test_x.py; exit 2"), backend
    )
    assert usage.reason == "did_not_execute"
    hang = security_testing_filter(
        DOWNLOAD, answer(t, "sleep 30; python3 test_x.py"), backend, timeout_s=2
    )
    assert hang.reason == "timed_out"
    stale = t.replace("/dev/null", f"a/{TEST_DIR}/test_x.py").replace("-0,0", "-1,1")
    assert security_testing_filter(DOWNLOAD, answer(stale, "python3 test_x.py"), backend).reason in (
        "not_applied", "bad_patch")  # fmt: skip
    assert security_testing_filter(DOWNLOAD, "not json", backend).reason == "bad_format"
    # a command that never runs the submitted tests (here: greps the source) is no test
    grep = answer(t, "! grep -q 'open(' app.py")
    assert security_testing_filter(DOWNLOAD, grep, backend).reason == "command_runs_no_added_test"


def test_size_matched_recipes():
    pools = {"functional_coding": list("ab"), "security_coding": list("cdef"),
             "planning": list("g"), "testing": list("hi")}  # fmt: skip
    mixed = mix_recipes(pools, seed=1)
    assert {k: len(v) for k, v in mixed.items()} == {
        "security_only": 4, "simple_mixture": 4, "security_suite": 4}  # fmt: skip
    assert sorted(mixed["security_only"]) == list("cdef")
    assert set(mixed["simple_mixture"]) <= set("abcdef")
    assert mix_recipes(pools, seed=1) == mixed
    assert allocate({"a": 2, "b": 4, "c": 1, "d": 2}, 4) == {"a": 1, "b": 2, "c": 0, "d": 1}
    with pytest.raises(ValueError):
        allocate({"a": 1}, 2)
