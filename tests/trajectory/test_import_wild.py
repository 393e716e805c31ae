"""Issue 17: each case found on real logs nobody here wrote, tested on the file that showed it
(or, where that file cannot be had, a labelled synthetic one that follows the same source)."""

import shutil
from pathlib import Path

from shared_data import TRAJECTORIES

from agentpost.hero.behaviours import turn_has_error
from agentpost.trajectory.importing import import_file, import_paths
from agentpost.trajectory.model import Observation

DATA = TRAJECTORIES
SYN = Path(__file__).resolve().parents[1] / "data" / "synthetic"
MORE = DATA / "more-real"
GEMINI = SYN / "gemini-cli" / "session-2025-10-01T10-00-synthetic.json"
# one conversation's six per-call litellm logs (one folder in the source repository; shared/data
# keeps four of them under more-real/)
LLM_LOGS = [
    d / "openhands-sdk" / "tests" / "fixtures" / "llm_data" / "llm-logs"
    for d in (DATA / "openai-chat", MORE)
]


def test_gemini_observations_are_what_the_model_saw():
    """resultDisplay is the UI's view: empty for a file read, a diff object for a write."""
    (t,) = import_file(GEMINI)
    obs = [o for tt in t.turns for o in tt.observations]
    assert all(o.text for o in obs)
    read = t.turns[0].observations[1]
    assert len(read.text) == 8532 and read.text.startswith("line 1: the quick")
    assert t.turns[1].observations[0].text == "Successfully overwrote file: /w/hello.txt."
    assert [o.exit_code for o in obs] == [0, None, None, 1]


def test_gemini_error_none_line_is_not_a_tool_error():
    """Every Gemini shell output has an ``Error: (none)`` line; without the status (as in its
    ATIF conversion) the error pattern must not call a successful call a failure."""
    (t,) = import_file(GEMINI)
    ok, failed = t.turns[0], t.turns[1]
    for turn in (ok, failed):
        turn.observations = [Observation(call_id=o.call_id, text=o.text) for o in turn.observations]
    assert turn_has_error(ok) is False
    assert "Error: (none)" in failed.observations[1].text
    assert turn_has_error(failed) is False  # text only: nothing in it says failure
    failed.observations[1].text = failed.observations[1].text.replace(
        "Error: (none)", "Error: spawn ENOENT"
    )
    assert turn_has_error(failed) is True


def test_litellm_call_logs_of_one_conversation_are_one_trajectory(shared_data, tmp_path):
    """6 litellm files (one per call) were 6 trajectories with 21 turns."""
    logs = tmp_path / "llm-logs"
    logs.mkdir()
    for f in sorted(p for d in LLM_LOGS for p in d.glob("*.json")):
        shutil.copy(f, logs)
    r = import_paths([logs])
    assert not r.errors and len(r.trajectories) == 1
    (t,) = r.trajectories
    assert (t.totals.turns, t.totals.tool_calls) == (6, 6)
    assert len(t.metadata["call_logs"]) == 6
    # tool results of call k come from the prompt of call k+1; the last call's have none
    assert [len(tt.observations) for tt in t.turns] == [1, 1, 1, 1, 1, 0]
    assert (t.totals.input_tokens, t.totals.output_tokens) == (35428, 804)
    assert t.instruction is not None and t.turns[0].usage.source == "reported"


def test_swe_agent_model_from_replay_config(shared_data):
    (t,) = import_file(
        next((MORE / "swe-agent" / "tests").rglob("6e44b9__sweagenttestrepo-1c2844.traj"))
    )
    assert t.model == "gpt-4o"
    assert (t.totals.input_tokens, t.totals.output_tokens) == (7141, 243)  # real counts stay


def test_swe_agent_placeholder_zero_tokens_are_unknown(shared_data):
    """humanevalfix: api_calls 0, tokens 0 (a demonstration no model made)."""
    (t,) = import_file(next((MORE / "swe-agent").rglob("humanevalfix-python-0.traj")))
    assert t.totals.input_tokens is None and t.totals.output_tokens is None
    assert t.totals.unknown == ["input_tokens", "output_tokens"]
    assert t.totals.usage_source is None


def test_partial_usage_says_partial(shared_data):
    """OpenHands eval output: failed calls are left out of token_usages (turns without usage)."""
    src = DATA / "openhands" / "v0" / "evaluation" / "benchmarks" / "multi_swe_bench" / "examples"
    trajs = import_file(src / "output.jsonl")
    for t in trajs:
        with_usage = sum(
            tt.usage is not None and tt.usage.input_tokens is not None for tt in t.turns
        )
        assert t.totals.partial == (0 < with_usage < t.totals.turns)
    assert any(t.totals.partial for t in trajs) or all(
        all(tt.usage is not None for tt in t.turns) for t in trajs
    )


def test_openhands_final_agent_state_is_the_exit_status(shared_data):
    (t,) = import_file(MORE / "openhands" / "tests" / "runtime" / "trajs" / "basic_gui_mode.json")
    assert t.outcome.details["exit_status"] == "awaiting_user_input"


def test_openhands_resolver_output_imports(shared_data):
    src = MORE / "openhands" / "tests" / "unit" / "resolver" / "mock_output" / "output.jsonl"
    trajs = import_file(src)
    assert [t.id for t in trajs] == ["neubig/pr-viewer#5", "neubig/pr-viewer#1"]
    first = trajs[0]
    assert first.turns[0].tool_calls[0].command == "touch LICENSE"
    assert first.turns[0].observations[0].exit_code == 0
    assert first.outcome.details["resolver_success"] is True and first.outcome.resolved is None


def test_a_totals_field_is_never_a_placeholder_zero(shared_data):
    """Across every sample: a zero token total is a real zero only where turns report it."""
    r = import_paths([DATA, SYN])
    assert not r.errors
    for t in r.trajectories:
        if t.totals.input_tokens == 0:
            assert any(tt.usage and tt.usage.input_tokens == 0 for tt in t.turns), t.id


def test_a_counter_the_source_lacks_is_not_a_zero(tmp_path):
    """OpenHands cumulative metrics without ``cache_read_tokens``: cached is unknown, not 0."""
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}},
        {
            "id": 1,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "llm_metrics": {
                "accumulated_token_usage": {"prompt_tokens": 100, "completion_tokens": 7}
            },
        },
    ]
    path = tmp_path / "events.json"
    path.write_text(__import__("json").dumps(events))
    (t,) = import_file(path)
    u = t.turns[0].usage
    assert (u.input_tokens, u.output_tokens, u.cached_tokens, u.cost_usd) == (100, 7, None, None)
    assert u.source == "running_total_diff" and t.totals.cached_tokens is None
