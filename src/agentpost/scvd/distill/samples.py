"""SCVD training data (spec b.7): hand the student's state to a teacher at the candidate
boundary with the verification instruction g_ver, then build the training sample with g_ver
removed and the loss on the teacher's continuation only.

Defaults (spec b.7 [unspecified] choices):
- hand-off at tool-call granularity (``handoff="tool_call"``): the student's history ends right
  after the boundary call; later calls of that step are dropped. ``handoff="step"`` keeps the
  whole boundary step.
- g_ver is appended as one delimited block to the observation that follows the boundary (the
  last tool message of the prefix); ``remove_g_ver`` deletes exactly that block, so the sample the
  student trains on is byte-identical to a context without it.
- the sample is kept only when the final state passes the evaluator (R*(x, s_T) = 1).
- ``supervise_reasoning``: teacher reasoning goes into the target when True (the student chat
  template decides whether it can hold it).

Messages are OpenAI chat format. The teacher run itself (a model in the agent loop, from the
replayed sandbox state) is the agent runtime's job; this module builds its input and its output.

Layer: pure.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from agentpost.trajectory.calls import call_outputs, step_ids
from agentpost.trajectory.model import Trajectory, Turn

GVER_VERSION = "g_ver/1"
BEGIN = f"\n\n<<<agentpost {GVER_VERSION}: verification hand-off>>>\n"
END = "\n<<<end of verification hand-off>>>"

G_VER = """Continue the same task from the work and terminal state you have now. Before you declare \
the task complete, judge the existing candidate against the original requirements; an earlier \
claim that the task is complete is not evidence.
Keep every reply valid for the scaffold's format (compact single-line analysis and plan, line \
breaks escaped). Treat /logs, debug files and run-control metadata as framework internals, never \
as evidence.
1. Ground in the requirements: state the task's own success conditions, only the dimensions that \
matter here: artifact contracts (paths, formats, schemas, permissions, versions, entry points, \
exact output conventions), behaviour observable through the intended interface, boundary and \
invalid inputs, failure and cleanup behaviour, inputs and side effects that must stay unchanged, \
integration and persistent state (fresh process, restart, real protocol), quantitative \
thresholds. Do not invent requirements and do not add a checklist field.
2. Audit the evidence you already have: only concrete commands with visible output, or state you \
can inspect, count. Evidence is enough only if it was produced after the last relevant change, on \
the real final artifact, with command, input, working directory and result visible, under the \
relevant fresh process, user, directory and PATH, run to completion with the expected exit status \
and output, and without leaving the state changed. If every condition is covered, cite the \
evidence and stop; do not re-run checks for ceremony.
3. Design reliable checks for the gaps: the smallest set that tells pass from fail, each naming \
its condition and the observation that separates pass from fail. Expectations must not come from \
the implementation itself (use a trusted tool, a reference, a differential or round-trip test, a \
derived property, or fresh input). Use public interfaces and bounded launches, exact comparison \
where the contract is exact, and repeated measurements for stochastic or performance claims. \
Existence, compilation, liveness and open ports are supporting evidence only. No fake, mocked or \
self-fulfilling checks.
4. Execute safely: run stateful checks on copies or temporary resources, bound every blocking \
command, never edit the task's tests or acceptance criteria, never change the deliverable to suit \
a diagnostic, and re-check the final state after any check that changes state.
5. Diagnose what you see: tell apart a defect in the artifact, a defect in your check, a limit of \
the environment and ambiguous evidence. Change the artifact only for a real defect; fix your own \
broken checks; never weaken acceptance; state limits you cannot avoid.
6. Repair and re-check: fix the smallest root cause in the real artifact, re-run the failed check \
(or a stronger one) on the repaired state, and re-check the conditions the repair touches. Do not \
reuse evidence from before the repair.
7. Stop once every core condition has strong evidence aligned with the task and no actionable \
check remains for any unavoidable limitation."""


def student_prefix(
    traj: Trajectory, step: int, index: int, handoff: Literal["tool_call", "step"] = "tool_call"
) -> Trajectory:
    """The student's history through the boundary call (a copy; ``traj`` is unchanged)."""
    turns = step_ids(traj)
    if step not in turns or not 0 <= index < len(turns[step].tool_calls):
        raise ValueError(f"{traj.id}: no tool call {index} in step {step}")
    kept: list[Turn] = []
    for sid, turn in turns.items():
        t = turn.model_copy(deep=True)
        if sid == step:
            if handoff == "tool_call":
                # only the kept calls' own outputs (protocol.call_outputs): a screen that
                # belongs to a dropped later call never leaks into the prefix
                kept_out = call_outputs(t)[: index + 1]
                t.tool_calls = t.tool_calls[: index + 1]
                t.observations = [o for o in kept_out if o is not None]
            kept.append(t)
            break
        kept.append(t)
    return traj.model_copy(update={"turns": kept}, deep=True)


def to_messages(traj: Trajectory, user: str | None = None) -> list[dict[str, Any]]:
    """Chat messages: system, the instruction (or ``user``, the first user message as the
    scaffold sent it), then per turn the assistant message and one tool message per
    observation."""
    msgs: list[dict[str, Any]] = []
    if traj.system_prompt:
        msgs.append({"role": "system", "content": traj.system_prompt})
    msgs.append({"role": "user", "content": (traj.instruction or "") if user is None else user})
    for t in traj.turns:
        m: dict[str, Any] = {"role": "assistant", "content": t.text or ""}
        if t.reasoning:
            m["reasoning_content"] = t.reasoning
        if t.tool_calls:
            m["tool_calls"] = [
                {"id": c.id or f"call_{t.index}_{j}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.arguments if c.arguments is not None else {"command": c.command})}}
                for j, c in enumerate(t.tool_calls)
            ]  # fmt: skip
        msgs.append(m)
        outs = call_outputs(t)
        for j, o in enumerate(outs):  # one tool message per call (protocol.call_outputs)
            if o is not None or len(outs) > 1:
                msgs.append({"role": "tool", "tool_call_id": m["tool_calls"][j]["id"],
                             "content": (o.text if o is not None else None) or ""})  # fmt: skip
        tied = {id(o) for o in outs if o is not None}
        for o in t.observations:  # outputs no call owns (e.g. a turn without tool calls)
            if id(o) not in tied:
                msgs.append({"role": "tool", "tool_call_id": o.call_id, "content": o.text or ""})
    return msgs


def insert_g_ver(messages: list[dict[str, Any]], g_ver: str = G_VER) -> list[dict[str, Any]]:
    """A copy with g_ver appended to the last tool message (the observation after the boundary)."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m["role"] == "tool":
            m["content"] = (m["content"] or "") + BEGIN + g_ver + END
            return out
    raise ValueError("no observation after the boundary to carry g_ver")


def remove_g_ver(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy with exactly the g_ver block deleted; an error unless there is exactly one."""
    hits = [
        i
        for i, m in enumerate(messages)
        if isinstance(m.get("content"), str) and BEGIN in m["content"]
    ]
    if len(hits) != 1:
        raise ValueError(f"expected one g_ver block, found {len(hits)}")
    out = [dict(m) for m in messages]
    text = out[hits[0]]["content"]
    start = text.index(BEGIN)
    end = text.index(END, start) + len(END)
    out[hits[0]]["content"] = text[:start] + text[end:]
    return out


def training_sample(
    prefix: Trajectory,
    teacher_turns: list[Turn],
    resolved: bool | None,
    *,
    supervise_reasoning: bool = True,
) -> dict[str, Any] | None:
    """The SCVD sample: messages of prefix ‖ teacher continuation (no g_ver) and a loss mask that
    is 1 exactly on the teacher's assistant messages. None unless ``resolved`` (R*(s_T) = 1)."""
    if not resolved:
        return None
    student = to_messages(prefix)
    combined = prefix.model_copy(update={"turns": [*prefix.turns, *teacher_turns]}, deep=True)
    messages = to_messages(combined)
    if not supervise_reasoning:
        for m in messages[len(student) :]:
            m.pop("reasoning_content", None)
    mask = [int(i >= len(student) and m["role"] == "assistant") for i, m in enumerate(messages)]
    return {
        "format": "agentpost.scvd.sample/1",
        "trajectory": prefix.id,
        "handoff_message": len(student),
        "messages": messages,
        "loss_mask": mask,
        "g_ver": GVER_VERSION,
    }
