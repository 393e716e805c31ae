"""One classification of grading outcomes (tasks/outcome.py) and the result readers it is fed
by (tasks/results.py): every row of the table, with and without a failing control."""

from __future__ import annotations

import pytest

from agentpost.tasks.outcome import Observation, classify
from agentpost.tasks.results import (
    exit_code_outcome,
    harbor_reward,
    junit_tests,
    pytest_outcome,
)

CLEAN_CONTROL = Observation(1.0, None, {"t::a": "PASSED", "t::b": "PASSED"})


def _never():
    raise AssertionError("the control must not be graded for a clean verdict")


@pytest.mark.parametrize("reward", [0.0, 0.5, 1.0])
def test_a_clean_verdict_is_ok_without_a_control(reward):
    out = classify(Observation(reward), _never)
    assert (out.kind, out.reward, out.control) == ("ok", reward, None)


@pytest.mark.parametrize(
    "problem",
    ["the tests ran out of time (60 s)", "the test process was killed by a signal (exit 137)",
     "1 process(es) the tests started outlived them", "no reward file", "0 tests collected",
     "the link sweep of the agent's dirs did not finish (timed out)",
     "the sandbox failed while grading: InfraError: x"],
)  # fmt: skip
def test_anything_else_is_the_agents_0_when_the_control_is_clean(problem):
    out = classify(Observation(None, problem), lambda: CLEAN_CONTROL)
    assert (out.kind, out.reward, out.reason, out.control) == ("agent", 0.0, problem, "clean")


def test_infra_only_when_the_control_fails_too():
    broken = classify(Observation(None, "no reward file"), lambda: Observation(None, "no reward"))
    assert (broken.kind, broken.reward, broken.evaluator_broken) == ("infra", None, True)
    down = Observation(None, "the sandbox failed while grading: x", sandbox_failed=True)
    infra = classify(Observation(None, "timeout"), lambda: down)
    assert (infra.kind, infra.evaluator_broken) == ("infra", False)


def test_a_task_that_cannot_be_graded_as_configured_is_infra_without_a_control():
    out = classify(Observation(None, "x"), _never, static="t: task has no tests")
    assert (out.kind, out.evaluator_broken) == ("infra", True)


def test_without_a_control_an_unclean_observation_is_the_agents_0():
    assert classify(Observation(None, "no reward file"), None).kind == "agent"


def test_a_passing_report_is_checked_against_the_controls_tests():
    skipped = Observation(1.0, None, {"t::a": "SKIPPED", "t::b": "SKIPPED"})
    out = classify(skipped, lambda: CLEAN_CONTROL)
    assert (out.kind, out.reason) == ("agent", "every test was skipped")
    missing = classify(Observation(1.0, None, {"t::a": "PASSED"}), lambda: CLEAN_CONTROL)
    assert missing.kind == "agent" and "t::b" in missing.reason
    both_skip = Observation(1.0, None, {"t::a": "PASSED", "t::b": "SKIPPED"})
    ctl_skips = Observation(1.0, None, {"t::a": "PASSED", "t::b": "SKIPPED"})
    assert classify(both_skip, lambda: ctl_skips).kind == "ok"  # skipped for the oracle too
    assert (
        classify(Observation(1.0, None, dict(CLEAN_CONTROL.tests)), lambda: CLEAN_CONTROL).kind
        == "ok"
    )


def test_harbor_reward_files():
    assert harbor_reward({"reward.txt": b" 1\n"}).reward == 1.0
    assert (
        harbor_reward({"reward.txt": "missing", "reward.json": b'{"reward": 0.25}'}).reward == 0.25
    )
    assert harbor_reward({}).problem.startswith("no reward file")
    assert "unparsable" in harbor_reward({"reward.txt": b"yes"}).problem
    fifo = harbor_reward({"reward.txt": "verifier/reward.txt is not a regular file"})
    assert fifo.reward is None and "not a regular file" in fifo.problem


JUNIT_OK = (
    b'<testsuites><testsuite tests="2" failures="1"><testcase classname="t" name="a"/>'
    b'<testcase classname="t" name="b"><failure message="x"/></testcase></testsuite></testsuites>'
)
JUNIT_CUT = (
    b'<testsuites><testsuite tests="0" errors="0"><testcase time="0.000" /></testsuite>'
    b"</testsuites>"
)  # what pytest writes when pytest.exit() cuts a test off


def test_junit_reports():
    assert junit_tests(JUNIT_OK) == {"t::a": "PASSED", "t::b": "FAILED"}
    assert "cut off" in junit_tests(JUNIT_CUT)
    assert "counts 3" in junit_tests(JUNIT_OK.replace(b'tests="2"', b'tests="3"'))
    assert "not valid XML" in junit_tests(b"<testsuites")
    assert pytest_outcome(JUNIT_OK, "").reward == 0.0
    empty = b'<testsuites><testsuite tests="0"></testsuite></testsuites>'
    assert pytest_outcome(empty, "").problem == "0 tests collected"


def test_pytest_summary_is_read_only_without_a_report():
    out = "x\n=== short test summary info ===\nPASSED t.py::a\nSKIPPED t.py::b\n"
    assert pytest_outcome("missing", out).tests == {"t.py::a": "PASSED", "t.py::b": "SKIPPED"}
    assert pytest_outcome("missing", "PASSED t.py::a\n").problem  # before the header: nothing
    assert "not a regular file" in pytest_outcome("junit.xml is not a regular file", out).problem


@pytest.mark.parametrize(
    ("code", "reward", "clean"), [(0, 1.0, True), (1, 0.0, True), (126, None, False),
                                  (127, None, False), (None, None, False)]
)  # fmt: skip
def test_exit_codes(code, reward, clean):
    obs = exit_code_outcome(code)
    assert (obs.reward, obs.clean) == (reward, clean)


JUNIT_BOTH = (
    b'<testsuites><testsuite tests="2"><testcase classname="t" name="a"/>'
    b'<testcase classname="t" name="b"/></testsuite></testsuites>'
)
JUNIT_B_SKIPPED = JUNIT_BOTH.replace(b'name="b"/>', b'name="b"><skipped/></testcase>')


def _harbor(junit, started="missing", reward=b"1\n"):
    from agentpost.tasks.results import harbor_outcome

    files = {"reward.txt": reward, "junit.xml": junit, "pytest.log": started}
    return harbor_outcome(files, "junit.xml", "pytest.log")


def test_a_harbor_reward_goes_with_the_pytest_report_beside_it():
    assert _harbor("missing") == Observation(1.0)  # no pytest ran: the reward alone
    assert _harbor(JUNIT_B_SKIPPED, reward=b"0\n") == Observation(0.0)  # a 0 needs no report
    ok = _harbor(JUNIT_BOTH, started=b"")
    assert (ok.report, ok.tests) == ("ok", {"t::a": "PASSED", "t::b": "PASSED"})
    assert "wrote no report" in _harbor("missing", started=b"").report
    assert _harbor(b'<testsuites><testsuite tests="0"/></testsuites>').report == "0 tests collected"
    assert "not valid XML" in _harbor(b"<x").report


def test_a_harbor_pass_by_absence_is_the_agents_0_where_the_control_has_its_report():
    control = _harbor(JUNIT_BOTH, started=b"")
    for obs in (_harbor(JUNIT_B_SKIPPED), _harbor("missing", started=b""),
                _harbor(JUNIT_BOTH.replace(b'<testcase classname="t" name="b"/>', b"")
                        .replace(b'tests="2"', b'tests="1"'))):  # fmt: skip
        out = classify(obs, lambda: control)
        assert (out.kind, out.reward, out.control) == ("agent", 0.0, "clean"), obs
    assert classify(control, lambda: control).kind == "ok"
    # where the control's pytest leaves no report either, the task's tests run that way
    cut = _harbor("missing", started=b"")
    assert classify(cut, lambda: cut).kind == "ok"
    assert classify(_harbor("missing"), _never).kind == "ok"  # no pytest, no control needed
