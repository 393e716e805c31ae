"""Issue 28: every layout the importers met in public repositories, each on a labelled
synthetic file that follows a real one (``tests/data/synthetic/README.md`` names it). Every
test here failed on the main of 2025-12 (before issue 28): shifted or lost usage, null
arguments, empty outputs, lost exit codes, merged subagents, unrecognised files, a null model.

The numbers were written into the synthetic files by hand; the assertions repeat them."""

import json
import shutil
from pathlib import Path

import pytest

from agentpost.errors import InputError
from agentpost.hero.behaviours import detect
from agentpost.trajectory.importing import import_file, import_paths

SYN = Path(__file__).resolve().parents[1] / "data" / "synthetic"
CODEX_058 = next((SYN / "codex/sessions/2025/11/18").glob("rollout-*.jsonl"))
CLAUDE_10 = next((SYN / "claude-code/-tmp-stats").glob("*.jsonl"))


def _usage(t):
    return [(x.usage.input_tokens, x.usage.output_tokens) if x.usage else None for x in t.turns]


def _only(paths):
    r = import_paths(paths)
    assert not r.errors, [e.one_line() for e in r.errors]
    return r.trajectories


def test_codex_058_token_count_before_its_items():
    """Each call's usage on that call: not the next call's, none lost, the last turn counted."""
    (t,) = import_file(CODEX_058)
    assert t.agent_version == "0.58.0"
    assert _usage(t) == [(4210, 96), (4420, 150), (4630, 70), (4790, 60)]
    assert (t.totals.input_tokens, t.totals.output_tokens) == (18050, 376)  # = the final total
    assert t.metadata["import"] == {"layout": "codex/count-before-items"}


def test_codex_lost_or_shrinking_counts_are_warned(tmp_path):
    lines = CODEX_058.read_text().splitlines()
    lost = [x for x in lines if '"total_token_usage":{"input_tokens":13260' in x]
    f = tmp_path / CODEX_058.name
    f.write_text("".join(x + "\n" for x in lines if x not in lost))  # the third call's count
    (t,) = import_file(f)
    found = t.metadata["import"]["warnings"]
    assert [w[0] for w in found][:1] == ["line 17: last_token_usage.input_tokens"]
    assert "4790, but the running total grew by 9420" in found[0][1]
    # without its count the third call is not told from the second (one turn, two calls), but
    # no count moved to another call, and the import says a count is missing
    assert _usage(t) == [(4210, 96), (4420, 150), (4790, 60)]
    assert [len(x.tool_calls) for x in t.turns] == [1, 2, 0]
    shrunk = tmp_path / "shrunk.jsonl"
    shrunk.write_text(CODEX_058.read_text().replace('"input_tokens":18050', '"input_tokens":100'))
    (t,) = import_file(shrunk, "codex")
    assert any("went down (13260 to 100)" in w[1] for w in t.metadata["import"]["warnings"])


def test_claude_code_10_subagents_are_split_per_agent():
    trajs = import_file(CLAUDE_10)
    assert [t.id.split(":")[-1] for t in trajs] == [trajs[0].id, "sidechain-1", "sidechain-2"]
    main, one, two = trajs
    assert [t.totals.turns for t in trajs] == [2, 2, 2]
    assert one.instruction == "Count the lines of /tmp/stats/stats.py."
    assert two.turns[0].tool_calls[0].command == "wc -l /tmp/stats/test_stats.py"
    assert two.turns[0].observations[0].text == "17 /tmp/stats/test_stats.py"
    assert (one.metadata["agent_id"], one.metadata["parent_session_id"]) == ("sidechain-1", main.id)
    # output counts only where a line has stop_reason: the sums are lower bounds, said so
    assert two.totals.output_tokens == 64 and two.totals.partial
    assert main.metadata["import"]["layout"] == "claude-code/1.0"


def test_openhands_v1_early_layout_conversation():
    (t,) = _only([SYN / "openhands-v1-early"])
    assert t.metadata["import"]["layout"] == "openhands-v1/early"
    assert t.model == "litellm_proxy/claude-sonnet-4-20250514"  # base_state.json
    calls = [c for x in t.turns for c in x.tool_calls]
    assert all(c.arguments for c in calls)  # tool_call.function.arguments
    assert calls[0].command == "cd /workspace/calc && python -m pytest -q"
    obs = [o for x in t.turns for o in x.observations]
    assert [o.exit_code for o in obs] == [1, None, None, 0, None]  # metadata.exit_code
    assert obs[0].text.endswith("1 failed, 1 passed") and obs[4].text.startswith("add() fixed")
    # per-call usage from base_state.json stats.service_to_metrics token_usages
    assert _usage(t) == [(5210, 88), (5430, 163), (5660, 79), (5780, 41)]
    assert t.totals.usage_source == "reported" and t.totals.cached_tokens == 15700
    # what HERO then sees: the failed test run is a tool error (exit code 1; with the outputs
    # empty and the exit codes lost it saw none), and the second run, after an edit, is no
    # repeated call
    flags = detect(t)
    assert [f.tool_error for f in flags] == [True, False, False, False]
    assert [f.repeated_call for f in flags] == [False, False, False, False]


def test_openhands_v1_evaluation_output():
    out = SYN / "openhands-v1-eval/eval_outputs/swe-bench-lite/claude-sonnet-4_maxiter_100"
    a, b = import_file(out / "output.jsonl")
    assert a.source.format == "openhands-eval" and a.source.record == "line 1"
    assert (a.id, a.totals.turns, a.totals.tool_calls) == ("astropy__astropy-00001", 3, 4)
    assert _usage(a) == [(8120, 95), (8460, 210), (8790, 30)]  # metrics.token_usages
    assert [o.exit_code for x in a.turns for o in x.observations] == [1, 0, 0, None]
    assert a.outcome.details["git_patch"].startswith("diff --git")
    assert b.model == "litellm_proxy/anthropic/claude-sonnet-4-20250514"  # metrics.model_name
    assert "runtime went away" in b.outcome.details["error"]
    assert a.metadata["import"] == {"layout": "openhands-v1/eval"}


def test_openhands_v0_session_folder_under_a_dot_folder():
    (t,) = _only([SYN / "openhands-v0-session"])
    assert t.id == "9c2e4f6a8b0d4c1e9f3a5b7d9e1f2a3b" and t.source.format == "openhands-v0"
    assert t.model == "anthropic/claude-3-7-sonnet-20250219"  # metadata.json llm_model
    assert (t.totals.turns, t.totals.tool_calls) == (3, 3)
    assert [o.exit_code for x in t.turns for o in x.observations] == [0, 2]
    assert (t.totals.input_tokens, t.totals.output_tokens) == (13294, 207)  # = metadata.json
    assert t.instruction == "How many Python files are in /workspace?"
    assert "warnings" not in t.metadata["import"]


def test_openhands_v0_session_totals_cross_checked(tmp_path):
    shutil.copytree(SYN / "openhands-v0-session", tmp_path / "s")
    meta = next((tmp_path / "s").rglob("metadata.json"))
    doc = json.loads(meta.read_text())
    doc["completion_tokens"] = 999
    meta.write_text(json.dumps(doc))
    (t,) = _only([tmp_path / "s"])
    assert t.metadata["import"]["warnings"] == [
        ["metadata.json: completion_tokens", "999, but the calls' output_tokens sum to 207"]
    ]


def test_opendevin_2024_output_with_pairs():
    root = SYN / "opendevin-2024"
    a, b = _only([root])
    assert a.source.format == "openhands-eval" and a.id == "ProntoQA_synthetic_1"
    assert a.metadata["import"]["layout"] == "opendevin/pairs"
    assert (a.totals.turns, a.totals.tool_calls) == (5, 4)
    assert [o.exit_code for x in a.turns for o in x.observations] == [0, 1, None]
    assert a.turns[0].tool_calls[0].command == "ls /workspace"
    assert a.model == "gpt-4o-2024-05-13" and b.model is None


def test_swe_agent_model_from_the_run_folder_args_yaml():
    (t,) = _only([SYN / "swe-agent-run"])
    assert t.model == "gpt4"  # agent.model.model_name of args.yaml


def test_an_unknown_layout_of_a_known_scaffold_is_an_error_naming_the_fields(tmp_path):
    f = tmp_path / "rollout-x.jsonl"
    f.write_text('{"timestamp": "t", "type": "session_meta", "payload": {}}\n')
    f.write_text(CODEX_058.read_text().replace('"type":"response_item"', '"type":"item"'))
    f.write_text(f.read_text().replace('"type":"session_meta"', '"type":"meta"'))
    with pytest.raises(InputError) as e:
        import_file(f, "codex")
    assert "session_meta" in e.value.message and "response_item" in e.value.message

    events = sorted((SYN / "openhands-v1-early").rglob("event-*.json"))
    conv = tmp_path / "conv" / "events"
    conv.mkdir(parents=True)
    for p in events:
        ev = json.loads(p.read_text())
        ev.get("tool_call", {}).pop("function", None)
        ev.pop("tool_name", None)
        (conv / p.name).write_text(json.dumps(ev))
    r = import_paths([conv.parent])
    (err,) = r.errors
    assert err.where == "$.tool_call" and "tool_call.function.name" in err.message

    lines = [json.loads(x) for x in CLAUDE_10.read_text().splitlines()]
    for rec in lines:
        if rec["type"] == "assistant":
            rec["message"]["parts"] = rec["message"].pop("content")
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError) as e:
        import_file(f)
    assert e.value.where == "$.message.content" and "content blocks" in e.value.message


def test_a_json_list_of_v1_events_is_read_as_v1_not_v0(tmp_path):
    """A V1 ``ActionEvent`` has an ``action`` and a ``source``: a list of them looked like a
    v0 event list (and failed with "unhashable type: 'dict'")."""
    events = sorted((SYN / "openhands-v1-early").rglob("event-*.json"))
    f = tmp_path / "conversation.json"
    f.write_text(json.dumps([json.loads(p.read_text()) for p in events], indent=2))
    (t,) = import_file(f)
    assert (t.source.format, t.totals.turns, t.totals.tool_calls) == ("openhands-v1", 4, 5)
    assert [o.exit_code for x in t.turns for o in x.observations] == [1, None, None, 0, None]
    page = tmp_path / "page.json"  # a page of the agent server's event search
    page.write_text(json.dumps({"items": json.loads(f.read_text()), "next_page_id": None}))
    (t,) = import_file(page, "openhands-v1")
    assert t.totals.tool_calls == 5
