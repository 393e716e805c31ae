"""Builders of small canonical trajectories for the efficiency tests (real models, no mocks)."""

from __future__ import annotations

import math

from agentpost.trajectory.model import (
    Logprobs,
    Observation,
    Outcome,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
)


def shell(cmd: str, exit_code: int | None = 0, text: str = "", is_error: bool | None = None):
    return ToolCall(name="bash", command=cmd, kind="shell"), Observation(
        text=text, exit_code=exit_code, is_error=is_error
    )


def peaked(p_top: float, k: int = 10) -> list[float]:
    """Top-k log-probs with p_top on the first token and the rest spread evenly."""
    rest = (1 - p_top) / (k - 1)
    return [math.log(p_top)] + [math.log(rest)] * (k - 1)


def turn(i: int, calls, *, inp=1000, cached=800, out=50, p_top: float | None = None, ntok=4):
    lp = None
    if p_top is not None:
        lp = Logprobs(tokens=["x"] * ntok, top_logprobs=[peaked(p_top)] * ntok)
    return Turn(
        index=i,
        tool_calls=[c for c, _ in calls],
        observations=[o for _, o in calls],
        usage=Usage(input_tokens=inp, cached_tokens=cached, output_tokens=out),
        logprobs=lp,
    )


def traj(tid: str, task: str, model: str, resolved: bool | None, turns: list[Turn]) -> Trajectory:
    return Trajectory(
        id=tid,
        task_id=task,
        model=model,
        turns=turns,
        outcome=Outcome(resolved=resolved),
        producer=Producer(name="test", version="0"),
    )
