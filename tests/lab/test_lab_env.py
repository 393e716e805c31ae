"""The lab environment's memo gives exactly what fresh sandboxes give: every scripted behaviour
and its verified form, observation for observation and grade for grade, on every family; a
rollout that leaves the scripted commands goes live with its history replayed; a second process
reads the same store."""

from __future__ import annotations

import pytest

from agentpost.lab.env import LabEnv, Memo, scripted_commands
from agentpost.lab.episodes import scripted_episode
from agentpost.lab.plans import task_plans
from agentpost.lab.tasks import write_family
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.loader import load_suite

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("fam")
    write_family(root, seed=5, n_train=3, n_heldout=0, one_slot=True)
    return load_suite(root / "train")


def _run(task, commands, memo):
    with LabEnv(task, BACKEND, memo) as env:
        obs = [env.step(c) for c in commands]
        return obs, env.exits, env.resolved(), env.box is not None


def test_memo_answers_equal_fresh_sandboxes(tasks, tmp_path):
    memo = Memo(tmp_path / "memo.sqlite")
    for task in tasks:
        for teacher in (False, True):
            for name, plan in task_plans(task, teacher).items():
                fresh = _run(task, plan, None)
                first = _run(task, plan, memo)  # fills the memo (live sandbox)
                again = _run(task, plan, memo)  # answered from it
                assert fresh[:3] == first[:3] == again[:3], (task.id, name)
                assert again[3] is False, (task.id, name)  # no sandbox was opened
                assert fresh[2] == (name != "hasty" and name != "hasty-look" or teacher)
    assert memo.hits > 0


def test_a_command_outside_the_scripted_set_goes_live_with_its_history(tasks, tmp_path):
    memo = Memo(tmp_path / "memo.sqlite")
    task = tasks[0]
    plan = task_plans(task)["careful"]
    _run(task, plan, memo)
    own = f"cat /app/{task.path.name}.txt; ls /app"  # not one of the task's commands
    assert own not in scripted_commands(task)
    mixed = [plan[0], plan[1], own, "submit"]
    with LabEnv(task, BACKEND, memo) as env:
        env.step(mixed[0])
        env.step(mixed[1])
        assert env.box is None and env.pure
        obs, _ = env.step(own)
        assert env.box is not None and not env.pure
        env.step("submit")
        graded = env.resolved()
    fresh = _run(task, mixed, None)
    assert obs == fresh[0][2][0] and graded == fresh[2]


def test_a_replay_that_disagrees_with_the_memo_is_an_infra_error(tasks, tmp_path):
    from agentpost.errors import InfraError

    memo = Memo(tmp_path / "memo.sqlite")
    task = tasks[0]
    plan = task_plans(task)["careful"]
    _run(task, plan, memo)
    with LabEnv(task, BACKEND, memo) as env:
        env.step(plan[0])
        env.exits[0] = 99  # as if the memo had recorded another exit
        with pytest.raises(InfraError, match="replaying turn 0"):
            env.step("true # not scripted")


def test_scripted_episodes_match_with_and_without_memo(tasks, tmp_path):
    memo = Memo(tmp_path / "memo.sqlite")
    for b in ("careful", "wrong-then-repaired"):
        a = scripted_episode(tasks[1], b, BACKEND)
        m = scripted_episode(tasks[1], b, BACKEND, memo)
        assert (a.commands, a.observations, a.exits, a.resolved) == (
            m.commands, m.observations, m.exits, m.resolved)  # fmt: skip
