"""OpenAI chat-completions logs (litellm), message lists, and the Gemini CLI session file."""

import orjson
import pytest
from shared_data import TRAJECTORIES

from agentpost.errors import InputError
from agentpost.trajectory.importing import import_file
from agentpost.trajectory.io import dumps

DATA = TRAJECTORIES
LLM = DATA / "openai-chat" / "openhands-sdk" / "tests" / "fixtures" / "llm_data"


def test_message_list_tool_calls_and_exit_codes(shared_data):
    (t,) = import_file(LLM / "fncall-llm-message.json")
    assert t.source.format == "openai-chat"
    assert (t.totals.turns, t.totals.tool_calls) == (6, 6)
    assert t.totals.input_tokens is None and t.totals.usage_source is None
    first = t.turns[0].tool_calls[0]
    assert (first.name, first.kind) == ("str_replace_editor", "edit")
    shell = t.turns[1].tool_calls[0]
    assert (shell.name, shell.command, shell.kind) == ("terminal", "pwd && ls -la", "shell")
    assert t.turns[1].observations[0].exit_code == 0
    assert t.turns[0].observations[0].exit_code is None


def test_litellm_log_usage_cost_latency(shared_data):
    (t,) = import_file(
        LLM / "llm-logs" / "litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json"
    )
    assert t.totals.turns == 6  # 5 assistant messages in the prompt + the logged response
    last = t.turns[-1]
    assert (last.usage.input_tokens, last.usage.output_tokens, last.usage.cached_tokens) == (
        6729,
        199,
        0,
    )
    assert last.usage.cost_usd == 0.023172 and last.latency_s == 5.606487989425659
    assert (t.totals.input_tokens, t.totals.output_tokens) == (6729, 199)


def test_nonfncall_log_uses_native_messages_and_cached_tokens(shared_data):
    (t,) = import_file(
        LLM / "nonfncall-llm-logs" / "litellm_proxy__deepseek__deepseek-chat-1757015076.651.json"
    )
    assert t.totals.tool_calls == t.totals.turns == 4
    assert t.turns[0].tool_calls[0].command == "pwd && ls -la"
    assert (t.totals.input_tokens, t.totals.cached_tokens, t.totals.output_tokens) == (
        9204,
        9024,
        79,
    )
    assert t.turns[-1].tool_calls[0].kind == "control"


def test_gemini_cli_session(shared_data):
    (t,) = import_file(DATA / "gemini-cli" / "harbor-rfc-0001" / "gemini-cli-trajectory.json")
    assert t.source.format == "gemini-cli" and t.model == "gemini-2.0-flash"
    assert (t.totals.turns, t.totals.tool_calls) == (1, 0)
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.cached_tokens) == (5915, 24, 0)
    assert t.id == "cdd63974-c2a3-4f1c-931d-cce1db22ec03"


def test_litellm_log_with_logprobs(shared_data, tmp_path):
    """``choices[].logprobs.content[].top_logprobs`` → column-wise ``Logprobs``. No real log
    has logprobs, so the logprobs block is added to a copy of a real one."""
    import json

    src = (
        LLM / "llm-logs" / "litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015025.972.json"
    )
    doc = json.loads(src.read_text())
    doc["response"]["choices"][0]["logprobs"] = {
        "content": [
            {
                "token": "I",
                "logprob": -0.5,
                "top_logprobs": [
                    {"token": "I", "logprob": -0.5},
                    {"token": "Sure", "logprob": -1.5},
                ],
            },
            {
                "token": "'ll",
                "logprob": -0.1,
                "top_logprobs": [
                    {"token": "'ll", "logprob": -0.1},
                    {"token": " will", "logprob": -2.4},
                ],
            },
        ]
    }
    f = tmp_path / "log.json"
    f.write_text(json.dumps(doc))
    (t,) = import_file(f)
    lp = t.turns[-1].logprobs
    assert lp.tokens == ["I", "'ll"] and lp.chosen == [-0.5, -0.1]
    assert lp.top_tokens == [["I", "Sure"], ["'ll", " will"]]
    assert lp.top_logprobs == [[-0.5, -1.5], [-0.1, -2.4]]
    assert t.turns[-1].usage.cost_usd == 0.016626000000000002


@pytest.mark.parametrize(
    "doc, where, message",
    [
        ({"messages": [{"role": "assistant", "tool_calls": "ls"}]}, "$.messages[0].tool_calls",
         "expected list, got str"),
        ([{"role": "assistant", "tool_calls": [5]}], "$[0].tool_calls[0]",
         "expected an object, got int"),
        ([{"role": "assistant", "tool_calls": [{"function": "bash"}]}],
         "$[0].tool_calls[0].function", "expected dict, got str"),
        ({"messages": [], "response": {"choices": [{"message": "hi"}]}},
         "$.response.choices[0].message", "expected an object, got str"),
    ],
)  # fmt: skip
def test_a_mistyped_assistant_message_is_an_input_error_at_its_place(tmp_path, doc, where, message):
    p = tmp_path / "chat.json"
    p.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError) as e:
        import_file(p, fmt="openai-chat")
    assert (e.value.where, e.value.message) == (where, message)


def test_an_exit_code_past_64_bits_is_null(tmp_path):
    doc = [{"role": "assistant", "content": "x"},
           {"role": "tool", "content": f"[Command finished with exit code {'9' * 30}]"}]  # fmt: skip
    p = tmp_path / "chat.json"
    p.write_bytes(orjson.dumps(doc))
    (traj,) = import_file(p, fmt="openai-chat")
    assert traj.turns[0].observations[0].exit_code is None
    dumps(traj)
