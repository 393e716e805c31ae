"""`agentpost security annotate | attribute`: behaviour labels of trajectories (heuristic or a
judge panel) and the attribution statistics over them.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import (
    agent_option,
    read_trajectory_files,
    sandbox_backend,
    suite_dir,
    task_option,
)
from agentpost.commands.security._output import echo, num
from agentpost.documents.formats import producer
from agentpost.errors import InputError


def annotate_command(
    trajectories: Path = typer.Argument(
        ..., help="Canonical trajectories (JSONL); task_id names the task."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Label records (JSONL) for `security attribute`."
    ),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name (default: secure)."
    ),
    agents: list[str] | None = agent_option(),
    task_ids: list[str] | None = task_option(),
    judges: Path | None = typer.Option(
        None, "--judges", help="Judge panel config (YAML/JSON); default: the offline heuristic."
    ),
    finals: Path | None = typer.Option(
        None,
        "--finals",
        help="Directory of <trajectory id>/ final /app states (when metadata.final_files is absent).",
    ),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend for grading."),
) -> None:
    """Grade each trajectory's final files and label its planning, coding and testing.

    The final files come from metadata.final_files (or --finals); labels cite the steps.

    Writes one label record per trajectory to OUT and the full annotations beside it (OUT with suffix .annotations.jsonl).
    """
    from agentpost.security.pipeline import annotate_trajectories, attach_final_files
    from agentpost.security.records import write_records
    from agentpost.security.suite import load_suite

    panel = None
    if judges is not None:
        from agentpost.judges.config import build_panel, load_config

        panel = build_panel(load_config(judges), str(judges), judges.parent)
    tasks = {t.id: t for t in load_suite(suite_dir(suite) if suite else None)}
    trajs, _ = read_trajectory_files(
        [trajectories], "no trajectories to annotate", agents, task_ids
    )
    missing = attach_final_files(trajs, tasks, trajectories, finals)
    if missing:
        typer.echo(f"warning: {len(missing)} of {len(trajs)} trajectories have no final files "
                   f"(metadata.final_files, or --finals DIR/<trajectory id>/), so they are graded "
                   f"as no patch (-1): {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}",
                   err=True)  # fmt: skip
    labels, anns = annotate_trajectories(trajs, tasks, sandbox_backend(backend), panel)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_records(out, labels)
    write_records(out.with_suffix(".annotations.jsonl"), anns)
    unannotated = sum(bool(a.get("missing")) and not a.get("aborted") for a in anns)
    echo({"out": str(out), "labels": len(labels), "aborted": sum(bool(a.get("aborted")) for a in anns),
           "unannotated": unannotated})  # fmt: skip


def attribute_command(
    labels: Path = typer.Argument(
        ..., help="JSONL: {agent, task, func, sec, planning, coding, testing} per trajectory."
    ),
    agent_a: str | None = typer.Option(None, "--agent-a", help="The more secure agent."),
    agent_b: str | None = typer.Option(None, "--agent-b", help="The less secure agent."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Behaviour frequencies with Wilson CIs, paired-difference r and phi (SecureVibe spec b.3: which planning, coding and testing behaviours go with secure code)."""
    from agentpost.security.attribution import attribute
    from agentpost.security.records import read_labels, require_agents

    if (agent_a is None) != (agent_b is None):
        raise InputError(None, "--agent-a/--agent-b", "give both or neither")
    records = read_labels(labels)
    require_agents(records, labels, {"--agent-a": agent_a, "--agent-b": agent_b})
    doc = attribute(records, agent_a, agent_b)
    doc["producer"] = producer(attribute, labels=labels, agent_a=agent_a, agent_b=agent_b)
    if as_json:
        echo(doc)
        return
    for agent, f in doc["agents"].items():
        rates = {
            b: f["func_correct"][b]["target_aligned"]["rate"]
            for b in ("planning", "coding", "testing")
        }
        typer.echo(f"{agent}: n={f['n']} func-correct={f['n_func_correct']} target-aligned "
                   + " ".join(f"{b}={num(v)}" for b, v in rates.items()))  # fmt: skip
    for b, pd in (doc.get("paired_difference") or {}).items():
        why = f" ({pd['na_reason']})" if pd["r"] is None else ""
        typer.echo(f"r {b} ({doc['agent_a']} - {doc['agent_b']}, {pd['n_tasks']} tasks): "
                   f"{num(pd['r'])}{why}")  # fmt: skip
    ph = doc["phi"]
    typer.echo(f"phi vs sec ({ph['n']} functionally correct): generic-only testing="
               f"{num(ph['generic_only_testing']['phi'])} target-aligned testing="
               f"{num(ph['target_aligned_testing']['phi'])}")  # fmt: skip
