"""Which recorded output belongs to which tool call, and step ids: the one reading of a turn's
calls that the SCVD judge view, the heuristic annotator, replay and the distillation builder share.

Layer: pure.
"""

from __future__ import annotations

from agentpost.trajectory.model import Observation, Trajectory, Turn


def step_ids(traj: Trajectory) -> dict[int, Turn]:
    """Step id → turn (``Turn.step`` when present, else the turn's index)."""
    return {(t.step if t.step is not None else t.index): t for t in traj.turns}


def call_outputs(turn: Turn) -> list[Observation | None]:
    """The output of each tool call of ``turn`` (one entry per call, None where it has none).

    The one rule for multi-call steps, used by the judge view, the heuristic annotator, replay
    and the distillation builder alike:

    1. an observation whose ``call_id`` names a call belongs to that call;
    2. otherwise, when the step has exactly one untied observation per untied call, they pair
       up in order (the log gives each call its own output);
    3. otherwise, when the scaffold records one screen for a step of several calls (Terminus-2:
       one terminal screen after all of a reply's keystrokes), **the screen follows the step's
       last call**: it is what the terminal showed after that call, so earlier calls of the step
       have no output of their own. A check that is the last call of a [write, check] step is
       therefore judged on the screen; the write call before it is not.

    Observations the rules leave untied stay in ``turn.observations`` (the judge view shows them
    as not tied to a call)."""
    calls = turn.tool_calls
    out: list[Observation | None] = [None] * len(calls)
    ids = {c.id: j for j, c in enumerate(calls) if c.id is not None}
    untied = []
    for obs in turn.observations:
        j = ids.get(obs.call_id) if obs.call_id is not None else None
        if j is not None and out[j] is None:
            out[j] = obs
        else:
            untied.append(obs)
    free = [j for j in range(len(calls)) if out[j] is None]
    if untied and len(untied) == len(free):
        for j, obs in zip(free, untied, strict=True):
            out[j] = obs
    elif len(untied) == 1 and free and free[-1] == len(calls) - 1:
        out[-1] = untied[0]
    return out
