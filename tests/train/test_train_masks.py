"""Multi-turn samples: generated turns trainable, observations masked, spans and C_i right."""

from __future__ import annotations

from agentpost.train.masks import MultiTurnSample, sample_from_trajectory
from agentpost.trajectory.model import (
    Observation,
    Outcome,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
)


def encode(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_sample_masks_observations_and_counts_context():
    s = MultiTurnSample(prompt_ids=[1, 2, 3])
    s.add_turn([4, 5], [-0.1, -0.2], 0.7)
    s.add_observation([9, 9, 9])
    s.add_turn([6], None, 0.2)
    assert s.completion_ids == [4, 5, 9, 9, 9, 6]
    assert s.loss_mask == [1, 1, 0, 0, 0, 1]
    assert s.hero_turns() == [(0.7, 0, 2), (0.2, 5, 6)]
    assert s.tokens == (3 + 2) + (8 + 1)  # each call re-reads its whole context
    assert s.logprobs == [-0.1, -0.2, 0.0, 0.0, 0.0, 0.0]


def test_sample_from_trajectory():
    t = Trajectory(
        id="t",
        instruction="fix it",
        producer=Producer(name="x", version="0"),
        outcome=Outcome(resolved=True),
        turns=[
            Turn(
                index=0,
                text="look",
                tool_calls=[ToolCall(name="bash", command="ls")],
                observations=[Observation(text="a.py")],
            ),
            Turn(index=1, text="done"),
        ],
    )
    s = sample_from_trajectory(t, encode)
    assert s.resolved and s.prompt_ids == encode("fix it")
    assert [s.completion_ids[a:b] for a, b in s.turn_spans] == [encode("look\nls"), encode("done")]
    assert s.loss_mask.count(0) == len("a.py")
    assert s.tokens == (6 + 7) + (6 + 7 + 4 + 4)  # no usage recorded: contexts recounted
    t.turns[0].usage = Usage(input_tokens=900, output_tokens=40)
    t.turns[1].usage = Usage(input_tokens=1000, output_tokens=10)
    assert sample_from_trajectory(t, encode).tokens == 1950  # the recorded C_i (spec b.2)
