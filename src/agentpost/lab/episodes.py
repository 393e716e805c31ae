"""Lab episodes: one rollout on a lab task, scripted or sampled, as SFT rows and trajectories.

An ``Episode`` is what the lab keeps of a rollout: the commands, the observations, whether the
hidden evaluator resolved it, and for a sampled policy the tokens and mean top-k entropy of each
turn. ``scripted_episode`` runs one behaviour of ``lab.transcript.plans`` in a real sandbox
(``LabEnv``); ``to_row`` makes the SFT row (every command is a target: stage-1 SFT imitates the
whole mixture); ``to_trajectory`` the canonical trajectory, so every agentpost analysis
(``efficiency``, ``diagnose``) reads lab runs like any other.

Layer: io.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentpost import __version__
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.plans import task_plans
from agentpost.lab.transcript import SUBMIT, messages
from agentpost.sandbox.base import Backend
from agentpost.sft.rows import SFTRow, make_row
from agentpost.tasks.model import Task
from agentpost.trajectory.model import (
    Observation,
    Outcome,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
    compute_totals,
)


@dataclass
class Episode:
    task_id: str
    agent: str
    instruction: str
    commands: list[str] = field(default_factory=list)
    observations: list[str | None] = field(default_factory=list)
    exits: list[int | None] = field(default_factory=list)
    resolved: bool = False
    turn_tokens: list[int] = field(default_factory=list)  # sampled policies: tokens per turn
    turn_entropy: list[float] = field(default_factory=list)  # mean top-k entropy per turn
    prompt_tokens: int = 0
    cost_tokens: int = 0  # HERO's C_i: sum over turns of (context + generated) tokens

    @property
    def tokens(self) -> int:
        """Length of the final transcript (prompt, turns; observations not counted)."""
        return self.prompt_tokens + sum(self.turn_tokens)


def scripted_episode(
    task: Task, behaviour: str, backend: Backend, memo: Memo | None = None, teacher: bool = False
) -> Episode:
    who = "teacher" if teacher else "scripted"
    ep = Episode(task.id, f"{who}/{behaviour}", task.instruction)
    with LabEnv(task, backend, memo) as env:
        for cmd in task_plans(task, teacher)[behaviour]:
            obs, done = env.step(cmd)
            ep.commands.append(cmd)
            ep.observations.append(None if done else obs)
            ep.exits.append(env.exits[-1])
            if done:
                break
        ep.resolved = env.resolved()
    return ep


def to_row(ep: Episode) -> SFTRow:
    steps = list(zip(ep.commands, ep.observations, strict=True))
    meta = {"task_id": ep.task_id, "source": ep.agent, "recipe": "lab-stage1",
            "resolved": ep.resolved}  # fmt: skip
    return make_row(messages(ep.instruction, steps), train_from=0, meta=meta)


def to_trajectory(ep: Episode, run_id: str, attempt: int = 0) -> Trajectory:
    turns = []
    for i, (cmd, obs, code) in enumerate(zip(ep.commands, ep.observations, ep.exits, strict=True)):
        kind = "control" if cmd == SUBMIT else "shell"
        call = ToolCall(id=f"c{i}", name="submit" if kind == "control" else "bash",
                        arguments={"command": cmd}, command=cmd if kind == "shell" else None,
                        kind=kind)  # fmt: skip
        observations = (
            [] if obs is None else [Observation(call_id=f"c{i}", text=obs, exit_code=code)]
        )
        usage = None
        if i < len(ep.turn_tokens):
            usage = Usage(output_tokens=ep.turn_tokens[i], source="reported")
        extra = {"entropy_mean": ep.turn_entropy[i]} if i < len(ep.turn_entropy) else {}
        turns.append(Turn(index=i, tool_calls=[call], observations=observations, usage=usage,
                          extra=extra))  # fmt: skip
    traj = Trajectory(
        id=f"{ep.task_id}::{ep.agent}::{attempt}", task_id=ep.task_id, agent=ep.agent,
        model=ep.agent, run_id=run_id, instruction=ep.instruction, turns=turns,
        outcome=Outcome(resolved=ep.resolved, reward=float(ep.resolved), evaluator="lab"),
        producer=Producer(name="agentpost.lab.episodes", version=__version__),
        metadata={"group": ep.task_id, "shell_state": "fresh", "lab_tokens": ep.tokens, "cost_tokens": ep.cost_tokens},
    )  # fmt: skip
    traj.totals = compute_totals(traj.turns)
    return traj
