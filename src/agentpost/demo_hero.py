"""Glue for the demo's HERO advantage preview: canonical trajectories → HERO groups → advantages.

One group per task (all of the demo's rollouts of that task, whatever policy produced them, play
the part of a policy's G rollouts). A turn's token span is its output tokens. Scripted policies
sample nothing, so their turns have no entropy: then the fine (low-entropy turn) term is switched
off (``fine=False``, spec b.11) and the document says so, instead of inventing entropies; the
placeholder entropy 0.0 written into the groups file is never read with ``fine=False``.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost import __version__
from agentpost.efficiency.advantage import batch_from_json, hero_advantages
from agentpost.efficiency.config import HeroConfig
from agentpost.trajectory.model import Trajectory

FORMAT = "agentpost.hero-advantages/1"


def groups_from(trajs: list[Trajectory], eff_rows: list[dict[str, Any]]) -> tuple[dict, bool]:
    """The ``hero advantages`` input for ``trajs`` (resolved known, tokens known) and whether every
    turn had an entropy. ``eff_rows`` are the efficiency document's trajectory rows (same ids)."""
    by_id = {r["id"]: r for r in eff_rows}
    rollouts, all_entropy = [], True
    for t in trajs:
        row = by_id.get(t.id)
        if row is None or t.outcome.resolved is None or row.get("tokens") is None:
            continue
        turns = []
        for turn, h in zip(t.turns, row.get("turn_entropy") or [None] * len(t.turns), strict=False):
            all_entropy &= h is not None
            out = turn.usage.output_tokens if turn.usage and turn.usage.output_tokens else 0
            turns.append({"entropy": h if h is not None else 0.0, "tokens": int(out)})
        rollouts.append(
            {
                "group": t.task_id or t.id,
                "id": t.id,
                "agent": t.model,
                "resolved": bool(t.outcome.resolved),
                "tokens": row["tokens"],
                "turns": turns,
            }
        )
    return {"rollouts": rollouts}, all_entropy and bool(rollouts)


def preview(groups: dict[str, Any], has_entropy: bool, cfg: HeroConfig | None = None) -> dict:
    """Per-turn advantages and gates, in the ``agentpost hero advantages`` output format."""
    cfg = cfg or HeroConfig()
    kwargs = {**cfg.kwargs(), **({} if has_entropy else {"fine": False})}
    batch = batch_from_json(groups)
    a = hero_advantages(batch, **kwargs)
    rollouts = []
    for i, (g, src) in enumerate(zip(batch.group, groups["rollouts"], strict=True)):
        rollouts.append(
            {
                "group": batch.group_ids[g],
                "id": src["id"],
                "agent": src["agent"],
                "resolved": src["resolved"],
                "tokens": src["tokens"],
                "turn_advantages": a.turn[batch.turn_rollout == i].tolist(),
                "gate": float(a.gate[g]),
                "p": float(a.p[g]),
            }
        )
    note = (
        None
        if has_entropy
        else (
            "no logprobs: the fine low-entropy turn term is off (fine=False); advantages hold the "
            "resolution and outcome-calibrated efficiency terms only"
        )
    )
    return {
        "format": FORMAT,
        "producer": {
            "name": "agentpost.hero.advantages",
            "version": __version__,
            "args": {"ablation": None, **kwargs, "groups": "one per task"},
        },
        "note": note,
        "rollouts": rollouts,
        "clipped_fraction": a.clipped_fraction(batch),
    }
