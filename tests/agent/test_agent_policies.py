"""The scripted reference policies on real tasks, sandboxes and evaluators."""

from __future__ import annotations

import pytest

from agentpost.agent.loop import LoopConfig
from agentpost.agent.policies import EXPECTED_RESOLVED, POLICIES, WASTE_TURNS, policy_model
from agentpost.agent.run import Agent, Rollout, rollout_one
from agentpost.agent.tokenize import count_tokens
from agentpost.errors import InputError
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.loader import bundled_suite_path, load_task

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
TASKS = ["csv-to-json", "git-feature-branch"]  # git: the wrong candidate leaves a dirty state


def _rollout(policy: str, task_id: str, mode: str = "tools"):
    task = load_task(bundled_suite_path() / task_id)
    agent = Agent(f"scripted/{policy}", lambda t: policy_model(policy, t, mode))
    return task, rollout_one(Rollout(task, agent, 0), BACKEND, LoopConfig(mode=mode), "test")


def _read_only(task, turn) -> bool:
    return all(c.command in task.explore for c in turn.tool_calls)


@pytest.mark.parametrize("task_id", TASKS)
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_policy_outcome_is_what_the_policy_says(policy: str, task_id: str) -> None:
    task, traj = _rollout(policy, task_id)
    assert traj.model == f"scripted/{policy}" and traj.metadata["exit_status"] == "submitted"
    assert traj.outcome.resolved is EXPECTED_RESOLVED[policy]
    assert traj.outcome.details["status"] == "ok"
    for turn in traj.turns:
        u = turn.usage
        assert u.source == "estimated" and turn.logprobs is None
        assert u.input_tokens > 0 and u.output_tokens > 0 and 0 <= u.cached_tokens <= u.input_tokens
    checks = [
        t.observations[0].exit_code for t in traj.turns if t.tool_calls[0].command == task.check
    ]
    if policy == "hasty":
        assert checks == [] and len(traj.turns) == 2
    elif policy == "wrong-then-repaired":
        assert checks[0] != 0 and checks[-1] == 0 and len(checks) == 2
    else:
        assert checks == [0]
    if policy == "wasteful":
        flags = [_read_only(task, t) for t in traj.turns]
        longest = max(len(run) for run in "".join("r" if f else "." for f in flags).split("."))
        assert longest >= 15 and longest >= WASTE_TURNS


def test_wasteful_spends_more_tokens_than_careful() -> None:
    _, careful = _rollout("careful", "csv-to-json")
    _, wasteful = _rollout("wasteful", "csv-to-json")
    assert wasteful.totals.input_tokens > 3 * careful.totals.input_tokens


def test_text_mode_policy() -> None:
    _, traj = _rollout("careful", "csv-to-json", mode="text")
    assert traj.outcome.resolved is True and traj.metadata["mode"] == "text"
    assert "```bash" in traj.turns[0].text and traj.turns[-1].tool_calls[0].kind == "control"


def test_tokenizer_is_a_real_bpe() -> None:
    assert count_tokens("hello world") == 2 and count_tokens("") == 0
    assert count_tokens("def f(x):\n    return x * 2\n") < len("def f(x):\n    return x * 2\n")


def test_unknown_policy_is_an_input_error() -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    with pytest.raises(InputError, match="unknown policy"):
        policy_model("reckless", task)
