"""Types of candidate-state replay: a planned call, the record of its replay, the result.

Layer: pure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agentpost.replay.fidelity import CallFidelity
from agentpost.trajectory.model import Observation, ToolCall

FORMAT = "agentpost.replay/1"


@dataclass(frozen=True)
class PlannedCall:
    """One recorded call to consider, with the observation recorded for it (if any)."""

    step: int
    call_index: int
    call: ToolCall
    observation: Observation | None


@dataclass
class CallRecord:
    step: int
    call_index: int
    kind: str
    action: str  # replayed | skipped | failed
    exit_code: int | None = None
    timed_out: bool = False
    text: str | None = None  # output (keystrokes: what the call added to the screen)
    error: str | None = None
    screen: str | None = None  # keystrokes: the whole tmux screen after the call
    fidelity: CallFidelity | None = None
    recorded_exit: int | None = None  # the exit code the trajectory recorded for the call
    unfaithful: bool = False  # skipped although it may have changed state


@dataclass
class ReplayLog:
    calls: list[CallRecord] = field(default_factory=list)
    failed: CallRecord | None = None

    @property
    def replayed(self) -> int:
        return sum(1 for c in self.calls if c.action == "replayed")

    @property
    def unfaithful(self) -> list[CallRecord]:
        """Calls the replay could not run that may have changed the state."""
        return [c for c in self.calls if c.unfaithful]

    @property
    def last_observation(self) -> str | None:
        """What the teacher sees at an SCVD hand-off: the last replayed call's screen (keystroke
        scaffolds) or output."""
        for c in reversed(self.calls):
            if c.action == "replayed":
                return c.screen if c.screen is not None else c.text
        return None


@dataclass(frozen=True)
class ReplayResult:
    status: str  # ok | unfaithful | replay_failed | evaluator_invalid | timeout | infra_error
    reward: float | None
    resolved: bool | None
    calls_replayed: int
    fidelity: dict[str, Any] | None
    calls_skipped: int = 0
    message: str = ""
    failed_call: dict[str, Any] | None = None
    evaluator_output: str = ""
    duration_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["duration_s"] = round(self.duration_s, 3)
        return {"format": FORMAT, **out}
