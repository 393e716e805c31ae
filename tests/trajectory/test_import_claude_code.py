"""Claude Code session JSONL: two labelled synthetic sessions (tests/data/synthetic/claude-code).

``-tmp-srv`` follows Claude Code 2.1.x as its real sessions look (marot/spotter's public
fixtures, MIT, no longer kept in this repository: see tests/data/README.md): one line per content
block with ``message.id`` repeated, usage logged while the response streams (no ``stop_reason``),
``tool_result`` errors, and a compaction sidechain in ``subagents/agent-acompact-*.jsonl``.
``-tmp-hello`` is a 2.0.x session with ``stop_reason`` on some messages, a Write edit and a Task
sidechain. Figures below are counted from the lines as written (messages grouped by
``message.id``; input = input + cache creation + cache read; cached = cache read).
"""

import json
from pathlib import Path

import pytest
from shared_data import TRAJECTORIES

from agentpost.trajectory.importers import detect
from agentpost.trajectory.importing import import_file, import_paths

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "synthetic" / "claude-code"
STREAM = SYNTHETIC / "-tmp-srv" / "5e1c2d3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f.jsonl"
SYN = SYNTHETIC / "-tmp-hello"
SESSION = "7f3a9c1e-2b4d-4e8a-9f10-3c5d6e7f8a90"


def test_detected_from_the_first_line():
    head = STREAM.read_bytes()[:65536]
    assert detect(STREAM, head) == "claude-code"


def test_streamed_session_calls_tools_and_tokens():
    (t,) = import_file(STREAM)
    # 6 assistant lines are 3 API responses (one line per content block)
    assert (t.totals.turns, t.totals.tool_calls) == (3, 3)
    assert (t.model, t.agent_version) == ("claude-opus-4-6", "2.1.38")
    assert t.instruction == "start the dev server in the background"
    assert [c.kind for tt in t.turns for c in tt.tool_calls] == ["shell", "shell", "shell"]
    assert sum(len(tt.observations) for tt in t.turns) == 3
    assert (t.totals.input_tokens, t.totals.cached_tokens) == (9806, 8300)
    first = t.turns[0].usage
    assert (first.input_tokens, first.cached_tokens) == (3 + 1000 + 2000, 2000)


def test_output_counts_logged_mid_stream_are_unknown_not_tiny():
    """Claude Code 2.x logs usage while the response streams; no line has ``stop_reason``, so
    the output counts (12, 5, 40) are lower bounds: null, marked unknown, kept aside."""
    (t,) = import_file(STREAM)
    assert t.totals.output_tokens is None and t.totals.unknown == ["output_tokens"]
    assert [tt.extra["output_tokens_at_least"] for tt in t.turns] == [12, 5, 40]
    assert t.totals.reasoning_tokens is None  # Anthropic reports none


def test_tool_errors_are_kept():
    (t,) = import_file(STREAM)
    assert [[o.is_error for o in tt.observations] for tt in t.turns] == [[False, True], [True], []]


def test_compaction_subagent_is_a_sidechain_of_its_session():
    r = import_paths([STREAM.parent / STREAM.stem])
    assert not r.errors
    (compact,) = r.trajectories
    assert compact.metadata["agent_id"] == "acompact-5e1c2d"
    assert compact.metadata["parent_session_id"] == STREAM.stem
    assert (compact.totals.turns, compact.totals.input_tokens) == (1, 10 + 6800)
    assert compact.totals.cached_tokens == 6800


def test_synthetic_session_blocks_usage_and_errors():
    (t,) = import_file(SYN / f"{SESSION}.jsonl")
    assert (t.totals.turns, t.totals.tool_calls) == (5, 4)
    # msg_01A is three lines (thinking, text, tool_use): one turn, usage counted once
    assert t.turns[0].reasoning == "I should look at the test first."
    assert t.turns[0].text == "Let me look at the test."
    assert (t.totals.input_tokens, t.totals.cached_tokens) == (88313, 82310)
    # msg_01A has no stop_reason (unknown output), the other four do: the sum is partial
    assert t.turns[0].usage.output_tokens is None and t.totals.output_tokens == 95 + 120 + 260 + 40
    assert t.totals.partial is True and t.totals.unknown == ["output_tokens"]
    kinds = [tt.tool_calls[0].kind for tt in t.turns if tt.tool_calls]
    assert kinds == ["other", "edit", "shell", "other"]
    bash = t.turns[2]
    assert bash.tool_calls[0].command == "python -m pytest -q test_hello.py"
    assert bash.observations[0].is_error is True
    assert t.turns[3].observations[0].text == "hello.txt holds exactly 'Hello, world!\\n'."


def test_synthetic_subagent_file():
    sub = SYN / SESSION / "subagents" / "agent-a1b2c3d4.jsonl"
    (t,) = import_file(sub)
    assert t.id == f"{SESSION}:a1b2c3d4" and t.metadata["parent_session_id"] == SESSION
    assert (t.totals.turns, t.totals.input_tokens, t.totals.output_tokens) == (2, 4356, 100)
    assert t.model == "claude-haiku-4-5-20251001"


def test_content_blocks_of_a_type_not_known_here_are_named_not_dropped_silently(tmp_path):
    """A later layout that renames its blocks (``tool_use`` → ``tool_call``) must not import as a
    session without tool calls and say nothing: each unknown block type is named with its line
    and field in the import's warnings."""
    text = (
        STREAM.read_text()
        .replace('"tool_use"', '"tool_call"')
        .replace('"tool_result"', '"tool_output"')
    )
    path = tmp_path / "renamed.jsonl"
    path.write_text(text)
    (t,) = import_file(path)
    warnings = t.metadata["import"].get("warnings", [])
    named = {msg.split("'")[1]: place for place, msg in warnings if "not known here" in msg}
    assert set(named) == {"tool_call", "tool_output"}, warnings
    assert all(
        place.startswith("line ") and "$.message.content" in place for place in named.values()
    )
    (honest,) = import_file(STREAM)
    assert not any("not known here" in m for _, m in honest.metadata["import"].get("warnings", []))


def _session(tmp_path, users: list) -> Path:
    """A Claude Code 2.x session: ``users`` are the user lines' contents, in order (a dict is a
    whole line), then one assistant answer."""
    lines = []
    for i, u in enumerate(users):
        rec = (
            u
            if isinstance(u, dict)
            else {"type": "user", "message": {"role": "user", "content": u}}
        )
        lines.append({"sessionId": "s", "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                      "isSidechain": False, "version": "2.1.15", **rec})  # fmt: skip
    lines.append({"type": "assistant", "sessionId": "s", "uuid": "a", "parentUuid": f"u{len(users) - 1}",
                  "isSidechain": False, "version": "2.1.15",
                  "message": {"id": "m1", "role": "assistant", "model": "claude-opus-4-5",
                              "content": [{"type": "text", "text": "Done."}],
                              "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}})  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


CAVEAT = {"type": "user", "isMeta": True, "message": {"role": "user", "content": (
    "<local-command-caveat>Caveat: The messages below were generated by the user while running "
    "local commands.</local-command-caveat>")}}  # fmt: skip


@pytest.mark.parametrize(
    ("users", "asked"),
    [
        ([CAVEAT, "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
          "<command-args></command-args>", "<local-command-stdout></local-command-stdout>",
          "mise run lint throws issues; mark them ignored"], "mise run lint throws issues; mark them ignored"),
        ([CAVEAT, "<command-name>/exit</command-name>", "<local-command-stdout>Catch you later!"
          "</local-command-stdout>", "another PR comment"], "another PR comment"),
        ([[{"type": "text", "text": "<ide_opened_file>The user opened the file /w/mise.toml in the "
            "IDE.</ide_opened_file>"}, {"type": "text", "text": "create me a .github/CODEOWNERS"}]],
         "create me a .github/CODEOWNERS"),
        (["hello", "write a file about geese in docs"], "write a file about geese in docs"),
        (["Hello!"], "Hello!"),  # nothing else was asked: the first text stays
        (["<system-reminder>x</system-reminder>fix the tests"], "fix the tests"),
    ],
)  # fmt: skip
def test_the_instruction_is_the_first_user_text_that_asks_for_something(tmp_path, users, asked):
    """Claude Code writes its own records into user lines (a /clear or /exit and their caveat
    and output, an IDE notice): the request is the first user text that is not one of them,
    nor a bare greeting."""
    (t,) = import_file(_session(tmp_path, users))
    assert t.instruction == asked


@pytest.mark.parametrize(
    ("session", "starts"),
    [("68/e0ff0d6706", "mise run lint throws issues"), ("73/7e6e3ea2ad", "another PR comment"),
     ("c9/883595c929", "create me a .github/CODEOWNERS"), ("9b/3838281539", "write a file about geese")],
)  # fmt: skip
def test_real_sessions_whose_first_user_record_is_not_the_request(session, starts):
    path = TRAJECTORIES / "wave3/claude-code/entireio__cli" / session / "0/full.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not here (../shared/data beside the checkout)")
    (t, *_) = import_file(path)
    assert (t.instruction or "").startswith(starts)
