"""One classification of grading outcomes: ``ok``, the agent's failure, or infrastructure.

Every grading path of tasks (Harbor reward files, Terminal-Bench 1's pytest summary and exit
codes) turns what its verifier saw into an ``Observation`` and asks ``classify`` who is to blame.
The rule: **anything the agent's state can cause after its last turn is the agent's 0**; an
outcome is ``infra`` only when a *control* proves the fault lies outside the agent's reach: the
task's oracle (or, for a task without one, the untouched environment: a no-op) graded the same
way, in the same conditions, did not get a clean verdict either.

| what the verifier saw | outcome |
|---|---|
| a clean verdict: the tests ran to their end in time, the test process exited by itself (no signal, never stopped), nothing it started outlived it, the link sweep finished, and the result (reward file, test report, exit code) was read and understood | ``ok``, with that reward |
| the task cannot be graded as configured (no tests; an evaluator that needs the network in a sandbox without one) | ``infra`` (no control needed: the agent's state plays no part) |
| anything else, e.g. a full disk in the agent's dirs, a hang or a timeout in the tests, a test tree killed by a limit, stopped or signalled, a process left behind by the tests, exit 126/127 of a script, no or an unparsable or non-regular reward file, a report that is missing, unparsable or counts 0 tests, every test skipped, a link sweep that did not finish, a sandbox error while grading | the agent's 0 when the control's outcome is clean; ``infra`` when the control's is not (then the task or the machine is broken, and the sample is retried or dropped, never scored) |
| a passing run with per-test results (Terminal-Bench 1's pytest, or the JUnit report of a pytest a Harbor ``test.sh`` ran) that lacks a test the control reported, or skipped one the control did not skip (TB1 counts skips as passes; ``pytest; [ $? -eq 0 ]`` does too) | the agent's 0 |
| a positive Harbor reward whose pytest started but left no report, or a report with 0 tests or cut off (``os._exit(0)`` or ``pytest.exit(returncode=0)`` in the agent's module), where the control's pytest left a full report | the agent's 0 (where the control's report looks the same, the reward stands: the task's own tests run that way) |

A control is graded once per task and conditions and remembered (``evaluate.control``); it runs
when an observation is not clean, or when a passing per-test report must be checked against it,
so plain failures and passes without per-test results cost nothing extra.

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["ok", "agent", "infra"]


@dataclass(frozen=True)
class Observation:
    """What a verifier saw. ``reward`` is the verdict it read (None: none); ``problem`` says
    why the observation is not a clean verdict (None: it is)."""

    reward: float | None
    problem: str | None = None
    tests: dict[str, str] = field(default_factory=dict)  # test id -> PASSED/FAILED/SKIPPED/...
    sandbox_failed: bool = False  # the problem is an error of the sandbox, not of a run
    # a reward file beside the pytest report we asked for (Harbor): "ok" when the report lists
    # its tests (in ``tests``), else why it is no report (cut off, 0 tests); None: no pytest ran
    report: str | None = None

    @property
    def clean(self) -> bool:
        return self.problem is None and self.reward is not None


@dataclass(frozen=True)
class Outcome:
    kind: Kind
    reward: float | None  # 0.0 for the agent's failure, None for infra
    reason: str = ""
    control: str | None = None  # what the control said, when one was asked
    # infra only: the task's evaluator cannot grade even its control (not a sandbox error)
    evaluator_broken: bool = False


def classify(
    obs: Observation, control: Callable[[], Observation] | None = None, *, static: str = ""
) -> Outcome:
    """The outcome of ``obs`` (see the table). ``static``: a reason the task cannot be graded
    at all as configured (infra without a control). ``control`` grades the oracle or a no-op in
    the same conditions; it is called only when ``obs`` is not clean or skipped tests need it.
    Without a control an unclean observation is the agent's 0 (the caller says why none exists)."""
    if static:
        return Outcome("infra", None, static, None, "no tests" in static)
    if obs.clean and not _to_check(obs):
        return Outcome("ok", obs.reward, "")
    ctl = control() if control is not None else None
    said = None if ctl is None else ("clean" if ctl.clean else f"not clean: {ctl.problem}")
    if ctl is not None and not ctl.clean:
        why = obs.problem or "skipped tests"
        why = f"{why}; the control failed too ({ctl.problem})"
        return Outcome("infra", None, why, said, not ctl.sandbox_failed)
    if obs.clean and obs.report not in (None, "ok"):  # a pytest that left no full report
        if ctl is not None and ctl.report not in (None, "ok"):
            return Outcome("ok", obs.reward, "", said)  # the task's own tests run that way
        return Outcome("agent", 0.0, f"a positive reward, but pytest: {obs.report}", said)
    if obs.clean:  # a passing per-test report left to check against the control's
        return _judge_tests(obs, ctl, said)
    return Outcome("agent", 0.0, obs.problem or "no verdict", said)


def _to_check(obs: Observation) -> bool:
    """Whether a clean, positive verdict still needs the control: its per-test report (a skip
    or a missing test may be the agent's doing) or a pytest report that is not one."""
    if obs.reward <= 0:
        return False
    return bool(obs.tests and obs.reward >= 1.0) or obs.report not in (None, "ok")


def _skipped(obs: Observation) -> set[str]:
    return {t for t, s in obs.tests.items() if s == "SKIPPED"}


def _judge_tests(obs: Observation, ctl: Observation | None, said: str | None) -> Outcome:
    """A passing report passes only with every test the control reported, and with skips only
    where the control skipped too (without a control: only if nothing was skipped)."""
    skipped = _skipped(obs)
    reference = ctl.tests if ctl is not None else {}
    lost = sorted((set(reference) - set(obs.tests)) | (skipped - _skipped(ctl) if ctl else skipped))
    if not lost:
        return Outcome("ok", obs.reward, "", said)
    if skipped and skipped == set(obs.tests):
        why = "every test was skipped"
    else:
        why = f"tests missing or skipped that the control ran: {', '.join(lost[:5])}"
    return Outcome("agent", 0.0, why, said)
