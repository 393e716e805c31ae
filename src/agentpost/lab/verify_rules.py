"""The lab's SCVD annotator: written rules instead of an LLM panel, and candidate-state replay.

In the lab's transcript every turn is one shell command on one output file, so what the SCVD
judges read from a trajectory (spec b.2) is observable directly; these rules stand in for the
panel (no LLM can run here) and are the labelling rules of the lab's numbers:

- **t_c** (first complete candidate): the first command after which the task's output file
  exists, found by replaying the commands one by one in a fresh sandbox (spec b.5) and testing
  for the file after each; ``I_c`` = such a turn exists before ``submit``.
- **I_v** (the agent checked its candidate): a later command, before ``submit``, that reads the
  output file without writing it (the task's check, ``cat``, ``head``, ``wc``, ``grep``, ...).
- **z** (what its check concluded): ``error`` when that first check exits non-zero or the agent
  writes the output file again afterwards (it acted on a defect it saw); else ``no-error``.
- **y_c**: the task's hidden evaluator on the replayed state right after t_c (only when
  I_c = I_v = 1, as the metrics' records require); **y_f**: the rollout's own grade.

``replay_to_candidate`` returns that replayed sandbox still open, so SCVD collection hands the
same state to the teacher (``lab.scvd_lab``).

Layer: io.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from agentpost.errors import InfraError
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.episodes import Episode
from agentpost.lab.transcript import SUBMIT
from agentpost.sandbox.base import Backend
from agentpost.tasks.model import Task

_END = r"(?![\w.-])"  # a name ends where no name character follows: not count.txt.bak


def writes(command: str, out: str) -> bool:
    """Does ``command`` (re)write ``out`` (a redirection into it, ``tee``, ``cp``/``mv`` onto it)?"""
    o = re.escape(out) + _END
    return bool(re.search(rf">>?\s*(/app/)?{o}|\btee\s+(-a\s+)?(/app/)?{o}|"
                          rf"\b(cp|mv)\b.*\s(/app/)?{o}\s*$", command))  # fmt: skip


def reads(command: str, out: str) -> bool:
    """Does ``command`` look at ``out`` without writing it?"""
    name = rf"(^|[\s'\"<(/]){re.escape(out)}{_END}"
    return not writes(command, out) and re.search(name, command) is not None


@dataclass(frozen=True)
class Annotation:
    t_c: int | None
    I_v: bool
    z: str | None
    check_turn: int | None


def annotate_commands(commands: list[str], exits: list[int | None], out: str, t_c: int | None):
    """I_v, z and the check's turn from the commands after ``t_c`` (pure; ``t_c`` from replay)."""
    if t_c is None:
        return Annotation(None, False, None, None)
    after = range(t_c + 1, len(commands))
    for i in after:
        if commands[i] == SUBMIT:
            break
        if reads(commands[i], out):
            rewrote = any(writes(commands[j], out) for j in range(i + 1, len(commands)))
            z = "error" if (exits[i] not in (0, None) or rewrote) else "no-error"
            return Annotation(t_c, True, z, i)
    return Annotation(t_c, False, None, None)


def replay_to_candidate(
    task: Task, commands: list[str], out: str, backend: Backend, exits: list | None = None,
    memo: Memo | None = None,
):  # fmt: skip
    """(t_c, env at the state right after t_c, observations replayed) or (None, None, obs).
    The caller closes the env. ``exits`` are the rollout's own exit codes: a replayed command
    that ends otherwise (a timeout under load, a kill) means the replay is not the state the
    policy reached, an ``InfraError``, never a record of it. With ``memo`` an all-scripted
    prefix is answered by the memo (``lab.env``), the same answers a fresh sandbox gives."""
    env = LabEnv(task, backend, memo)
    observations: list[str] = []
    try:
        for i, cmd in enumerate(commands):
            if cmd == SUBMIT:
                break
            obs, _ = env.step(cmd)
            observations.append(obs)
            if exits is not None and i < len(exits) and env.exits[-1] != exits[i]:
                raise InfraError(f"{task.id}: the replay left the rollout at turn {i}: exit "
                                 f"{env.exits[-1]}, the rollout's {exits[i]}")  # fmt: skip
            # the probe is ours, not the policy's: one that cannot answer is a fault (``look``
            # raises); a non-zero exit (e.g. the policy removed its work dir) is no candidate
            code, _ = env.look(f"test -f {shlex.quote(out)}")
            if code == 0:
                return i, env, observations
    except BaseException:
        env.close()
        raise
    env.close()
    return None, None, observations


def record(
    task: Task, ep: Episode, out: str, backend: Backend, *, model: str, run: str,
    memo: Memo | None = None,
) -> dict:  # fmt: skip
    """The SCVD metric record of one lab episode (``scvd.records.from_dicts`` shape)."""
    t_c, env, _ = replay_to_candidate(task, ep.commands, out, backend, ep.exits, memo)
    y_c = None
    try:
        ann = annotate_commands(ep.commands, ep.exits, out, t_c)
        if env is not None and ann.I_v:
            y_c = int(env.resolved())
    finally:
        if env is not None:
            env.close()
    return {"model": model, "run": run, "task": task.id, "I_c": t_c is not None,
            "I_v": ann.I_v, "z": ann.z, "y_c": y_c,
            "y_f": int(ep.resolved), "t_c": t_c, "turns": len(ep.commands)}  # fmt: skip
