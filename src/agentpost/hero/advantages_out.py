"""The ``agentpost.hero-advantages/1`` document: HERO advantages per rollout for a groups file.

Shared by ``agentpost hero advantages`` and the demo's preview, so both print the same thing.

Input ``{"rollouts": [{"group", "resolved", "tokens", "turns": [{"entropy", "tokens"}], ...}]}``;
output rows ``{"group", "turn_advantages"[n_turns], "gate", "p", "resolved", "tokens"}`` plus the
input fields named in ``carried`` (by default the rollout's ``id``) when the input has them.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.hero.advantage import batch_from_json, hero_advantages
from agentpost.hero.config import HeroConfig

FORMAT = "agentpost.hero-advantages/1"


def advantages_document(
    data: dict[str, Any],
    cfg: HeroConfig,
    *,
    producer: dict[str, Any],
    note: str | None = None,
    carried: tuple[str, ...] = ("id",),
) -> dict[str, Any]:
    """Advantages for every rollout of ``data`` under ``cfg``. Raises ``ValueError`` (from
    ``batch_from_json``) for input of the wrong shape."""
    batch = batch_from_json(data)
    a = hero_advantages(batch, **cfg.kwargs())
    rollouts = []
    for i, (g, src) in enumerate(zip(batch.group, data["rollouts"], strict=True)):
        rollouts.append(
            {
                "group": batch.group_ids[g],
                **{k: src[k] for k in carried if k in src},
                "resolved": bool(batch.resolved[i]),
                "tokens": float(batch.tokens[i]),
                "turn_advantages": a.turn[batch.turn_rollout == i].tolist(),
                "gate": float(a.gate[g]),
                "p": float(a.p[g]),
            }
        )
    doc: dict[str, Any] = {"format": FORMAT, "producer": producer}
    if note is not None:
        doc["note"] = note
    doc["rollouts"] = rollouts
    doc["clipped_fraction"] = a.clipped_fraction(batch)
    return doc
