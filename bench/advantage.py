"""Time the HERO advantage against plain GRPO group-normalised advantages on the same batch.

Batch: 128 rollouts (8 groups of 16), 100 turns each, 32,768 response tokens each; every turn's
span covers its generated tokens and leaves the observation tokens in between masked. Both
methods produce the same output: a [N, L] per-token advantage array aligned with the loss mask.
Prints the median time of each and the ratio HERO / GRPO.

Usage: .venv/bin/python bench/advantage.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agentpost.hero.advantage import (
    RolloutBatch,
    grpo_advantages,
    hero_advantages,
    token_advantages,
)

N, G, TURNS, L = 128, 16, 100, 32_768


def build_batch(seed: int = 0) -> tuple[RolloutBatch, np.ndarray]:
    rng = np.random.default_rng(seed)
    per_turn = L // TURNS  # 327 positions per turn: generated tokens, then observation tokens
    gen = rng.integers(20, per_turn, (N, TURNS))
    start = np.arange(TURNS)[None, :] * per_turn + np.zeros((N, 1), dtype=np.int64)
    batch = RolloutBatch(
        group=np.repeat(np.arange(N // G), G),
        resolved=rng.random(N) < 0.7,
        tokens=rng.integers(1_000_000, 8_000_000, N).astype(np.float64),
        turn_rollout=np.repeat(np.arange(N), TURNS),
        turn_entropy=rng.gamma(2.0, 0.3, N * TURNS),
        turn_start=start.ravel(),
        turn_end=(start + gen).ravel(),
        response_len=L,
        group_ids=tuple(range(N // G)),
    )
    _, mask = token_advantages(batch, np.zeros(N * TURNS))
    return batch, mask


def grpo_tokens(batch: RolloutBatch, mask: np.ndarray) -> np.ndarray:
    return grpo_advantages(batch)[:, None] * mask


def hero_tokens(batch: RolloutBatch) -> np.ndarray:
    return token_advantages(batch, hero_advantages(batch).turn)[0]


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    batch, mask = build_batch()
    grpo_tokens(batch, mask), hero_tokens(batch)  # warm up
    t_grpo = median_time(lambda: grpo_tokens(batch, mask), args.repeats)
    t_hero = median_time(lambda: hero_tokens(batch), args.repeats)
    print(f"batch: {N} rollouts x {TURNS} turns x {L} response tokens ({int(mask.sum())} in loss)")
    print(f"grpo  (group-normalised, per token): {t_grpo * 1e3:8.2f} ms")
    print(f"hero  (full advantage, per token):   {t_hero * 1e3:8.2f} ms")
    print(f"ratio hero/grpo: {t_hero / t_grpo:.2f}x")


if __name__ == "__main__":
    main()
