"""SWE-agent ``.traj``: 0.x, 1.x function calling, a history-only demonstration, and the
predictions file beside a run. Run-level tokens come from ``info.model_stats``."""

import pytest
from shared_data import TRAJECTORIES

from agentpost.trajectory.importers import NotATrajectory
from agentpost.trajectory.importing import import_file

DATA = TRAJECTORIES / "swe-agent"
TEST_TRAJS = DATA / "tests" / "test_data" / "trajectories"
DEMOS = DATA / "trajectories" / "demonstrations"


def _one(path):
    (t,) = import_file(path)
    return t


def test_v0_run_totals_from_model_stats(shared_data):
    t = _one(next(TEST_TRAJS.glob("gpt4__swe-agent__test-repo*/swe-agent__test-repo-i1.traj")))
    assert t.source.format == "swe-agent"
    assert (t.totals.turns, t.totals.tool_calls) == (5, 5)
    assert (t.totals.input_tokens, t.totals.output_tokens) == (52861, 326)
    assert t.totals.usage_source == "run_total"
    assert all(tt.usage is None for tt in t.turns)  # SWE-agent has no per-call usage
    first = t.turns[0].tool_calls[0]
    assert first.name == "find_file" and first.command == 'find_file "missing_colon.py"\n'
    assert first.kind == "shell"
    assert t.turns[-1].tool_calls[0].kind == "control"  # submit
    assert t.outcome.details["exit_status"] == "submitted"


def test_v0_twelve_steps_with_edits(shared_data):
    t = _one(next(TEST_TRAJS.glob("gpt4__swe-bench-dev-easy*/pydicom__pydicom-1458.traj")))
    assert t.totals.turns == 12
    kinds = [tt.tool_calls[0].kind for tt in t.turns]
    assert kinds[0] == "edit"  # create reproduce_bug.py
    assert kinds.count("edit") >= 2


def test_v1_function_calling_replay(shared_data):
    t = _one(next(DEMOS.glob("replay__marshmallow*/marshmallow-code__marshmallow-1867.traj")))
    assert (t.totals.turns, t.totals.tool_calls) == (11, 11)
    first = t.turns[0].tool_calls[0]
    assert (first.name, first.id) == ("create", "call_cyI71DYnRdoLHWwtZgIaW2wr")
    assert first.kind == "edit" and first.arguments == {"filename": "reproduce.py"}
    assert t.turns[0].extra["execution_time"] == pytest.approx(0.238733730999229)
    # a replay: model_stats says 0 tokens for 11 api calls no model made; placeholders, not data
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.usage_source) == (None,) * 3
    assert t.totals.unknown == ["input_tokens", "output_tokens"]
    assert t.metadata["model_stats"]["tokens_sent"] == 0  # the raw figure stays visible
    assert t.model == "gpt-4o"  # replay_config.agent.model.name


def test_history_only_demonstration(shared_data):
    t = _one(DEMOS / "function_calling_simple.traj")
    assert (t.totals.turns, t.totals.tool_calls) == (5, 5)
    assert t.totals.input_tokens is None and t.totals.usage_source is None
    obs = t.turns[0].observations[0]
    assert obs.call_id == "call_PbWErNIge3YTrli3fiVvmIid"
    assert obs.text.startswith('Found 1 matches for "missing_colon.py"')


def test_predictions_file_is_skipped(shared_data):
    with pytest.raises(NotATrajectory):
        import_file(next(TEST_TRAJS.glob("*/all_preds.jsonl")))
