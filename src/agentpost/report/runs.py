"""Report section: the rollouts of ``agentpost run`` (``run.json``, format ``agentpost.run/1``):
per agent the resolution rate, per (task, agent) group the attempts finished and resolved.

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.report.html import Section, details, not_run, note, producer_line, table
from agentpost.report.palette import short
from agentpost.report.svg import bar_chart

TITLE = "Rollouts and outcomes"


def _one(src: str, data: dict[str, Any]) -> str:
    agents = data.get("agents") or {}
    parts = []
    if agents:
        names = list(agents)
        parts.append(
            bar_chart(
                [short(n) for n in names],
                {"resolution rate": [agents[n].get("resolution_rate") for n in names]},
                title=f"Resolution rate per agent ({src})",
                ylabel="resolved share",
            )
        )
        parts.append(
            table(
                ["agent", "finished", "resolved", "resolution rate"],
                [
                    [n, a.get("finished"), a.get("resolved"), a.get("resolution_rate")]
                    for n, a in agents.items()
                ],
            )
        )
    groups = data.get("groups") or []
    if groups:
        agent_names = list(dict.fromkeys(str(g.get("agent")) for g in groups))
        cells: dict[str, dict[str, str]] = {}
        for g in groups:
            cells.setdefault(str(g.get("task")), {})[str(g.get("agent"))] = (
                f"{g.get('resolved')}/{g.get('finished')}"
            )
        rows = [[t, *[c.get(a) for a in agent_names]] for t, c in cells.items()]
        parts.append(
            details(
                f"Resolved / finished per task and agent ({len(rows)} tasks)",
                table(["task", *[short(a) for a in agent_names]], rows),
            )
        )
    errors = (data.get("this_invocation") or {}).get("errors") or []
    if errors:
        parts.append(
            note(
                f"{len(errors)} rollouts failed on infrastructure and will be retried "
                f"by a rerun: " + "; ".join(e.get("rollout", "?") for e in errors[:5])
            )
        )
    return "".join(parts)


def render(runs: list[tuple[str, dict[str, Any]]]) -> Section:
    if not runs:
        return not_run("runs", TITLE, "no run.json from `agentpost run` in the run directory")
    body = "".join(f"<h3>{escape(src)}</h3>{_one(src, data)}" for src, data in runs)
    prov = [producer_line(src, d.get("producer"), d.get("format")) for src, d in runs]
    return Section("runs", TITLE, body, provenance=prov)


def per_run_part(eff_runs: list[dict[str, Any]]) -> str:
    """When one model ran in several runs (checkpoints, stages), the per-model rows pool them:
    say so and show each (model, run id) on its own row. Empty otherwise."""
    by_model: dict[str, set] = {}
    for r in eff_runs:
        by_model.setdefault(str(r.get("model")), set()).add(r.get("run_id"))
    multi = sorted(m for m, ids in by_model.items() if len(ids) > 1)
    if not multi:
        return ""
    head = note(
        f"{', '.join(multi)} ran in more than one run; the per-model rows above pool its runs, "
        "so here each run has its own row (the verdict and the viewer keep them apart too)."
    )
    rows = [[r.get("model"), r.get("run_id"), r.get("trajectories"), r.get("resolution_rate"),
             None if r.get("mean_tokens_m") is None else r["mean_tokens_m"] * 1e6, r.get("trs")]
            for r in eff_runs if str(r.get("model")) in multi]  # fmt: skip
    return head + table(["model", "run id", "trajectories", "resolution rate", "mean tokens",
                         "TRS"], rows, left=2)  # fmt: skip
