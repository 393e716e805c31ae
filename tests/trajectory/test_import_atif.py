"""Harbor ATIF golden files (Terminus-2 and OpenHands writers). These are Scripted-LLM goldens:
the numbers are placeholders, checked here only as parsing results."""

import orjson
import pytest
from shared_data import TRAJECTORIES

from agentpost.errors import InputError
from agentpost.trajectory.importers import NotATrajectory
from agentpost.trajectory.importing import import_file, import_paths
from agentpost.trajectory.io import dumps

DATA = TRAJECTORIES / "atif" / "harbor-golden"
T2 = DATA / "terminus_2"


def test_terminus_keystrokes_logprobs_and_steps(shared_data):
    (t,) = import_file(T2 / "hello-world-timeout.trajectory.json")
    assert t.source.format == "atif" and t.agent == "terminus-2" and t.model == "openai/gpt-4o"
    assert [tt.step for tt in t.turns] == [2, 3, 4]
    assert (t.totals.input_tokens, t.totals.output_tokens) == (682 + 100 + 100, 55 + 30 + 30)
    # final_metrics also counts a call the agent timeout cut off (no step): kept, not summed
    assert t.metadata["final_metrics"]["total_prompt_tokens"] == 982
    call = t.turns[0].tool_calls[0]
    assert (call.kind, call.command) == ("keystrokes", "echo 'Hello, world!'\n")
    assert call.arguments["duration"] == 0.1
    lp = t.turns[1].logprobs
    assert lp.token_ids[:2] == [70000, 70001] and len(lp.chosen) == 30 and lp.chosen[1] == -0.01
    assert len(lp.prompt_token_ids) == 100


def test_mark_task_complete_is_control_and_parse_error_turn_kept(shared_data):
    (t,) = import_file(T2 / "hello-world-invalid-json.trajectory.json")
    assert t.totals.turns == 4 and t.totals.tool_calls == 3
    assert t.turns[0].tool_calls == []  # the parse-error turn has no call
    assert t.turns[0].observations[0].text.startswith("Previous response had parsing errors")
    assert [c.kind for tt in t.turns[2:] for c in tt.tool_calls] == ["control", "control"]
    assert t.turns[1].reasoning.startswith("I made a mistake")
    assert (t.totals.input_tokens, t.totals.output_tokens) == (2417, 200)


def test_continuation_stitched_and_copied_context_not_double_counted(shared_data):
    (t,) = import_file(T2 / "hello-world-context-summarization-linear-history.trajectory.json")
    assert [tt.step for tt in t.turns] == [2, 3, 4, 5, 6, 7, 8]  # 3 + 4 after the copied steps
    assert t.totals.input_tokens == 682 + 750 + 820 + 1700 + 850 + 850 + 850
    assert t.metadata["continuations"] == [
        "hello-world-context-summarization-linear-history.trajectory.cont-1.json"
    ]
    # linear-history steps carry the Terminus JSON only in the message
    assert t.turns[0].extra["calls_from_message"] is True
    assert t.turns[0].tool_calls[0].command == "mkdir test_dir\n"
    assert t.turns[-1].tool_calls[-1].name == "mark_task_complete"
    with pytest.raises(NotATrajectory):
        import_file(T2 / "hello-world-context-summarization-linear-history.trajectory.cont-1.json")


def test_summarization_parent_and_subagents(shared_data):
    (t,) = import_file(T2 / "hello-world-context-summarization.trajectory.json")
    assert t.totals.turns == 7 and t.totals.input_tokens == 6502
    assert len(t.metadata["subagents"]) == 3
    (a,) = import_file(
        T2 / "hello-world-context-summarization.trajectory.summarization-1-answers.json"
    )
    assert a.id == "test-session-context-summarization-summarization-1-answers"
    assert a.totals.turns == 1 and a.totals.input_tokens == 700  # copied steps skipped
    assert a.metadata["parent_session_id"] == "NORMALIZED_SESSION_ID"


def test_openhands_writer_source_call_id(shared_data):
    (t,) = import_file(DATA / "openhands" / "hello-world.trajectory.json")
    assert t.system_prompt.startswith("You are OpenHands agent")
    assert [c.kind for tt in t.turns for c in tt.tool_calls] == ["edit", "control"]
    assert t.turns[0].observations[0].call_id == "call_fake_1"
    assert (t.totals.input_tokens, t.totals.output_tokens) == (220, 80)


def test_folder_walk_gives_unique_ids(shared_data):
    report = import_paths([DATA])
    ids = [t.id for t in report.trajectories]
    assert len(ids) == len(set(ids)) == 8
    assert not report.errors and len(report.skipped) == 1


def test_harbor_trial_result_joined(shared_data, tmp_path):
    """Harbor's trial layout: ``<trial>/agent/trajectory.json`` beside ``<trial>/result.json``
    (the result file is written here by the test; the trajectory is the real golden)."""
    import json
    import shutil

    (tmp_path / "trial" / "agent").mkdir(parents=True)
    shutil.copy(
        T2 / "hello-world-timeout.trajectory.json", tmp_path / "trial" / "agent" / "trajectory.json"
    )
    (tmp_path / "trial" / "result.json").write_text(
        json.dumps({"trial_name": "t", "verifier_result": {"rewards": {"reward": 1.0}}})
    )
    report = import_paths([tmp_path])
    assert not report.errors and len(report.trajectories) == 1
    assert [s[1] for s in report.skipped] == ["Harbor trial result, joined into its trajectory"]
    out = report.trajectories[0].outcome
    assert (out.resolved, out.reward, out.evaluator) == (True, 1.0, "harbor-verifier")


@pytest.mark.parametrize(
    "step, where, message",
    [
        ({"source": "agent", "tool_calls": 3}, "$.steps[0].tool_calls", "expected list, got int"),
        ({"source": "agent", "observation": "ok"}, "$.steps[0].observation",
         "expected dict, got str"),
        ({"source": "agent", "observation": {"results": 1}}, "$.steps[0].observation.results",
         "expected list, got int"),
        ({"source": "system", "observation": [1]}, "$.steps[0].observation",
         "expected dict, got list"),
    ],
)  # fmt: skip
def test_a_mistyped_step_field_is_an_input_error_at_its_place(tmp_path, step, where, message):
    doc = {"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "a"},
           "steps": [step]}  # fmt: skip
    p = tmp_path / "trajectory.json"
    p.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError) as e:
        import_file(p, fmt="atif")
    assert (e.value.where, e.value.message) == (where, message)


def test_a_count_past_64_bits_is_no_count(tmp_path):
    """``1e26`` or a 30-digit string as a token count is null, and the trajectory serialises
    (the int it would make is past what orjson writes: the writer's traceback)."""
    metrics = {"prompt_tokens": 1e26, "completion_tokens": "9" * 30, "cached_tokens": 5.0}
    doc = {"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "a"},
           "steps": [{"source": "agent", "metrics": metrics}]}  # fmt: skip
    p = tmp_path / "trajectory.json"
    p.write_bytes(orjson.dumps(doc))
    (traj,) = import_file(p, fmt="atif")
    u = traj.turns[0].usage
    assert (u.input_tokens, u.output_tokens, u.cached_tokens) == (None, None, 5)
    dumps(traj)


def test_counts_that_sum_past_64_bits_are_an_input_error(tmp_path):
    step = {"source": "agent", "metrics": {"prompt_tokens": 2**64 - 1}}
    doc = {"schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "a"},
           "steps": [step, step]}  # fmt: skip
    p = tmp_path / "trajectory.json"
    p.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError) as e:
        import_file(p, fmt="atif")
    assert e.value.where == "$" and "input_tokens sum to" in e.value.message
