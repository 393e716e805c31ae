"""Read what a task's tests left: reward files, a JUnit report, pytest's summary, an exit code.

Each reader turns the bytes ``tasks/verifier.py`` read (or the reason it could not) into an
``outcome.Observation``: a reward and the per-test outcomes when the result is understood, else
the problem. Nothing here decides blame (``outcome.classify`` does).

- Harbor: ``/logs/verifier/reward.txt`` (one number) or ``reward.json`` (a number,
  ``{"reward": x}``, or a one-entry object of numbers); a missing, unparsable or non-regular file
  is a problem, never a silent 0.
- Terminal-Bench 1, pytest parser: the JUnit report pytest wrote into ``/logs/verifier`` (the
  harness asks for it with ``PYTEST_ADDOPTS``, so a task's own runner writes it too), else, as in
  Terminal-Bench's ``PytestParser``, the per-test lines after pytest's "short test summary info"
  header (``-rA``). Resolved when every test PASSED, XFAIL or was SKIPPED (skips are then checked
  against the control); a report with no test is a problem ("0 collected", pytest's exit 5).
- Harbor with pytest (Terminal-Bench 2's ``pytest ...; [ $? -eq 0 ]``): beside a positive
  reward, the JUnit report the harness asked for and the log file pytest opens when it starts
  (both through ``PYTEST_ADDOPTS``): a report's tests go with the reward (checked against the
  control's, as for TB1), and a pytest that started but left no report, or one with 0 tests or
  cut off, is noted (``Observation.report``); no report and no log: no pytest ran, the reward
  stands alone.
- Terminal-Bench 1, any other parser: the runner's exit code (0 resolved, otherwise not; 126/127,
  "cannot run"/"not found", is a problem: the agent's missing script or a missing runner alike).

Layer: pure.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from agentpost.tasks.outcome import Observation

_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(\S+)", re.M)
_PYTEST_SUMMARY = re.compile(r"=+\s*short test summary info\s*=+", re.I)
_PASSING = ("PASSED", "XFAIL", "SKIPPED")


def parse_reward_text(text: str) -> float | None:
    """``reward.txt``: one number (surrounding whitespace allowed)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def parse_reward_json(text: str) -> float | None:
    """``reward.json``: a number, ``{"reward": x}``, or an object with exactly one number."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, dict):
        if "reward" in data:
            data = data["reward"]
        else:
            nums = [v for v in data.values() if isinstance(v, int | float)]
            data = nums[0] if len(nums) == 1 and len(data) == 1 else None
    if isinstance(data, bool) or not isinstance(data, int | float):
        return None
    return parse_reward_text(str(data))


def harbor_reward(files: dict[str, bytes | str]) -> Observation:
    """``files``: ``reward.txt`` and ``reward.json`` as read (bytes) or why not (str)."""
    for name, parse in (("reward.txt", parse_reward_text), ("reward.json", parse_reward_json)):
        got = files.get(name, "missing")
        if got == "missing":
            continue
        if isinstance(got, str):
            return Observation(None, f"/logs/verifier/{name}: {got}")
        value = parse(got.decode("utf-8", "replace"))
        if value is None:
            return Observation(None, f"unparsable reward in /logs/verifier/{name}: {got[:200]!r}")
        return Observation(value)
    return Observation(None, "no reward file (/logs/verifier/reward.txt or reward.json)")


def harbor_outcome(files: dict[str, bytes | str], junit: str, started: str) -> Observation:
    """``harbor_reward`` with the pytest report: ``files[junit]`` (bytes, or why not) and
    ``files[started]`` (pytest's log file: "missing" when pytest never started)."""
    obs = harbor_reward(files)
    if not obs.clean or obs.reward <= 0:
        return obs
    report = files.get(junit, "missing")
    if report == "missing":
        if files.get(started, "missing") == "missing":
            return obs
        return replace(obs, report="it started but wrote no report (ended before its end)")
    if isinstance(report, str):
        return replace(obs, report=f"the JUnit report: {report}")
    tests = junit_tests(report)
    if isinstance(tests, str):
        return replace(obs, report=tests)
    if not tests:
        return replace(obs, report="0 tests collected")
    return replace(obs, tests=tests, report="ok")


def junit_tests(data: bytes) -> dict[str, str] | str:
    """{test id: PASSED/FAILED/ERROR/SKIPPED/XFAIL} from a JUnit XML report, or why not."""
    try:
        root = ET.fromstring(data)
    except (ET.ParseError, ValueError) as e:
        return f"the JUnit report is not valid XML ({e})"
    tests: dict[str, str] = {}
    counted = sum(_int(suite.get("tests")) for suite in root.iter("testsuite"))
    for case in root.iter("testcase"):
        if not case.get("name"):  # a test cut off mid-run (pytest.exit): never a pass
            return "the JUnit report has a test without a name (the run was cut off)"
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        status = "PASSED"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "FAILED" if child.tag == "failure" else "ERROR"
                break
            if child.tag == "skipped":
                xfail = (child.get("type") or "") == "pytest.xfail"
                status = "XFAIL" if xfail else "SKIPPED"
        tests[name] = status
    if counted != len(tests):
        return f"the JUnit report counts {counted} tests but lists {len(tests)}"
    return tests


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return -1


def summary_tests(stdout: str) -> dict[str, str]:
    """The per-test lines after pytest's short test summary header (Terminal-Bench's parser)."""
    parts = _PYTEST_SUMMARY.split(stdout, maxsplit=1)
    return {name: st for st, name in _PYTEST_LINE.findall(parts[-1])} if parts[1:] else {}


def pytest_outcome(report: bytes | str, stdout: str) -> Observation:
    """``report``: the JUnit file's bytes, or why it could not be read ("missing": fall back
    to the summary in ``stdout``)."""
    if isinstance(report, bytes):
        tests = junit_tests(report)
        if isinstance(tests, str):
            return Observation(None, tests)
    elif report != "missing":
        return Observation(None, f"the JUnit report: {report}")
    else:
        tests = summary_tests(stdout)
        if not tests:
            why = "no JUnit report and no pytest short test summary (-rA) with test results"
            return Observation(None, why)
    if not tests:
        return Observation(None, "0 tests collected")
    ok = all(s in _PASSING for s in tests.values())
    return Observation(1.0 if ok else 0.0, None, tests)


def exit_code_outcome(exit_code: int | None) -> Observation:
    if exit_code in (126, 127) or exit_code is None:
        return Observation(None, f"the test runner exited {exit_code} (cannot run / not found)")
    return Observation(1.0 if exit_code == 0 else 0.0)
