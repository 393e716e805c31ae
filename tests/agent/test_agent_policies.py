"""The scripted reference policies over the whole bundled suite: real sandboxes and evaluators,
each policy behaving as its name says, and each trajectory replaying to its recorded outcome."""

from __future__ import annotations

from collections import defaultdict

import pytest

from agentpost.agent.loop import LoopConfig
from agentpost.agent.policies import (
    EXPECTED_RESOLVED,
    POLICIES,
    WASTE_TURNS,
    policy_model,
    write_and_run,
)
from agentpost.agent.run import Agent, Rollout, rollout_one, run_groups
from agentpost.agent.tokenize import count_tokens
from agentpost.errors import InputError
from agentpost.hero.behaviours import detect
from agentpost.replay.run import replay
from agentpost.sandbox.executors import LocalExecutor
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.loader import bundled_suite_path, load_suite, load_task
from agentpost.trajectory.io import iter_jsonl

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
TASKS = {t.id: t for t in load_suite(bundled_suite_path())}


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory) -> dict[tuple[str, str], object]:
    """Every policy once on every bundled task: {(task id, policy): trajectory}."""
    out = tmp_path_factory.mktemp("policies")
    agents = [Agent(n, lambda t, n=n: policy_model(n, t)) for n in POLICIES]
    res = run_groups(
        list(TASKS.values()), agents, attempts=1, out_dir=out, backend=BACKEND,
        loop=LoopConfig(), concurrency=2,
    )  # fmt: skip
    assert res.errors == [] and res.ran == len(TASKS) * len(POLICIES)
    return {
        (t.task_id, t.metadata["agent_label"]): t for t in iter_jsonl(out / "trajectories.jsonl")
    }


def _checks(traj, task) -> list[int | None]:
    """Exit codes of the task's self-check, in order, as the policy ran it."""
    return [
        o.exit_code
        for t in traj.turns
        for c, o in zip(t.tool_calls, t.observations, strict=True)
        if c.command == task.check
    ]


def test_every_policy_gets_the_outcome_its_name_says_on_every_task(suite_run) -> None:
    for (task_id, policy), traj in suite_run.items():
        where = f"{policy} on {task_id}"
        assert traj.model == f"scripted/{policy}" and traj.metadata["exit_status"] == "submitted"
        assert traj.outcome.resolved is EXPECTED_RESOLVED[policy], where
        assert traj.outcome.details["status"] == "ok", where
        assert traj.metadata["shell_state"] == "fresh"
        for turn in traj.turns:
            u = turn.usage
            assert u.source == "estimated" and turn.logprobs is None
            assert u.input_tokens > 0 and u.output_tokens > 0
            assert 0 <= u.cached_tokens <= u.input_tokens


def test_careful_and_hasty(suite_run) -> None:
    for task_id, task in TASKS.items():
        careful = suite_run[(task_id, "careful")]
        commands = [c.command for t in careful.turns for c in t.tool_calls]
        assert commands[: len(task.explore)] == task.explore  # explores first
        assert _checks(careful, task)[-1] == 0  # verifies the build before it stops
        hasty = suite_run[(task_id, "hasty")]
        assert _checks(hasty, task) == [] and len(hasty.turns) == 2  # builds, stops unchecked
        assert hasty.turns[0].tool_calls[0].command == write_and_run(
            task.wrong_solutions[0], "solution"
        )


def test_wrong_then_repaired_finds_its_wrong_candidate_by_a_check_and_fixes_it(suite_run) -> None:
    for task_id, task in TASKS.items():
        traj = suite_run[(task_id, "wrong-then-repaired")]
        commands = [c.command for t in traj.turns for c in t.tool_calls]
        first = commands.index(write_and_run(task.wrong_solutions[0], "candidate"))
        assert commands[first + 1] == task.check and commands[first + 2] == write_and_run(
            task.solution_script, "fix"
        )  # on top of the candidate's state: no rollback
        checks = _checks(traj, task)[-2:]
        assert checks[0] != 0, task_id
        assert traj.outcome.resolved is True, task_id
        assert checks[1] == 0, task_id


def test_wasteful_trips_heros_over_exploration_detector_on_every_task(suite_run) -> None:
    for task_id in TASKS:
        wasteful = suite_run[(task_id, "wasteful")]
        flags = detect(wasteful)
        assert sum(f.over_exploration for f in flags) >= WASTE_TURNS, task_id
        assert not any(f.over_exploration for f in detect(suite_run[(task_id, "careful")]))
        careful = suite_run[(task_id, "careful")]
        assert wasteful.totals.input_tokens > 3 * careful.totals.input_tokens, task_id


def test_policy_trajectories_replay_in_full_to_their_recorded_outcome(suite_run) -> None:
    picked = [(tid, p) for tid in ("git-feature-branch", "config-repair") for p in POLICIES]
    with LocalExecutor(max_workers=2) as pool:
        results = pool.map(lambda k: replay(suite_run[k], TASKS[k[0]], backend=BACKEND), picked)
    by_outcome = defaultdict(list)
    for key, res in zip(picked, results, strict=True):
        traj = suite_run[key]
        assert res.status == "ok", (key, res.message)
        assert (res.resolved, res.reward) == (traj.outcome.resolved, traj.outcome.reward), key
        assert res.fidelity["exit_code_match"] == 1.0, key
        by_outcome[res.resolved].append(key)
    assert by_outcome[True] and by_outcome[False]  # both verdicts reproduced


def test_text_mode_policy() -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    agent = Agent("scripted/careful", lambda t: policy_model("careful", t, "text"))
    traj = rollout_one(Rollout(task, agent, 0), BACKEND, LoopConfig(mode="text"), "test")
    assert traj.outcome.resolved is True and traj.metadata["mode"] == "text"
    assert "```bash" in traj.turns[0].text and traj.turns[-1].tool_calls[0].kind == "control"


def test_tokenizer_is_a_real_bpe() -> None:
    assert count_tokens("hello world") == 2 and count_tokens("") == 0
    assert count_tokens("def f(x):\n    return x * 2\n") < len("def f(x):\n    return x * 2\n")


def test_unknown_policy_is_an_input_error() -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    with pytest.raises(InputError, match="unknown policy"):
        policy_model("reckless", task)


def test_a_policy_is_chosen_by_name_or_by_path_through_the_one_loader() -> None:
    from agentpost.agent.policies import hasty, policy_agents, policy_plan

    assert policy_plan("hasty") is hasty is policy_plan("agentpost.agent.policies:hasty")
    with pytest.raises(InputError, match="choose from careful, hasty, wasteful"):
        policy_plan("reckless")
    with pytest.raises(InputError, match="cannot load policy 'no_such_mod:plan'"):
        policy_agents(["careful", "no_such_mod:plan"])  # before any rollout
    with pytest.raises(InputError, match="names no plan function"):
        policy_plan("agentpost.agent.policies:WASTE_TURNS")
    labels = [a.label for a in policy_agents(["all"])]
    assert labels == [f"scripted/{n}" for n in POLICIES]
