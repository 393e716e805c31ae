"""`agentpost security build-suite | route`: the Security Suite SFT data (spec b.4) and the
density routing between rl and hg (spec b.8), over datasets chosen by suite and CWE-split side.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend, suite_dirs
from agentpost.commands.security._output import echo, num
from agentpost.documents.formats import producer
from agentpost.errors import InputError

SIDES = ("all", "train", "heldout", "both")
SIDE_OPTION = typer.Option(
    "all",
    "--side",
    help="Tasks of the suite's seen/unseen CWE split (split.json): all, train "
    "(seen CWEs), heldout (unseen) or both (one dataset per side).",
)


def choose_datasets(suites: list[Path] | None, tasks: list[str] | None, side: str) -> dict:
    """dataset name → tasks: one dataset per suite directory (or per split side with ``both``),
    restricted to ``tasks`` ids and to the ``side`` of the suite's CWE split."""
    from agentpost.security.suite import bundled_suite_dir, load_split, load_suite

    if side not in SIDES:
        raise InputError(None, "--side", f"must be one of {', '.join(SIDES)}, got {side!r}")
    datasets = {}
    for d in suite_dirs(suites) or [bundled_suite_dir()]:
        name = Path(d).name
        if side == "all":
            datasets[name] = load_suite(d)
            continue
        split = load_split(d)
        for part in ("train", "heldout") if side == "both" else (side,):
            datasets[name if side != "both" else f"{name}:{part}"] = list(getattr(split, part))
    unknown = set(tasks or ()) - {t.id for ts in datasets.values() for t in ts}
    if unknown:
        raise InputError(None, "--task", f"unknown task ids {sorted(unknown)} (in the chosen side)")
    return {k: [t for t in ts if not tasks or t.id in tasks] for k, ts in datasets.items()}


def build_suite_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name (default: secure)."
    ),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    side: str = SIDE_OPTION,
    teacher: str = typer.Option(
        "scripted",
        "--teacher",
        help="'scripted' (offline, not a model) or the teacher's model name at --base-url.",
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="The teacher's OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1).",
    ),
    samples: int = typer.Option(
        4, "--samples", min=1, help="Teacher samples per instance and type (paper: 20)."
    ),
    cap: int = typer.Option(4, "--cap", min=1, help="Kept samples per (instance, type) at most."),
    plan_match: str = typer.Option("exact", "--plan-match", help="Planning filter: exact or soft."),
    seed: int = typer.Option(0, "--seed", help="Seed of the size-matched draws and the shuffle."),
    workers: int = typer.Option(2, "--workers", min=1, help="(instance, type) pairs at once."),
    store: Path | None = typer.Option(
        None, "--store", help="Result store (SQLite) to resume from."
    ),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Build the Security Suite SFT data and its three size-matched recipes (SecureVibe spec b.4: fine-tuning data from four security task types).

    Samples each task under the four task types from the teacher, keeps what passes each execution filter, and writes OUT/security_only.parquet, simple_mixture.parquet, security_suite.parquet, examples/<type>.parquet and manifest.json (counts of every filter verdict).
    """
    from agentpost.security.cwe import load_plan_match
    from agentpost.security.recipes.build import build_examples, suite_prompts, write_recipes
    from agentpost.security.recipes.teachers import load_names, open_teacher
    from agentpost.store import Store

    if plan_match not in ("exact", "soft"):
        raise InputError(None, "--plan-match", f"must be exact or soft, got {plan_match!r}")
    chosen = [
        t for ts in choose_datasets([suite] if suite else None, tasks, side).values() for t in ts
    ]
    names, match = load_names(), load_plan_match()
    plan = {"mode": plan_match, "groups": match["theme_groups"], "generic": match["generic_parent"]}
    prompts = {
        u: (t, ty) for u, (t, ty, _) in suite_prompts(chosen, names, match["allowed"]).items()
    }
    db = Store(store) if store else None
    if teacher.startswith(("http://", "https://")):  # the old spelling: --teacher URL
        typer.echo("warning: security build-suite --teacher URL is an old form: use --base-url URL "
                   "--teacher MODEL (it will go in 0.3)", err=True)  # fmt: skip
        teacher, base_url = (base_url or ""), teacher
    if teacher != "scripted" and not base_url:
        raise InputError(None, "--base-url", "a model teacher needs --base-url")
    if teacher != "scripted" and not teacher:
        raise InputError(None, "--teacher", "name the teacher's model at --base-url")
    spec, teacher_model = ("scripted", None) if teacher == "scripted" else (base_url, teacher)
    with open_teacher(spec, prompts, names, model=teacher_model) as (model, label):
        pools, stats = build_examples(
            chosen, model, label, names=names, allowed=match["allowed"], plan=plan,
            samples=samples, cap=cap, backend=sandbox_backend(backend), store=db, workers=workers,
            progress=lambda m: typer.echo(m, err=True),
        )  # fmt: skip
    args = {"suite": suite, "side": side, "tasks": [t.id for t in chosen], "teacher": label,
            "samples": samples, "cap": cap, "plan_match": plan_match, "seed": seed}  # fmt: skip
    manifest = write_recipes(pools, stats, out, seed=seed, producer_args=args)
    echo({"out": str(out), "examples": {k: v["kept"] for k, v in manifest["examples"].items()},
           "recipes": {k: v["size"] for k, v in manifest["recipes"].items()}})  # fmt: skip


def route_command(
    suites: list[Path] | None = typer.Option(
        None,
        "--suite",
        help="Suite directory or bundled suite name, one per dataset (default: secure).",
    ),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    side: str = SIDE_OPTION,
    endpoint: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint serving the checkpoint to probe."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name at --base-url."),
    agents: list[str] | None = typer.Option(
        None,
        "--policy",
        help="Scripted policies drawn per rollout, repeatable (default: secure-minded, "
        "functional-only).",
    ),
    group_size: int = typer.Option(4, "--group-size", "-G", min=1, help="Probe rollouts per task."),
    threshold: float = typer.Option(0.2, "--threshold", help="rl if rho >= this, else hg."),
    route_by: str = typer.Option("dataset", "--route-by", help="dataset or cwe."),
    seed: int = typer.Option(0, "--seed", help="Seed of the scripted policy's draws."),
    workers: int = typer.Option(2, "--workers", min=1, help="Rollouts at once."),
    store: Path | None = typer.Option(
        None, "--store", help="Result store (SQLite) to resume from."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Probe rollouts → rho (+1 share), rho_pos (> 0 share), dynamic-filter survival per dataset and per CWE, and the choice rl or hg (SecureVibe spec b.8: rl where positive rewards are dense enough to learn from, else hg).

    Without --base-url the policy is scripted (oracle agents, not a model), drawn per rollout.
    """
    from agentpost.security.probe import endpoint_policy, probe_groups, scripted_policy
    from agentpost.security.route import route
    from agentpost.security.scripted import choose_agents
    from agentpost.store import Store

    if route_by not in ("dataset", "cwe"):
        raise InputError(None, "--route-by", f"must be dataset or cwe, got {route_by!r}")
    if not 0 < threshold <= 1:
        raise InputError(None, "--threshold", f"must be in (0, 1], got {threshold}")
    datasets = choose_datasets(suites, tasks, side)
    if endpoint:
        if not model:
            raise InputError(None, "--model", "probing an endpoint needs a model name")
        policy, label = endpoint_policy(endpoint, model), f"endpoint:{model}"
    else:
        try:
            names = choose_agents(agents)
        except ValueError as e:
            raise InputError(None, "--policy", str(e)) from None
        policy, label = scripted_policy(names, seed), f"scripted:{','.join(names)}:seed={seed}"
    groups = probe_groups(datasets, policy, label, group_size=group_size,
                          backend=sandbox_backend(backend), workers=workers,
                          store=Store(store) if store else None,
                          progress=lambda m: typer.echo(m, err=True))  # fmt: skip
    doc = route(groups, threshold, route_by)  # type: ignore[arg-type]
    doc = {"format": "agentpost.security.route/1",
           "producer": producer(route, suites=suites, tasks=tasks, side=side, policy=label,
                                 group_size=group_size, threshold=threshold, route_by=route_by),
           **doc}  # fmt: skip
    if as_json:
        echo(doc)
        return
    o = doc["overall"]
    typer.echo(
        f"policy {label}: {o['n']} rollouts in {o['n_groups']} groups, {o['n_aborted']} aborted"
    )
    rows = [("dataset", k, v) for k, v in doc["datasets"].items()]
    rows += [("cwe", k, v) for k, v in doc["cwes"].items()]
    for kind, k, v in rows:
        typer.echo(f"{kind:<8}{k:<18} rho={num(v['rho'])} rho_pos={num(v['rho_pos'])} "
                   f"survive={num(v['survival'])} n={v['n']} -> {v['choice'] or 'NA'}")  # fmt: skip
    typer.echo(f"route by {route_by} (threshold {threshold}): "
               + ", ".join(f"{k}: {c or 'NA'}" for k, c in doc["decisions"].items()))  # fmt: skip
