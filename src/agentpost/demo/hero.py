"""The demo's HERO advantage preview: canonical trajectories → HERO groups → advantages.

One group per task (all of the demo's rollouts of that task, whatever policy produced them, play
the part of a policy's G rollouts). A turn's token span is its output tokens. Scripted policies
sample nothing, so their turns have no entropy: then the fine (low-entropy turn) term is switched
off (ablation ``no_fine``, spec b.11) and both documents say so, instead of inventing entropies:
the groups file must hold a number per turn, so it holds a placeholder 0.0 and a ``note`` telling
``agentpost hero advantages`` users to pass ``--ablation no-fine``.

``stage_hero`` writes both documents (``hero_groups.json``, ``hero_advantages.json``); the
functions before it are pure.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentpost.demo.files import write_json
from agentpost.demo.model import Demo
from agentpost.documents.formats import fmt, producer
from agentpost.hero.advantages_out import advantages_document
from agentpost.hero.config import HeroConfig
from agentpost.trajectory.model import Trajectory


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
    has_entropy = all_entropy and bool(rollouts)
    doc: dict[str, Any] = {"rollouts": rollouts}
    if not has_entropy:
        doc["note"] = (
            "No logprobs: every turn entropy here is a placeholder 0.0. Run `agentpost hero "
            "advantages` on this file with --ablation no-fine (as hero_advantages.json was)."
        )
    return doc, has_entropy


def preview(groups: dict[str, Any], has_entropy: bool, cfg: HeroConfig | None = None) -> dict:
    """Per-turn advantages and gates, in the ``agentpost hero advantages`` output format."""
    cfg = cfg or HeroConfig()
    ablation = None if has_entropy else "no_fine"
    if not has_entropy:
        cfg = cfg.with_ablation(ablation)
    note = (
        None
        if has_entropy
        else (
            "no logprobs: the fine low-entropy turn term is off (ablation no_fine); advantages "
            "hold the resolution and outcome-calibrated efficiency terms only"
        )
    )
    from agentpost.hero.advantage import hero_advantages

    made_by = producer(hero_advantages, ablation=ablation, **cfg.kwargs(), groups="one per task")
    return advantages_document(groups, cfg, producer=made_by, note=note, carried=("id", "agent"))


def stage_hero(d: Demo, trajs_path: Path, eff: dict) -> None:
    """Groups and advantages of the imported trajectories, one group per task."""
    from agentpost.trajectory.io import read_jsonl

    groups, has_entropy = groups_from(read_jsonl(trajs_path), eff["trajectories"])
    made_by = producer(
        groups_from, trajectories=str(trajs_path.relative_to(d.out)), groups="one per task"
    )
    write_json(
        d.out / "hero_groups.json",
        {"format": fmt("agentpost.hero-groups"), "producer": made_by, **groups},
    )
    doc = preview(groups, has_entropy)
    write_json(d.out / "hero_advantages.json", doc)
    n_groups = len({r["group"] for r in doc["rollouts"]})
    d.progress(
        f"hero: advantages for {len(doc['rollouts'])} rollouts in {n_groups} groups"
        + ("" if has_entropy else " (no logprobs: fine term off)")
    )
