"""The five-level reward of spec b.6, its binary ablations, dynamic sampling and the GRPO
group advantage.

| outcome | reward |
|---|---|
| func ✓ sec ✓ | +1.0 |
| func ✓ sec ✗ | +0.5 (``func_only``; the AutoBax adapter's code default 0.25 is an option) |
| func ✗ | −0.5 |
| patch does not apply / unusable | −0.75 |
| no patch, empty/invalid diff, tests only | −1.0 |
| aborted (infrastructure error or timeout) | 0, never mixed into means |

With no functional test (``func is None``) the security result alone gives +1 or −0.5 (b.6).

Layer: pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

RewardMode = Literal["five_level", "binary", "strict_binary"]

NO_SUBMISSION = {"no_patch", "empty_patch", "invalid_patch", "tests_only"}
UNUSABLE = {"patch_failed", "unusable"}


def five_level(status: str, func: bool | None, sec: bool | None, func_only: float = 0.5) -> float:
    """Reward of one graded sample (see the module table)."""
    if status == "aborted":
        return 0.0
    if status in NO_SUBMISSION:
        return -1.0
    if status in UNUSABLE:
        return -0.75
    if status != "ok":
        raise ValueError(f"unknown grade status {status!r}")
    if func is None:  # no functional test command: security alone decides
        return 1.0 if sec else -0.5
    if not func:
        return -0.5
    return 1.0 if sec else func_only


def ablate(reward: float, mode: RewardMode = "five_level") -> float:
    """``binary``: r > 0 → 1 else 0; ``strict_binary``: r = 1 → 1 else 0 (spec b.6)."""
    if mode == "five_level":
        return reward
    if mode == "binary":
        return 1.0 if reward > 0 else 0.0
    if mode == "strict_binary":
        return 1.0 if reward >= 1.0 else 0.0
    raise ValueError(f"unknown reward mode {mode!r}")


def _std(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def group_advantages(rewards: Sequence[float], eps: float = 1e-6) -> list[float]:
    """A_i = (r_i − mean_g r) / (std_g r + ε) over one prompt's group. Shapes: [G] → [G].

    The release's: the sample std (ddof 1, Bessel), ε = 1e-6. ``rl`` and ``hg`` train with this
    (``train.securevibe_rl`` replaces TRL's own, whose ε is 1e-4). A group of one gets 0."""
    if not rewards:
        return []
    n = len(rewards)
    mean = sum(rewards) / n
    if n == 1:
        return [0.0]
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
    return [(r - mean) / (std + eps) for r in rewards]


@dataclass(frozen=True)
class GroupDecision:
    keep: bool
    reason: str  # "kept" | "aborted" | "zero_variance" | "no_positive" | "empty"


def dynamic_filter(
    rewards: Sequence[float],
    aborted: Sequence[bool] | None = None,
    mode: RewardMode = "five_level",
    std_eps: float = 1e-6,
) -> GroupDecision:
    """Keep a group only if no sample aborted, the reward std exceeds ``std_eps`` and at least
    one reward is positive (+0.5 counts). Shapes: rewards [G], aborted [G].

    ``mode`` is the binary-metric variant: rewards are first mapped through ``ablate`` (so with
    ``binary`` a group of +0.5 and +1 has zero variance and is dropped)."""
    if not rewards:
        return GroupDecision(False, "empty")
    if aborted is not None and any(aborted):
        return GroupDecision(False, "aborted")
    mapped = [ablate(r, mode) for r in rewards]
    if _std(mapped) <= std_eps:
        return GroupDecision(False, "zero_variance")
    if not any(r > 0 for r in mapped):
        return GroupDecision(False, "no_positive")
    return GroupDecision(True, "kept")


def filter_groups(
    groups: Sequence[tuple[Sequence[float], Sequence[bool]]], mode: RewardMode = "five_level"
) -> tuple[list[int], dict[str, int]]:
    """Indices of kept groups and counts of each decision reason. Shapes: N groups of [G]."""
    kept, reasons = [], {}
    for i, (rewards, aborted) in enumerate(groups):
        d = dynamic_filter(rewards, aborted, mode)
        reasons[d.reason] = reasons.get(d.reason, 0) + 1
        if d.keep:
            kept.append(i)
    return kept, reasons
