"""Multi-turn samples for RL/SFT: token ids with a loss mask and the turn spans HERO needs.

A completion is the concatenation of generated turns and the tool/observation tokens the
environment put between them. Only generated tokens carry loss (mask 1); observation tokens are
context (mask 0). Each generated turn records its span ``[start, end)`` in completion
coordinates, its mean top-k entropy h (spec b.6) and per-token sampling log-probs, so the HERO
advantage can be laid onto exactly the tokens of that turn.

``sample_from_trajectory`` builds the same structure offline from a canonical trajectory (turn
text as generated tokens, observation text masked) for trainers fed by logged rollouts.

Layer: pure (the tokenizer is passed in as an ``encode`` callable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentpost.hero.cost import trajectory_tokens
from agentpost.hero.entropy import turn_entropy
from agentpost.trajectory.model import Trajectory

Encode = Callable[[str], list[int]]


@dataclass
class MultiTurnSample:
    """One rollout. Shapes: ``completion_ids[T]``, ``loss_mask[T]``, ``logprobs[T]`` (0.0 on
    masked tokens), ``turn_spans[K]``, ``turn_entropy[K]``. ``tokens`` is C_i of spec b.2:
    Σ over model calls of (context length + generated length)."""

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    turn_entropy: list[float] = field(default_factory=list)
    tokens: int = 0
    resolved: bool = False

    @property
    def context_len(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    def add_turn(self, ids: list[int], logprobs: list[float] | None, entropy: float) -> None:
        """Append one generated turn (trainable)."""
        if logprobs is not None and len(logprobs) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(logprobs)} logprobs")
        self.tokens += self.context_len + len(ids)
        start = len(self.completion_ids)
        self.completion_ids += ids
        self.loss_mask += [1] * len(ids)
        self.logprobs += list(logprobs) if logprobs is not None else [0.0] * len(ids)
        self.turn_spans.append((start, start + len(ids)))
        self.turn_entropy.append(float(entropy))

    def add_observation(self, ids: list[int]) -> None:
        """Append environment tokens (masked out of the loss)."""
        self.completion_ids += ids
        self.loss_mask += [0] * len(ids)
        self.logprobs += [0.0] * len(ids)

    def hero_turns(self) -> list[tuple[float, int, int]]:
        """[(h, start, end)] as ``agentpost.hero.advantage.make_batch`` takes them."""
        return [(h, s, e) for h, (s, e) in zip(self.turn_entropy, self.turn_spans, strict=True)]


def sample_from_trajectory(
    traj: Trajectory, encode: Encode, *, default_entropy: float = 0.0, topk: int = 10
) -> MultiTurnSample:
    """Offline sample: prompt = system + instruction, each turn's text (reasoning + text + calls)
    generated, observations masked. Turns without logprobs get ``default_entropy``. ``tokens``
    is the trajectory's recorded C_i (spec b.2, the same C as TRS) when its usage is known, else
    the recount over the re-encoded contexts."""
    prompt = "\n".join(x for x in (traj.system_prompt, traj.instruction) if x)
    sample = MultiTurnSample(prompt_ids=encode(prompt), resolved=bool(traj.outcome.resolved))
    for turn in traj.turns:
        parts = [turn.reasoning, turn.text] + [
            c.command or str(c.arguments or "") for c in turn.tool_calls
        ]
        h = turn_entropy(turn, topk=topk)
        sample.add_turn(
            encode("\n".join(p for p in parts if p)), None, default_entropy if h is None else h
        )
        obs = "\n".join(o.text or "" for o in turn.observations)
        if obs:
            sample.add_observation(encode(obs))
    recorded = trajectory_tokens(traj)
    if recorded is not None:
        sample.tokens = recorded
    return sample
