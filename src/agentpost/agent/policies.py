"""Reference policies: scripted agents (no model) with known behaviour, for demos and tests.

Each policy is labelled ``scripted/<name>`` and drives the real agent loop, real sandboxes and
the task's real evaluator, using the task's own files: ``[agentpost].explore`` (read-only
commands), ``[agentpost].check`` (a self-check that fails on the wrong solution),
``solution/solve.sh`` (oracle) and ``wrong/solve.sh`` (a plausible wrong solution).

- ``careful``: explore, write the oracle solution, run the check, repair if it fails, submit.
- ``hasty``: write the wrong solution and submit without checking (fails where it is wrong).
- ``wasteful``: explore, then re-read the same files for ``WASTE_TURNS`` more turns, using only
  the explore commands HERO's classifier counts as read-only (``hero.behaviours``; ``ls
  -la`` when none is), so the run is long enough for its over-exploration detector (15
  consecutive read-only turns) on every task; then solve correctly and submit.
- ``wrong-then-repaired``: explore, write the wrong solution first, run the check (which
  fails), apply the oracle on top of the wrong candidate's state, re-run the check, submit. The
  bundled oracles repair whatever a wrong solution leaves behind (see the terminal suite's
  README), so no rollback is needed.

Token usage is ``estimated`` with a real tokenizer over the rendered context (see
``agent.scripted``); there are no logprobs, since nothing was sampled.

Layer: io.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from functools import partial
from pathlib import Path
from typing import Any

from agentpost.agent.formats import get_format
from agentpost.agent.run import Agent
from agentpost.agent.scripted import ScriptedModel
from agentpost.components import resolve
from agentpost.errors import InputError
from agentpost.hero.behaviours import command_is_read_only
from agentpost.tasks.fields import read_task_text
from agentpost.tasks.model import Task

WASTE_TURNS = 16  # read-only turns after exploring: past HERO's over-exploration run of 15
SUBMIT = object()  # a plan step that submits
_EXIT = re.compile(r"^exit_code: (-?\d+|None)", re.M)

# A plan yields (thought, command or SUBMIT) and receives the exit code of that command.
Plan = Generator[tuple[str, Any], int | None, None]


def write_and_run(script: Path, label: str) -> str:
    """A shell command that writes every file of ``script``'s directory under /tmp/agent/<label>
    with heredocs, then runs the script from the work directory."""
    parts = [f"mkdir -p /tmp/agent/{label}"]
    for f in sorted(script.parent.iterdir()):
        if f.is_file() or f.is_symlink():  # a task's file: read below its dir, never via a link
            body = read_task_text(f, script.parent)
            if not body.endswith("\n"):
                body += "\n"
            parts.append(
                f"cat > /tmp/agent/{label}/{f.name} <<'AGENTPOST_EOF'\n{body}AGENTPOST_EOF"
            )
    parts.append(f"bash /tmp/agent/{label}/{script.name}")
    return "\n".join(parts)


def _need(task: Task, what: str) -> Any:
    value = {
        "solution": task.solution_script,
        "wrong": task.wrong_solutions[0] if task.wrong_solutions else None,
        "explore": task.explore or None,
    }[what]
    if value is None:
        raise InputError(task.path, what, f"task {task.id} has no {what} for the scripted policies")
    return value


LOOK = ["ls -la"]  # a task with no [agentpost].explore (as its authors wrote it): a first look


def _explore(task: Task) -> Plan:
    for i, cmd in enumerate(task.explore or LOOK):
        yield ("Let me look at the work directory first." if i == 0 else "Let me read more."), cmd


def _verify_and_repair(task: Task) -> Plan:
    """Run the check; on failure apply the oracle on top of the current state, re-check."""
    if task.check is None:
        return
    code = yield "Let me check the result before submitting.", task.check
    if code != 0:
        yield (
            "The check failed; fixing the solution.",
            write_and_run(_need(task, "solution"), "fix"),
        )
        yield "Re-running the check.", task.check


def careful(task: Task) -> Plan:
    yield from _explore(task)
    yield (
        "I know what to do; writing the solution.",
        write_and_run(_need(task, "solution"), "solution"),
    )
    yield from _verify_and_repair(task)
    yield "Done.", SUBMIT


def hasty(task: Task) -> Plan:
    yield "This is easy; writing the solution.", write_and_run(_need(task, "wrong"), "solution")
    yield "Done.", SUBMIT


def wasteful(task: Task) -> Plan:
    yield from _explore(task)
    rereads = [c for c in task.explore or LOOK if command_is_read_only(c)] or LOOK
    for i in range(WASTE_TURNS):
        yield "Let me double-check the files once more.", rereads[i % len(rereads)]
    yield "Writing the solution.", write_and_run(_need(task, "solution"), "solution")
    yield from _verify_and_repair(task)
    yield "Done.", SUBMIT


def wrong_then_repaired(task: Task) -> Plan:
    yield from _explore(task)
    yield "Writing a first solution.", write_and_run(_need(task, "wrong"), "candidate")
    yield from _verify_and_repair(task)
    yield "Done.", SUBMIT


POLICIES: dict[str, Callable[[Task], Plan]] = {
    "careful": careful,
    "hasty": hasty,
    "wasteful": wasteful,
    "wrong-then-repaired": wrong_then_repaired,
}
EXPECTED_RESOLVED = {"careful": True, "hasty": False, "wasteful": True, "wrong-then-repaired": True}


def _last_exit_code(messages: list[dict[str, Any]]) -> int | None:
    m = _EXIT.search(str(messages[-1].get("content") or "")) if messages else None
    return int(m.group(1)) if m and m.group(1) != "None" else None


def policy_plan(name: str) -> Callable[[Task], Plan]:
    """The plan of policy ``name``: a ``POLICIES`` name, or a ``package.module:function`` path
    to a plan of your own (the one component loader, ``agentpost.components``)."""
    table = {n: f"{__name__}:{fn.__name__}" for n, fn in POLICIES.items()}
    try:
        plan = resolve(table, name, "policy")
    except ValueError as e:
        raise InputError(None, "--policy", str(e)) from None
    if not callable(plan):
        raise InputError(None, "--policy", f"policy {name!r} names no plan function")
    return plan


def policy_model(name: str, task: Task, mode: str = "tools") -> ScriptedModel:
    """A fresh scripted model for one rollout of policy ``name`` on ``task``."""
    plan = policy_plan(name)(task)
    fmt = get_format(mode)  # the reply in the loop's action format (any format with a reply())
    started = False

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        nonlocal started
        try:
            thought, cmd = plan.send(_last_exit_code(messages)) if started else next(plan)
        except StopIteration:
            thought, cmd = "Done.", SUBMIT
        started = True
        return fmt.reply(thought, None if cmd is SUBMIT else cmd)

    return ScriptedModel(reply, name=f"scripted/{name}")


def policy_agents(names: list[str] | None, mode: str = "tools") -> list[Agent]:
    """One ``Agent`` per policy name (None or ``["all"]``: every policy, in ``POLICIES`` order),
    labelled ``scripted/<name>``, replying in action format ``mode``. What ``agentpost run
    --policy`` and the demo's stages run."""
    chosen = list(POLICIES) if names in (None, ["all"]) else list(names)
    for n in chosen:
        policy_plan(n)  # an unknown name fails before any rollout starts
    return [Agent(f"scripted/{n}", partial(policy_model, n, mode=mode)) for n in chosen]
