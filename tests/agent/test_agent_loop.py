"""The agent loop on real bubblewrap sandboxes, with the loopback server and scripted models."""

from __future__ import annotations

import pytest

from agentpost.agent.formats import SUBMIT_COMMAND
from agentpost.agent.llm import ModelRequestError
from agentpost.agent.loop import AgentLoop, LoopConfig, truncate
from agentpost.agent.loopback import LoopbackServer
from agentpost.agent.policies import write_and_run
from agentpost.agent.run import Agent, Rollout, rollout_one
from agentpost.agent.scripted import ScriptedModel
from agentpost.agent.transport import OpenAITransport, TransportConfig
from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
TASK = load_task(bundled_suite_path() / "csv-to-json")


def _bash(cmd: str) -> dict:
    return {"name": "bash", "arguments": {"command": cmd}}


def _server_policy(script) -> callable:
    """A loopback reply function walking ``script`` (one reply per request that reached it)."""
    steps = iter(script)
    return lambda body: next(steps)


@pytest.mark.parametrize("solution", ["oracle", "wrong"])
def test_end_to_end_loopback_model_records_top10_logprobs_and_graded_outcome(solution) -> None:
    script = TASK.solution_script if solution == "oracle" else TASK.wrong_solutions[0]
    replies = [
        {"content": "Looking around.", "tool_calls": [_bash("ls -la")]},
        {"reasoning": "CSV with quoted commas", "content": "Writing it.",
         "tool_calls": [_bash(write_and_run(script, "s"))]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]},
    ]  # fmt: skip
    with LoopbackServer(replies) as srv:
        srv.fail("429")  # retried inside the transport; the turn is not lost
        model = OpenAITransport(
            TransportConfig(model="loopback-coder", base_url=srv.url, backoff_s=0.01, timeout_s=10)
        )
        traj = rollout_one(
            Rollout(TASK, Agent("loopback-coder", lambda t: model), 0), BACKEND, LoopConfig(), "r"
        )
        sent = srv.responses
    assert traj.metadata["exit_status"] == "submitted" and len(traj.turns) == 3 == len(sent)
    for turn, resp in zip(traj.turns, sent, strict=True):
        content = resp["choices"][0]["logprobs"]["content"]
        assert turn.usage.output_tokens == resp["usage"]["completion_tokens"] == len(content)
        assert turn.logprobs.tokens == [e["token"] for e in content]
        assert turn.logprobs.top_logprobs == [
            [t["logprob"] for t in e["top_logprobs"]] for e in content
        ]
        assert turn.logprobs.top_tokens == [
            [t["token"] for t in e["top_logprobs"]] for e in content
        ]
        assert all(len(row) == 10 for row in turn.logprobs.top_logprobs)
    assert (
        traj.turns[0].extra["attempts"] == 2 and traj.turns[1].reasoning == "CSV with quoted commas"
    )
    assert [c.kind for t in traj.turns for c in t.tool_calls] == ["shell", "shell", "control"]
    assert traj.turns[1].observations[0].exit_code == 0
    # The recorded outcome is the evaluator's verdict on the final state.
    with BACKEND.create(spec_for(TASK)) as box:
        prepare(TASK, box)
        box.exec(write_and_run(script, "s"), cwd=TASK.workdir)
        expected = evaluate(TASK, box)
    assert traj.outcome.resolved is expected.resolved is (solution == "oracle")
    assert traj.outcome.reward == expected.reward and traj.outcome.details["status"] == "ok"
    assert traj.totals.input_tokens == sum(r["usage"]["prompt_tokens"] for r in sent)
    assert traj.totals.usage_source == "reported" and traj.totals.cached_tokens > 0


def _run(model, cfg: LoopConfig | None = None, spec: SandboxSpec | None = None):
    with BACKEND.create(spec or SandboxSpec()) as box:
        return AgentLoop(model, box, cfg or LoopConfig()).run("do it", workdir="/app"), box


def test_text_mode_parses_bash_blocks_format_errors_and_submit() -> None:
    model = ScriptedModel(
        [
            "No code block here.",
            "Let me write.\n```bash\necho hi > /app/x.txt && cat /app/x.txt\n```",
            f"Done.\n```bash\n{SUBMIT_COMMAND}\n```",
        ]
    )
    traj, _ = _run(model, LoopConfig(mode="text"))
    t0, t1, t2 = traj.turns
    assert "format_error" in t0.extra and t0.tool_calls == []
    assert t1.tool_calls[0].command == "echo hi > /app/x.txt && cat /app/x.txt"
    assert t1.observations[0].exit_code == 0 and "hi" in t1.observations[0].text
    assert t2.tool_calls[0].kind == "control" and traj.metadata["exit_status"] == "submitted"
    assert traj.turns[1].usage.source == "estimated" and traj.turns[1].logprobs is None


def test_truncation_timeout_and_exit_codes() -> None:
    replies = [
        {"tool_calls": [_bash("python3 -c \"print('x' * 50000)\"")]},
        {"tool_calls": [_bash("sleep 5")]},
        {"tool_calls": [_bash("exit 3"), {"name": "nope", "arguments": {}}]},
        {"tool_calls": [{"name": "submit", "arguments": {}}]},
    ]
    traj, _ = _run(
        ScriptedModel(replies), LoopConfig(observation_chars=1000, command_timeout_s=0.5)
    )
    big, slow, bad = (t.observations for t in traj.turns[:3])
    assert "characters truncated" in big[0].text and len(big[0].text) < 1200
    assert traj.turns[0].extra["truncated_chars"] == [50001]
    assert slow[0].timed_out is True and slow[0].exit_code is None
    assert bad[0].exit_code == 3 and bad[1].is_error is True
    assert traj.totals.tool_calls == 5 and traj.metadata["exit_status"] == "submitted"
    assert truncate("abcdef", 10) == "abcdef"


def test_step_limit_and_cost_limit_stop_the_loop() -> None:
    traj, _ = _run(ScriptedModel(lambda m: {"tool_calls": [_bash("ls")]}), LoopConfig(step_limit=3))
    assert traj.metadata["exit_status"] == "step_limit" and len(traj.turns) == 3

    from agentpost.agent.llm import Completion
    from agentpost.trajectory.model import Usage

    def priced(messages):
        return Completion(text=None, tool_calls=[], usage=Usage(input_tokens=10, cost_usd=0.4))

    traj, _ = _run(ScriptedModel(priced), LoopConfig(cost_limit_usd=1.0))
    assert traj.metadata["exit_status"] == "cost_limit" and len(traj.turns) == 3

    slow = ScriptedModel(lambda m: {"tool_calls": [_bash("sleep 0.2")]})
    traj, _ = _run(slow, LoopConfig(timeout_s=0.5))
    assert traj.metadata["exit_status"] == "timeout" and 2 <= len(traj.turns) <= 4


def test_a_refused_request_is_raised_and_a_budget_ends_the_rollout_with_a_trajectory() -> None:
    with LoopbackServer([{"tool_calls": [_bash("ls")]}] * 5) as srv:
        srv.fail("400")
        model = OpenAITransport(TransportConfig(model="m", base_url=srv.url, timeout_s=5))
        with pytest.raises(ModelRequestError, match="400"):  # not the agent's outcome
            _run(model)
        budgeted = OpenAITransport(TransportConfig(model="m", base_url=srv.url, max_total_tokens=1))
        traj, _ = _run(budgeted)
    assert traj.metadata["exit_status"] == "budget_exceeded" and len(traj.turns) == 1


def test_snapshots_after_every_call_can_be_graded_later(tmp_path) -> None:
    replies = [
        {"tool_calls": [_bash(write_and_run(TASK.wrong_solutions[0], "w"))]},
        {"tool_calls": [_bash(write_and_run(TASK.solution_script, "s"))]},
        {"tool_calls": [{"name": "submit", "arguments": {}}]},
    ]
    with BACKEND.create(spec_for(TASK)) as box:
        prepare(TASK, box)
        cfg = LoopConfig(snapshot_dir=str(tmp_path / "snapshots"))
        traj = AgentLoop(ScriptedModel(replies), box, cfg).run(TASK.instruction, traj_id="a/b")
    from agentpost.sandbox.base import Snapshot
    from agentpost.sandbox.snapshot_store import trusted

    verdicts = []
    for step, t in enumerate(traj.turns[:2]):
        with trusted(t.extra["snapshots"][0], tmp_path, traj.id, (step, 0)) as found:
            with BACKEND.restore(Snapshot(path=str(found.path), spec=spec_for(TASK))) as box:
                verdicts.append(evaluate(TASK, box).resolved)
    assert verdicts == [False, True]


def test_every_command_runs_in_a_fresh_shell_as_the_trajectory_says() -> None:
    replies = [
        {"tool_calls": [_bash("cd /tmp && export AGENTPOST_X=1 && pwd")]},
        {"tool_calls": [_bash('pwd; echo "x=${AGENTPOST_X:-unset}"')]},
        {"tool_calls": [{"name": "submit", "arguments": {}}]},
    ]
    traj, _ = _run(ScriptedModel(replies))
    first, second = (t.observations[0].text for t in traj.turns[:2])
    assert "/tmp" in first and "/app" in second and "x=unset" in second
    assert traj.metadata["shell_state"] == "fresh"
