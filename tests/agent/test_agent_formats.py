"""Action formats as objects chosen by name: the two built-in ones, and a custom format registered
by name that drives the real loop end to end (loopback model server over HTTP, a real bubblewrap
sandbox, the task's real evaluator), then the scripted reference policies through its reply()."""

from __future__ import annotations

import json
import re

import pytest

from agentpost.agent.formats import (
    FORMATS,
    ActionFormat,
    TextBlocksFormat,
    ToolCallsFormat,
    get_format,
    shell_call,
)
from agentpost.agent.llm import Completion, ToolCallRequest
from agentpost.agent.loop import LoopConfig
from agentpost.agent.loopback import LoopbackServer
from agentpost.agent.policies import policy_model, write_and_run
from agentpost.agent.run import Agent, Rollout, rollout_one
from agentpost.agent.transport import OpenAITransport, TransportConfig
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.model import Observation, ToolCall

BACKEND = get_backend("bwrap")
TASK = load_task(bundled_suite_path() / "csv-to-json")
_CMD = re.compile(r"<cmd>(.*?)</cmd>", re.S)


class TagFormat(ActionFormat):
    """Commands in ``<cmd>`` tags, ``<submit/>`` to finish, outputs in ``<output>`` tags."""

    name = "tags"
    guide = "Put one command in <cmd></cmd>; reply <submit/> when you are done."

    def parse(self, comp: Completion) -> tuple[list[ToolCall], str | None]:
        text = comp.text or ""
        if "<submit/>" in text:
            return [ToolCall(name="submit", arguments={}, kind="control")], None
        found = _CMD.findall(text)
        if len(found) != 1:
            return [], f"Found {len(found)} <cmd> tags; use exactly one."
        return [shell_call(found[0].strip(), name="cmd")], None

    def observation_messages(self, calls, observations: list[Observation]) -> list[dict]:
        body = "".join(f"<output>{o.text}</output>" for o in observations)
        return [{"role": "user", "content": body}]

    def reply(self, thought: str, command: str | None) -> dict:
        return {
            "content": f"{thought} " + ("<submit/>" if command is None else f"<cmd>{command}</cmd>")
        }


def test_the_built_in_formats_by_name_and_bad_names() -> None:
    assert isinstance(get_format("tools"), ToolCallsFormat)
    assert isinstance(get_format("text"), TextBlocksFormat) and get_format("text").tools() is None
    assert get_format("agentpost.agent.formats:TextBlocksFormat").name == "text"
    with pytest.raises(ValueError, match="choose from text, tools"):
        get_format("txt")
    with pytest.raises(ValueError, match="is not an agentpost.agent.formats.ActionFormat"):
        get_format("agentpost.agent.loop:LoopConfig")
    # each built-in reply() parses back into the action it stands for (parse's inverse)
    for fmt in (ToolCallsFormat(), TextBlocksFormat()):
        for cmd, kind in (("ls -la", "shell"), (None, "control")):
            r = fmt.reply("t", cmd)
            reqs = [ToolCallRequest("c1", c["name"], json.dumps(c["arguments"]), c["arguments"])
                    for c in r.get("tool_calls", [])]  # fmt: skip
            (call,), problem = fmt.parse(Completion(text=r["content"], tool_calls=reqs))
            assert problem is None and call.kind == kind and (cmd is None or call.command == cmd)


@pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
def test_a_custom_format_registered_by_name_runs_end_to_end_with_the_loopback_server(
    monkeypatch,
) -> None:
    monkeypatch.setitem(FORMATS, "tags", f"{__name__}:TagFormat")
    fmt = get_format("tags")
    replies = [
        fmt.reply("Looking around.", "ls"),
        {"content": "I will think about it."},  # no action: the format's problem message
        fmt.reply("Writing it.", write_and_run(TASK.solution_script, "s")),
        fmt.reply("Done.", None),
    ]
    with LoopbackServer(replies) as srv:
        model = OpenAITransport(TransportConfig(model="loopback", base_url=srv.url, timeout_s=10))
        traj = rollout_one(
            Rollout(TASK, Agent("loopback", lambda t: model), 0),
            BACKEND,
            LoopConfig(mode="tags"),
            "r",
        )
        bodies = srv.requests
    assert traj.metadata["exit_status"] == "submitted" and traj.metadata["mode"] == "tags"
    assert traj.outcome.resolved is True  # graded by the task's evaluator
    assert [[c.kind for c in t.tool_calls] for t in traj.turns] == [
        ["shell"],
        [],
        ["shell"],
        ["control"],
    ]
    assert "tools" not in bodies[0] and fmt.guide in bodies[0]["messages"][1]["content"]
    assert bodies[1]["messages"][-1]["content"].startswith("<output>exit_code: 0")
    assert bodies[2]["messages"][-1]["content"] == "Found 0 <cmd> tags; use exactly one."
    assert traj.turns[1].extra["format_error"].startswith("Found 0")


@pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
def test_the_reference_policies_speak_any_format_through_its_reply(monkeypatch) -> None:
    monkeypatch.setitem(FORMATS, "tags", f"{__name__}:TagFormat")
    agent = Agent("scripted/hasty", lambda t: policy_model("hasty", t, "tags"))
    traj = rollout_one(Rollout(TASK, agent, 0), BACKEND, LoopConfig(mode="tags"), "r")
    assert traj.metadata["exit_status"] == "submitted" and traj.outcome.resolved is False
    assert all(c.name in ("cmd", "submit") for t in traj.turns for c in t.tool_calls)
