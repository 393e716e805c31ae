"""Teachers for SCVD collection and the FTD baseline: any OpenAI-compatible model, or a scripted
teacher for offline runs (labelled ``scripted-teacher/...`` in every record it produces).

The scripted teacher uses the task's own files (as the reference policies in
``agent.policies`` do): at an SCVD hand-off (``verify-repair``) it runs the task's
``[agentpost].check``; when the check fails it applies ``solution/solve.sh`` on top of the
current state and re-runs the check; then it submits. From scratch (``solve``, FTD) it writes
the oracle solution, checks it and submits. It samples nothing, so it is a pipeline fixture,
not a teacher to learn from: it proves the data path, never the method.

Layer: io.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from agentpost.agent.llm import Model
from agentpost.agent.policies import write_and_run
from agentpost.agent.scripted import ScriptedModel
from agentpost.errors import InputError
from agentpost.tasks.model import Task

SCRIPTED_PREFIX = "scripted-teacher/"
_EXIT = re.compile(r"^exit_code: (-?\d+|None)", re.M)
_SUBMIT = object()
Plan = Generator[tuple[str, Any], int | None, None]


def _check(task: Task) -> str:
    if task.check is None:
        raise InputError(task.path, "[agentpost].check", f"task {task.id} has no check command")
    return task.check


def verify_repair(task: Task) -> Plan:
    code = yield "Checking the existing candidate against the requirements.", _check(task)
    if code != 0:
        yield (
            "The check exposes a defect; repairing the artifact.",
            write_and_run(task.solution_script, "teacher-fix"),
        )
        yield "Re-running the failed check on the repaired state.", _check(task)
    yield "Every requirement has fresh evidence; done.", _SUBMIT


def solve(task: Task) -> Plan:
    yield "Writing the solution.", write_and_run(task.solution_script, "teacher")
    yield "Checking it.", _check(task)
    yield "Done.", _SUBMIT


PLANS: dict[str, Callable[[Task], Plan]] = {"verify-repair": verify_repair, "solve": solve}


def _last_exit(messages: list[dict[str, Any]]) -> int | None:
    m = _EXIT.search(str(messages[-1].get("content") or "")) if messages else None
    return int(m.group(1)) if m and m.group(1) != "None" else None


def scripted_teacher(task: Task, plan: str) -> ScriptedModel:
    """A fresh scripted teacher for one continuation (``verify-repair``) or one FTD rollout
    (``solve``). Tool-call ids are ``teacher_<n>_<j>`` so they never collide with the
    student's ids in one conversation."""
    if task.solution_script is None:
        raise InputError(task.path, "solution", f"task {task.id} has no solution/solve.sh")
    steps, n = PLANS[plan](task), 0

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        nonlocal n
        try:
            thought, cmd = next(steps) if n == 0 else steps.send(_last_exit(messages))
        except StopIteration:
            thought, cmd = "Done.", _SUBMIT
        cid, n = f"teacher_{n}_0", n + 1
        if cmd is _SUBMIT:
            return {
                "content": thought,
                "tool_calls": [{"id": cid, "name": "submit", "arguments": {}}],
            }
        call = {"id": cid, "name": "bash", "arguments": {"command": cmd}}
        return {"content": thought, "tool_calls": [call]}

    return ScriptedModel(reply, name=f"{SCRIPTED_PREFIX}{plan}")


@dataclass(frozen=True)
class Teacher:
    """A label (goes into every row), a per-task model factory, a fingerprint (part of every
    cache key) and the transport (its ledger holds the usage and the budget), if any."""

    label: str
    make: Callable[[Task], Model]
    fingerprint: dict[str, Any]
    transport: Any = None


def make_teacher(spec: str, plan: str, **transport_kw: Any) -> Teacher:
    """``--teacher``: ``scripted`` (offline, labelled) or a model name on an OpenAI-compatible
    endpoint (``transport_kw``: ``TransportConfig`` fields such as ``base_url``,
    ``temperature``, ``max_tokens``, ``max_total_tokens``)."""
    if spec == "scripted":
        label = f"{SCRIPTED_PREFIX}{plan}"
        return Teacher(label, lambda t: scripted_teacher(t, plan), {"label": label, "plan": plan})
    from agentpost.agent.transport import OpenAITransport, TransportConfig

    transport = OpenAITransport(TransportConfig(model=spec, **transport_kw))
    keep = ("base_url", "temperature", "top_p", "max_tokens", "extra_body")
    fp = {"model": spec, **{k: transport_kw.get(k) for k in keep}}
    return Teacher(spec, lambda t: transport, fp, transport)
