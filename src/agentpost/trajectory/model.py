"""The canonical trajectory: the one model every importer writes and every analysis reads.

Format ``agentpost.trajectory/1``. One ``Turn`` is one model call: the assistant's text and
reasoning, the tool calls it made, the observations those calls produced, the usage of that call
and (when the server returned them) chosen-token and top-k logprobs.

Layer: model (no I/O). Pydantic v2 gives validation errors that name the field path, which the
importers turn into one-line errors naming the file and the JSON path.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentpost.trajectory.totals import totals_values

FORMAT: Final = "agentpost.trajectory/1"

UsageSource = Literal["reported", "running_total_diff", "run_total", "estimated"]
CallKind = Literal["shell", "edit", "keystrokes", "control", "other"]


def _no_value() -> None:
    return None


# BaseModel's per-instance slots, with the value ``model_construct`` gives them
_SLOT_VALUES: dict[str, Any] = {
    "__pydantic_fields_set__": set,
    "__pydantic_extra__": _no_value,
    "__pydantic_private__": _no_value,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)

    def __getattr__(self, item: str) -> Any:
        """A slot the importers' constructors left unset gets its ``model_construct`` value on
        first read (setting three slots on every model cost a quarter of its construction,
        and nothing reads them on the import path); anything else as pydantic answers it."""
        make = _SLOT_VALUES.get(item)
        if make is None:
            return super().__getattr__(item)  # type: ignore[misc]  # pydantic's, at run time
        value = make()
        object.__setattr__(self, item, value)
        return value


class Producer(_Model):
    """What wrote a file: component name, its version and the arguments it ran with."""

    name: str
    version: str
    args: dict[str, Any] = Field(default_factory=dict)


class ToolCall(_Model):
    """One tool call of a turn.

    ``command`` holds the shell command when the call runs one (a bash tool, a Terminus keystroke
    batch, a mini-swe-agent action); ``kind`` says how replay treats it: ``shell`` is executed,
    ``edit`` is a file-editing tool (create/str_replace/insert), ``keystrokes`` is sent to a tmux
    session, ``control`` is a scaffold pseudo-call (task-complete, submit, finish) that replay
    skips, ``other`` is anything else (kept, not replayed).
    """

    id: str | None = None
    name: str
    arguments: Any = None
    command: str | None = None
    kind: CallKind = "other"


class Observation(_Model):
    """What one tool call produced. Every flag is nullable and kept separate: a source that
    reports an exit code but no error flag leaves ``is_error`` null rather than guessing."""

    call_id: str | None = None
    text: str | None = None
    exit_code: int | None = None
    is_error: bool | None = None
    timed_out: bool | None = None


class Usage(_Model):
    """Tokens of one model call. ``input_tokens`` includes cached prompt tokens;
    ``output_tokens`` includes reasoning tokens. ``source`` says where the numbers came from."""

    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    source: UsageSource | None = None
    cost_usd: float | None = None


class Logprobs(_Model):
    """Per generated token, stored column-wise (compact, and ready for numpy).

    Shapes: ``tokens[T]``, ``chosen[T]`` (log-prob of the sampled token), ``top_logprobs[T][k]``
    and ``top_tokens[T][k]`` (the k most likely tokens at each position, as the server sent them),
    ``token_ids[T]`` and ``prompt_token_ids[P]`` when the source kept ids.
    """

    tokens: list[str] | None = None
    chosen: list[float | None] | None = None
    top_logprobs: list[list[float]] | None = None
    top_tokens: list[list[str]] | None = None
    # Token ids where the source kept them (ATIF ``completion_token_ids`` / ``prompt_token_ids``).
    token_ids: list[int] | None = None
    prompt_token_ids: list[int] | None = None


class Turn(_Model):
    """One model call and what its tool calls produced.

    ``step`` is the source's own step id where it has one (ATIF ``step_id``), which SCVD judges
    cite; ``index`` is the zero-based position of the turn in the trajectory.
    """

    index: int
    step: int | None = None
    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    observations: list[Observation] = Field(default_factory=list)
    usage: Usage | None = None
    logprobs: Logprobs | None = None
    started_at: str | None = None
    ended_at: str | None = None
    latency_s: float | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class Outcome(_Model):
    """Whether the run solved its task, and which evaluator said so."""

    resolved: bool | None = None
    reward: float | None = None
    tests: dict[str, str] = Field(default_factory=dict)
    evaluator: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Totals(_Model):
    """Counts over the whole trajectory. Token fields are sums over turns; when the source only
    has run-level totals they hold those and ``usage_source`` is ``run_total``. Null means the
    source has no such number (never 0).

    ``partial`` is true when an input or output sum covers only some of the model calls (some
    turns have the count, others not), so the sum is a lower bound, not the run's total.
    ``unknown`` names the token fields the source records only as a placeholder or a lower bound
    (SWE-agent replays write 0 tokens for calls never made; Claude Code 2.x logs the output
    count mid-stream): they are null here (per turn too), and the list says that the source
    had a figure that is not the count."""

    turns: int = 0
    tool_calls: int = 0
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    usage_source: UsageSource | None = None
    partial: bool = False
    unknown: list[str] = Field(default_factory=list)


class Source(_Model):
    """Where an imported trajectory came from."""

    format: str
    path: str | None = None
    record: str | None = None


class Trajectory(_Model):
    format: Literal["agentpost.trajectory/1"] = FORMAT
    id: str
    task_id: str | None = None
    agent: str | None = None
    agent_version: str | None = None
    model: str | None = None
    run_id: str | None = None
    instruction: str | None = None
    system_prompt: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    totals: Totals = Field(default_factory=Totals)
    source: Source | None = None
    producer: Producer
    metadata: dict[str, Any] = Field(default_factory=dict)
    raw: Any = None


def compute_totals(turns: list[Turn], run_total: Usage | None = None) -> Totals:
    """Totals over ``turns``; falls back to ``run_total`` for token fields the turns lack.

    Token sums skip turns without a number; a field is null only when no turn has it.
    """
    return Totals(**totals_values(turns, run_total))
