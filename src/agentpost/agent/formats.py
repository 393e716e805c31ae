"""Action formats: how the agent loop asks a model for actions, reads them from its reply and
answers with what they did. One object per format, chosen by name (``LoopConfig.mode``).

- ``tools`` (``ToolCallsFormat``): the model calls a ``bash`` tool (``{"command": ...}``) and a
  ``submit`` tool; each observation goes back as a ``tool`` message.
- ``text`` (``TextBlocksFormat``): for models without tool calling, the reply holds exactly one
  fenced ```` ```bash ```` block, and the block ``echo AGENTPOST_SUBMIT`` submits; the
  observations go back as one user message.

A name not in ``FORMATS`` is a ``package.module:Class`` path (the one component loader,
``agentpost.components``), so a new format needs no change here: subclass ``ActionFormat`` and
override its hooks:

- ``guide``: the line appended to the task instruction;
- ``tools()``: the tool schemas sent with every request (None: none);
- ``parse(comp)``: ``(calls, problem)``: the ``ToolCall`` list of a completion, or a problem
  message for a reply with no usable action. A call's ``kind`` says what the loop does:
  ``shell`` runs ``command`` in the sandbox, ``control`` submits, anything else is answered with
  an error observation;
- ``assistant_message(comp, calls)``: the model's turn as the conversation keeps it;
- ``observation_messages(calls, observations)``: what the model reads back after its actions;
- ``problem_message(problem)``: what it reads back after an unusable reply;
- ``reply(thought, command)``: the reply a scripted model gives to run ``command`` (None:
  submit), the inverse of ``parse``, so the reference policies drive any format.

A format holds no per-rollout state: one instance may serve many loops at once.

Layer: io (formats are resolved by name; the hooks themselves are pure).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from agentpost.agent.llm import Completion, ToolCallRequest
from agentpost.components import load_named
from agentpost.trajectory.model import Observation, ToolCall

SUBMIT_COMMAND = "echo AGENTPOST_SUBMIT"
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command in the work directory and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run."}},
            "required": ["command"],
        },
    },
}
SUBMIT_TOOL = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Finish the task: your work directory is graded as it is now.",
        "parameters": {"type": "object", "properties": {}},
    },
}
_BASH_BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)```", re.S)


class ActionFormat:
    """The hooks a format overrides (see the module docstring); the defaults are the text
    conversation shape every format shares unless it says otherwise."""

    name = "base"
    guide = ""

    def tools(self) -> list[dict[str, Any]] | None:
        return None

    def parse(self, comp: Completion) -> tuple[list[ToolCall], str | None]:
        raise NotImplementedError(f"action format {self.name!r} must define parse()")

    def assistant_message(self, comp: Completion, calls: list[ToolCall]) -> dict[str, Any]:
        return {"role": "assistant", "content": comp.text or ""}

    def observation_messages(
        self, calls: list[ToolCall], observations: list[Observation]
    ) -> list[dict[str, Any]]:
        if not observations:
            return []
        return [{"role": "user", "content": "\n".join(o.text or "" for o in observations)}]

    def problem_message(self, problem: str) -> dict[str, Any]:
        return {"role": "user", "content": problem}

    def reply(self, thought: str, command: str | None) -> dict[str, Any]:
        raise NotImplementedError(f"action format {self.name!r} must define reply()")


def shell_call(command: str, call_id: str | None = None, name: str = "bash") -> ToolCall:
    """A bash call; ``SUBMIT_COMMAND`` as its first line makes it the submit (``control``)."""
    kind = "control" if command.strip().splitlines()[:1] == [SUBMIT_COMMAND] else "shell"
    return ToolCall(id=call_id, name=name, arguments={"command": command}, command=command,
                    kind=kind)  # fmt: skip


class ToolCallsFormat(ActionFormat):
    name = "tools"
    guide = "Use the bash tool to run commands. When you are done, call the submit tool."

    def tools(self) -> list[dict[str, Any]]:
        return [BASH_TOOL, SUBMIT_TOOL]

    def parse(self, comp: Completion) -> tuple[list[ToolCall], str | None]:
        calls = [
            self._classify(c, c.id or f"call_{uuid.uuid4().hex[:8]}_{j}")
            for j, c in enumerate(comp.tool_calls)
        ]
        return (
            calls,
            None if calls else "No tool call. Use the bash tool, or call submit when done.",
        )

    @staticmethod
    def _classify(c: ToolCallRequest, cid: str) -> ToolCall:
        if c.name == "submit":
            return ToolCall(id=cid, name="submit", arguments=c.parsed, kind="control")
        cmd = c.parsed.get("command") if isinstance(c.parsed, dict) else None
        if c.name != "bash" or not isinstance(cmd, str):
            return ToolCall(id=cid, name=c.name, arguments=c.parsed or c.arguments, kind="other")
        kind = "control" if cmd.strip() == SUBMIT_COMMAND else "shell"
        return ToolCall(id=cid, name="bash", arguments=c.parsed, command=cmd, kind=kind)

    def assistant_message(self, comp: Completion, calls: list[ToolCall]) -> dict[str, Any]:
        msg = comp.message()
        for raw, call in zip(msg.get("tool_calls", []), calls, strict=True):
            raw["id"] = call.id  # the ids the tool messages answer
        return msg

    def observation_messages(
        self, calls: list[ToolCall], observations: list[Observation]
    ) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": c.id, "content": o.text or ""}
                for c, o in zip(calls, observations, strict=False)]  # fmt: skip

    def reply(self, thought: str, command: str | None) -> dict[str, Any]:
        if command is None:
            return {"content": thought, "tool_calls": [{"name": "submit", "arguments": {}}]}
        return {
            "content": thought,
            "tool_calls": [{"name": "bash", "arguments": {"command": command}}],
        }


class TextBlocksFormat(ActionFormat):
    name = "text"
    guide = (
        "Reply with a short thought and exactly one ```bash block holding the command to run. "
        f"When you are done, reply with the block `{SUBMIT_COMMAND}` alone."
    )

    def parse(self, comp: Completion) -> tuple[list[ToolCall], str | None]:
        blocks = _BASH_BLOCK.findall(comp.text or "")
        if len(blocks) != 1:
            return [], f"Found {len(blocks)} ```bash blocks; reply with exactly one."
        return [shell_call(blocks[0].strip())], None

    def reply(self, thought: str, command: str | None) -> dict[str, Any]:
        return {"content": f"{thought}\n\n```bash\n{command or SUBMIT_COMMAND}\n```"}


FORMATS = {
    "tools": "agentpost.agent.formats:ToolCallsFormat",
    "text": "agentpost.agent.formats:TextBlocksFormat",
}


def get_format(name: str) -> ActionFormat:
    """A fresh format instance: a ``FORMATS`` name or a ``package.module:Class`` path. Raises
    ``ValueError`` naming the choices, or when the class is not an ``ActionFormat``."""
    fmt = load_named(FORMATS, name, "action format")
    if not isinstance(fmt, ActionFormat):
        raise ValueError(f"action format {name!r} is not an agentpost.agent.formats.ActionFormat")
    return fmt
