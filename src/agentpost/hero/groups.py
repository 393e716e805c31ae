"""HERO advantage input from any canonical trajectories: rollouts grouped by task.

``hero_groups(trajs, rows)`` builds the ``{"rollouts": [...]}`` document that
``hero.advantages_out.advantages_document`` (and ``agentpost hero advantages``) reads, from
imported or recorded trajectories and their efficiency rows (``hero.analyze``: tokens and
per-turn entropy).

A HERO group is the G rollouts of one policy on one prompt (spec b.3), so by default a group is
one (agent, task): the agent is the model plus its run id, so two checkpoints never share a
group. ``pool_agents=True`` groups by task alone (the demo does this so its four reference
policies stand in for one policy's G rollouts).

What cannot be grouped is refused with its reason, never guessed: a trajectory without a task id
(nothing says which rollouts share a prompt), without a known outcome (the resolution term needs
y_i), or without token counts (the efficiency term needs C_i); a group with one rollout (no
group-relative signal). ``GroupingError`` is raised when nothing is left. Turn entropy comes from
the logprobs where every turn has them; otherwise the fine (low-entropy turn) term cannot be
computed, every entropy is a placeholder 0.0 and the document says to use ``--ablation no-fine``.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.trajectory.model import Trajectory
from agentpost.trajectory.select import agent_label

FORMAT = "agentpost.hero-groups/1"


class GroupingError(ValueError):
    """No HERO group can be formed; the message says why for every trajectory left out."""


def _skip_reason(t: Trajectory, row: dict[str, Any] | None) -> str | None:
    if not t.task_id:
        return "no task id"
    if t.outcome.resolved is None:
        return "outcome unknown"
    if row is None or row.get("tokens") is None:
        return "token counts unknown"
    return None


def _rollout(t: Trajectory, row: dict[str, Any], group: str, agent: str) -> dict[str, Any]:
    ent = row.get("turn_entropy") or [None] * len(t.turns)
    turns = []
    for turn, h in zip(t.turns, ent, strict=False):
        out = turn.usage.output_tokens if turn.usage and turn.usage.output_tokens else 0
        turns.append({"entropy": h, "tokens": int(out)})
    return {"group": group, "id": t.id, "agent": agent, "task_id": t.task_id,
            "resolved": bool(t.outcome.resolved), "tokens": row["tokens"], "turns": turns}  # fmt: skip


def agent_of(t: Trajectory, multi_run: bool) -> str:
    """The agent label (``trajectory.select.agent_label``): one name in every output."""
    return agent_label(t.model, t.agent, t.run_id, multi_run)


def hero_groups(
    trajs: list[Trajectory], rows: list[dict[str, Any]], *, pool_agents: bool = False
) -> dict[str, Any]:
    """The groups document, with ``skipped`` {reason: count} and ``skipped_examples``."""
    by_id = {r["id"]: r for r in rows}
    runs: dict[Any, set] = {}
    for t in trajs:
        runs.setdefault(t.model or t.agent, set()).add(t.run_id)
    skipped: dict[str, list[str]] = {}
    kept = []
    for t in trajs:
        why = _skip_reason(t, by_id.get(t.id))
        if why:
            skipped.setdefault(why, []).append(t.id)
            continue
        agent = agent_of(t, len(runs[t.model or t.agent]) > 1)
        group = str(t.task_id) if pool_agents else f"{t.task_id} | {agent}"
        kept.append(_rollout(t, by_id[t.id], group, agent))
    size: dict[str, int] = {}
    for r in kept:
        size[r["group"]] = size.get(r["group"], 0) + 1
    for r in kept:
        if size[r["group"]] < 2:
            skipped.setdefault("only rollout of its group", []).append(r["id"])
    rollouts = [r for r in kept if size[r["group"]] >= 2]
    if not rollouts:
        reasons = "; ".join(f"{k}: {len(v)} (e.g. {v[0]})" for k, v in skipped.items())
        raise GroupingError(
            f"no HERO group of 2 or more rollouts of one {'task' if pool_agents else 'agent and task'}"
            f" can be formed from {len(trajs)} trajectories ({reasons or 'none given'})"
        )
    has_entropy = all(turn["entropy"] is not None for r in rollouts for turn in r["turns"])
    if not has_entropy:
        for r in rollouts:
            for turn in r["turns"]:
                turn["entropy"] = 0.0 if turn["entropy"] is None else turn["entropy"]
    doc: dict[str, Any] = {
        "format": FORMAT,
        "grouped_by": "task" if pool_agents else "agent and task",
        "groups": len({r["group"] for r in rollouts}),
        "has_entropy": has_entropy,
        "skipped": {k: len(v) for k, v in skipped.items()},
        "skipped_examples": {k: v[:3] for k, v in skipped.items()},
        "rollouts": rollouts,
    }
    if not has_entropy:
        doc["note"] = (
            "Not every turn has logprobs, so the turn entropy is a placeholder 0.0: run "
            "`agentpost hero advantages` on this file with --ablation no-fine."
        )
    return doc
