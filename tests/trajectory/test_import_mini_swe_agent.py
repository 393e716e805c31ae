"""mini-swe-agent v1 (real SWE-bench run, harbor RFC sample) and v2 (synthetic fixture).

Expected numbers were summed by hand from the raw files (``extra.response.usage`` of every
assistant message)."""

from pathlib import Path

from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_file

DATA = TRAJECTORIES
RUN = DATA / "mini-swe-agent" / "swebench-bash-only_gemini-3-pro"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _one(path):
    trajs = import_file(path)
    assert len(trajs) == 1
    return trajs[0]


def test_v1_resolved_run_with_report_joined(shared_data):
    t = _one(RUN / "trajs" / "django__django-16255" / "django__django-16255.traj.json")
    assert t.source.format == "mini-swe-agent"
    assert (t.totals.turns, t.totals.tool_calls) == (17, 17)
    assert (t.totals.input_tokens, t.totals.output_tokens) == (61068, 2317)
    assert (t.totals.cached_tokens, t.totals.reasoning_tokens) == (33662, 250)
    assert t.totals.usage_source == "reported"
    assert t.outcome.resolved is True and t.outcome.evaluator == "swebench-harness"
    assert t.outcome.details["exit_status"] == "Submitted"
    first = t.turns[0]
    assert first.tool_calls[0].command == "ls -R django/contrib/sitemaps"
    assert first.tool_calls[0].kind == "shell"
    assert first.observations[0].exit_code == 0
    assert first.observations[0].is_error is None and first.observations[0].timed_out is None
    assert first.usage.input_tokens == 1779 and first.usage.output_tokens == 226
    assert first.reasoning.startswith("**Diagnosing the Sitemap Issue**")
    last = t.turns[-1]
    assert last.tool_calls[0].kind == "control"
    assert last.tool_calls[0].command.startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert last.observations[0].exit_code is None  # the submitted diff has no return code
    assert t.model == "google/gemini-3-pro-preview" and t.agent_version == "1.15.0"


def test_v1_unresolved_run(shared_data):
    t = _one(RUN / "trajs" / "django__django-10999" / "django__django-10999.traj.json")
    assert (t.totals.turns, t.totals.tool_calls) == (18, 18)
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.cached_tokens) == (
        115373,
        4833,
        72875,
    )
    assert t.outcome.resolved is False
    assert (
        t.outcome.tests["test_negative (utils_tests.test_dateparse.DurationParseTests)"] == "FAILED"
    )
    assert [o.exit_code for tt in t.turns for o in tt.observations][:17] == [0] * 17


def test_harbor_rfc_sample_with_content_parts(shared_data):
    t = _one(DATA / "mini-swe-agent" / "harbor-rfc-0001" / "mini-swe-agent-trajectory.json")
    assert (t.totals.turns, t.totals.tool_calls) == (3, 3)
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.cached_tokens) == (2512, 199, 0)
    assert t.turns[0].tool_calls[0].command == 'echo "Hello, world!" > hello.txt'
    assert t.turns[0].observations[0].text.startswith("<returncode>0</returncode>")
    assert t.turns[0].observations[0].exit_code == 0
    assert t.outcome.resolved is None  # no SWE-bench report beside it


def test_v2_synthetic_layout():
    t = _one(FIXTURES / "mini_swe_agent_v2_synthetic.traj.json")
    assert t.metadata["trajectory_format"] == "mini-swe-agent-1.1"
    assert (t.totals.turns, t.totals.tool_calls) == (3, 3)
    assert (t.totals.input_tokens, t.totals.cached_tokens, t.totals.output_tokens) == (
        3300,
        2100,
        105,
    )
    assert abs(t.totals.cost_usd - 0.0123) < 1e-9
    c1, c2, c3 = (tt.tool_calls[0] for tt in t.turns)
    assert (c1.id, c1.command, c1.kind) == ("call_1", "echo 'Hello, world!' > hello.txt", "shell")
    o2 = t.turns[1].observations[0]
    assert (o2.call_id, o2.exit_code, o2.timed_out) == ("call_2", -1, True)
    assert c3.kind == "control"
    assert t.outcome.details["exit_status"] == "Submitted"
    lp = t.turns[0].logprobs
    assert lp.tokens == ["I", " will"] and lp.chosen == [-0.1, -0.2]
    assert lp.top_tokens == [["I", "We"], [" will", " can"]]
    assert t.model == "openai/gpt-5-mini"


def test_exit_status_index_is_skipped_not_an_error(shared_data):
    import pytest

    from agentpost.trajectory.importers import NotATrajectory

    index = next((RUN / "trajs").glob("exit_statuses_*.yaml"))
    with pytest.raises(NotATrajectory):
        import_file(index)


def test_v2_responses_api_messages(tmp_path):
    """mini 2.x with a Responses-API model stores ``response.model_dump()`` as the assistant
    message (``output`` items) and ``function_call_output`` observations. Synthetic, in the
    shape of harbor's converter test for mini-swe-agent 2.2.8."""
    import json

    doc = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {
            "mini_version": "2.2.8",
            "model_stats": {"instance_cost": 0.03, "api_calls": 1},
            "config": {"model": {"model_name": "openai/gpt-5.5"}},
        },
        "messages": [
            {"role": "system", "content": "system"},
            {"role": "user", "content": "task"},
            {
                "object": "response",
                "model": "gpt-5.5",
                "usage": {
                    "input_tokens": 100,
                    "input_tokens_details": {"cached_tokens": 25},
                    "output_tokens": 40,
                    "output_tokens_details": {"reasoning_tokens": 30},
                },
                "output": [
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
                    {"type": "message", "content": [{"type": "output_text", "text": "Listing."}]},
                    {
                        "type": "function_call",
                        "name": "bash",
                        "call_id": "fc_1",
                        "arguments": '{"command": "ls"}',
                    },
                ],
                "extra": {"actions": [{"command": "ls", "tool_call_id": "fc_1"}], "cost": 0.03},
            },
            {
                "type": "function_call_output",
                "call_id": "fc_1",
                "output": "<returncode>0</returncode>",
                "extra": {"returncode": 0, "raw_output": ""},
            },
        ],
    }
    f = tmp_path / "r.traj.json"
    f.write_text(json.dumps(doc))
    t = _one(f)
    (turn,) = t.turns
    assert (turn.text, turn.reasoning) == ("Listing.", "think")
    assert (turn.tool_calls[0].command, turn.tool_calls[0].id) == ("ls", "fc_1")
    assert (turn.observations[0].call_id, turn.observations[0].exit_code) == ("fc_1", 0)
    u = turn.usage
    assert (u.input_tokens, u.cached_tokens, u.output_tokens, u.reasoning_tokens) == (
        100,
        25,
        40,
        30,
    )
