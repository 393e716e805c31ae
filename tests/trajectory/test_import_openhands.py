"""OpenHands v0 event lists, evaluation output.jsonl and the V1 SDK event log.

Expected numbers were summed by hand from the raw files: per-response ``usage`` for event
lists, ``metrics.token_usages`` for the evaluation output, the last ``stats`` snapshot for V1."""

import pytest
from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_file

DATA = TRAJECTORIES / "openhands"
V0 = DATA / "v0"


def test_v0_event_list_with_exit_code_and_cache(shared_data):
    (t,) = import_file(V0 / "tests" / "runtime" / "trajs" / "wrong_initial_state.json")
    assert t.source.format == "openhands-v0"
    assert (t.totals.turns, t.totals.tool_calls) == (4, 4)
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.cached_tokens) == (
        14828,
        358,
        10879,
    )
    assert t.instruction == "Please rename game_2048.py to 2048.py"
    run = t.turns[1]
    assert run.tool_calls[0].name == "execute_bash" and run.tool_calls[0].kind == "shell"
    assert run.tool_calls[0].command == "mv /workspace/game_2048.py /workspace/2048.py"
    assert run.observations[0].exit_code == 0
    assert run.observations[0].call_id == "toolu_01PuY3mXrE6fm3j52GscR4rj"
    assert t.turns[0].tool_calls[0].kind == "other"  # str_replace_editor view
    assert t.turns[-1].tool_calls[0].kind == "control"  # finish


def test_v0_edit_is_kind_edit(shared_data):
    (t,) = import_file(V0 / "tests" / "runtime" / "trajs" / "basic.json")
    assert t.totals.turns == 2
    assert t.turns[0].tool_calls[0].kind == "edit"
    assert t.turns[0].tool_calls[0].arguments["command"] == "create"


def test_harbor_rfc_event_list_reasoning_tokens(shared_data):
    (t,) = import_file(DATA / "harbor-rfc-0001" / "openhands_trajectory.json")
    assert t.totals.turns == 2
    assert (t.totals.input_tokens, t.totals.output_tokens) == (5863 + 5996, 1042 + 44)
    assert t.turns[0].usage.reasoning_tokens == 960
    assert t.turns[0].observations[0].text.endswith("Content: Hello, world!")


def test_eval_output_one_trajectory_per_line(shared_data):
    trajs = import_file(
        V0 / "evaluation" / "benchmarks" / "multi_swe_bench" / "examples" / "output.jsonl"
    )
    assert [t.id for t in trajs] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    assert [t.source.record for t in trajs] == ["line 1", "line 2", "line 3"]
    # model calls: one per response id in metrics.token_usages, plus one per uncaused `error`
    # event (a reply with a bad tool call: in metrics.response_latencies, not in token_usages)
    assert [t.totals.turns for t in trajs] == [23, 34, 50]
    assert [t.totals.tool_calls for t in trajs] == [23, 33, 49]
    assert [t.totals.input_tokens for t in trajs] == [565158, 410169, 938015]
    assert [t.totals.output_tokens for t in trajs] == [2558, 5156, 5627]
    assert [t.totals.cached_tokens for t in trajs] == [0, 0, 0]  # token_usages cache_read_tokens
    codes = [{o.exit_code for tt in t.turns for o in tt.observations} - {None} for t in trajs]
    assert codes == [{0, 2, 127}, {0, 1, 2}, {0, 1, 2, 100}]
    errors = [(tt, o) for tt in trajs[1].turns for o in tt.observations if o.is_error]
    assert len(errors) == 1 and "Parameter 'command'" in errors[0][1].text
    failed = errors[0][0]
    assert (failed.index, failed.tool_calls, failed.usage) == (12, [], None)
    assert failed.extra == {"failed_call": True}
    assert trajs[1].turns[11].tool_calls[0].id == "toolu_12"  # the call before it keeps its result
    assert len(trajs[1].turns[11].observations) == 1
    assert "maximum iteration" in trajs[2].outcome.details["error"]
    assert trajs[0].outcome.resolved is None  # inference output only: no evaluator ran


def test_v1_sdk_events_running_total_diff(shared_data):
    (t,) = import_file(
        DATA / "v1-sdk" / "tests" / "sdk" / "conversation" / "goal" / "fixtures" / "events.jsonl"
    )
    assert t.source.format == "openhands-v1"
    assert t.totals.turns == 3
    assert t.totals.usage_source == "running_total_diff"
    # the sum of per-turn differences is the last cumulative snapshot before the last call
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.cached_tokens) == (
        107458,
        1347,
        68193,
    )
    assert t.turns[0].usage.input_tokens == 35895
    first = t.turns[0].observations[0]
    assert (first.is_error, first.exit_code, first.timed_out) == (True, None, False)
    assert t.turns[1].extra == {"reconstructed": True}  # its ActionEvent is cut from the log
    last = t.turns[2]
    assert last.tool_calls[0].kind == "shell" and last.tool_calls[0].command.startswith(
        "SESSION_URL="
    )
    assert (last.observations[0].exit_code, last.observations[0].is_error) == (1, False)


def _strip(rec, per_call: bool):
    for ev in rec["history"]:
        meta = ev.get("tool_call_metadata")
        if meta:
            meta["model_response"].pop("usage", None)
    if not per_call:
        rec["metrics"]["token_usages"] = []
    return rec


def test_eval_usage_fallbacks(shared_data, tmp_path):
    """Without per-response usage: ``metrics.token_usages`` (reported), then the cumulative
    ``llm_metrics`` differences (running_total_diff) give the same sums."""
    import json

    src = V0 / "evaluation" / "benchmarks" / "multi_swe_bench" / "examples" / "output.jsonl"
    rec = json.loads(src.read_text().splitlines()[0])
    for per_call, source in ((True, "reported"), (False, "running_total_diff")):
        f = tmp_path / f"{source}.jsonl"
        f.write_text(json.dumps(_strip(json.loads(json.dumps(rec)), per_call)) + "\n")
        (t,) = import_file(f)
        assert t.totals.usage_source == source
        assert (t.totals.input_tokens, t.totals.output_tokens) == (565158, 2558)
        assert t.turns[0].usage.input_tokens == 5920


def test_v1_persisted_conversation_folder(shared_data, tmp_path):
    """The SDK persists a conversation as ``<id>/events/event-NNNNN-<event id>.json`` (one event
    per file) beside ``<id>/base_state.json``. The real ``events.jsonl`` laid out that way
    imports as one trajectory with the same numbers; a bad event file is named on its own."""
    import json

    from agentpost.errors import InputError
    from agentpost.trajectory.importing import import_events, import_paths

    src = DATA / "v1-sdk" / "tests" / "sdk" / "conversation" / "goal" / "fixtures" / "events.jsonl"
    (expected,) = import_file(src)
    events = tmp_path / "conv-1" / "events"
    events.mkdir(parents=True)
    lines = src.read_text().splitlines()
    for i in reversed(range(len(lines))):  # written out of order: the index decides
        ev = json.loads(lines[i])
        (events / f"event-{i:05d}-{ev['id']}.json").write_text(json.dumps(ev, indent=2))
    state = {"id": "conv-1", "agent": {"kind": "Agent", "llm": {"model": "litellm_proxy/m"}}}
    (tmp_path / "conv-1" / "base_state.json").write_text(json.dumps(state))
    report = import_paths([tmp_path])
    assert not report.errors and report.files == len(lines) + 1
    assert [s[1] for s in report.skipped] == [
        "OpenHands V1 conversation state, read with its events/ folder"
    ]
    (t,) = report.trajectories
    assert (t.id, t.model, t.source.format) == ("conv-1", "litellm_proxy/m", "openhands-v1")
    assert t.totals == expected.totals and t.turns == expected.turns
    bad = sorted(events.iterdir())[4]
    bad.write_text(json.dumps({"id": "x", "source": "agent"}))
    report = import_paths([tmp_path])
    assert [e.one_line() for e in report.errors] == [f"{bad}: $.kind: missing required field"]
    bad.write_text('{"kind": ')
    with pytest.raises(InputError, match=f"^{bad}: line 1 column 10: invalid JSON"):
        import_events(sorted(events.iterdir()))


def test_v0_response_logprobs(shared_data, tmp_path):
    """``model_response.choices[0].logprobs`` (when the server sent them) go to the turn. No
    real OpenHands log has them, so a logprobs block is added to a copy of a real one."""
    import json

    doc = json.loads((V0 / "tests" / "runtime" / "trajs" / "basic.json").read_text())
    meta = next(ev["tool_call_metadata"] for ev in doc if ev.get("tool_call_metadata"))
    meta["model_response"]["choices"][0]["logprobs"] = {
        "content": [{"token": "ok", "logprob": -0.25, "top_logprobs": []}]
    }
    (tmp_path / "basic.json").write_text(json.dumps(doc))
    (t,) = import_file(tmp_path / "basic.json")
    lp = t.turns[0].logprobs
    assert (lp.tokens, lp.chosen, lp.top_logprobs) == (["ok"], [-0.25], None)
    assert t.turns[1].logprobs is None
