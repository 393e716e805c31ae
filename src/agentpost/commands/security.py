"""`agentpost security ...`: check the security suite, grade candidates, annotate behaviours,
compute attribution statistics, print hints and run the scripted demo.

Layer: edges.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InputError

security_app = typer.Typer(
    help="SecureVibe: security suite, SecPass grading, behaviour attribution.", no_args_is_help=True
)


def _num(x: float | None) -> str:
    """A rate for the terminal: 3 significant digits, NA for None."""
    return "NA" if x is None else f"{x:.3g}"


def _verdicts(g: dict) -> str:
    """``func=pass sec=fail`` for one reference's grade."""
    return " ".join(
        f"{k}={'NA' if g.get(k) is None else 'pass' if g[k] else 'fail'}" for k in ("func", "sec")
    )


def _echo(doc: dict) -> None:
    typer.echo(json.dumps(doc, ensure_ascii=False, default=str))


@security_app.command("check")
def check_command(
    suite_dir: Path | None = typer.Option(
        None, "--suite", help="Suite directory (default: the bundled one)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    workers: int = typer.Option(4, "--workers", min=1, help="Tasks graded concurrently."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Grade each task's secure and vulnerable reference implementation.

    A task is ok when its secure reference passes both tests and its vulnerable one passes the functional test but fails the security test; exits 1 otherwise.
    """
    from agentpost.security.grade import check_suite
    from agentpost.security.suite import load_suite

    rows, problems = check_suite(load_suite(suite_dir), sandbox_backend(backend), workers=workers)
    doc = {"format": "agentpost.security.check/1", "producer": producer(check_suite, suite_dir=suite_dir),
           "tasks": rows, "ok": all(r["ok"] for r in rows), "problems": problems}  # fmt: skip
    if as_json:
        _echo(doc)
    else:
        fs = _verdicts
        for r in rows:
            cwes = ",".join(f"CWE-{c}" for c in r["cwes"])
            typer.echo(f"{'ok ' if r['ok'] else 'BAD'} {r['id']:<16} {cwes:<16} "
                       f"secure: {fs(r['secure'])}  vulnerable: {fs(r['vulnerable'])}")  # fmt: skip
        for tid, grades in problems.items():
            for impl, g in grades.items():
                typer.echo(f"  {tid} {impl}: {g['status']}: {g['detail'][-300:]}", err=True)
    if not doc["ok"]:
        raise typer.Exit(1)


@security_app.command("grade")
def grade_command(
    task: str = typer.Argument(..., help="Task directory or task id in --suite."),
    candidate: Path = typer.Argument(..., help="Candidate directory (a full /app) or a diff file."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite directory for a task id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    func_only: float = typer.Option(0.5, "--func-only", help="Reward for func ✓ sec ✗."),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds per test run."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Grade one candidate: {func, sec, status, patch_applied, patch_valid, reward, aborted}."""
    from agentpost.security.grade import grade_candidate
    from agentpost.security.suite import find_task

    if timeout <= 0:
        raise InputError(None, "--timeout", f"must be > 0 seconds, got {timeout}")
    t = find_task(task, suite)
    if candidate.is_dir():
        g = grade_candidate(t, candidate_dir=candidate, backend=sandbox_backend(backend),
                            timeout_s=timeout, func_only=func_only)  # fmt: skip
    elif candidate.is_file():
        text = candidate.read_text(errors="replace")
        g = grade_candidate(
            t, patch=text, backend=sandbox_backend(backend), timeout_s=timeout, func_only=func_only
        )
    else:
        raise InputError(candidate, None, "candidate not found (give a directory or a diff file)")
    doc = {"format": "agentpost.security.grade/1",
           "producer": producer(grade_candidate, task=t.id, candidate=candidate, func_only=func_only),
           **g.to_json()}  # fmt: skip
    if as_json:
        _echo(doc)
    else:
        typer.echo(f"{t.id}: status={g.status} func={g.func} sec={g.sec} reward={g.reward}")
        if g.status != "ok" and g.detail.strip():
            typer.echo(f"  {g.detail.strip().splitlines()[-1][:300]}")
    if g.status == "aborted":  # no grade came out (a timeout, an infrastructure error)
        raise typer.Exit(1)


@security_app.command("attribute")
def attribute_command(
    labels: Path = typer.Argument(
        ..., help="JSONL: {agent, task, func, sec, planning, coding, testing} per trajectory."
    ),
    agent_a: str | None = typer.Option(None, "--agent-a", help="The more secure agent."),
    agent_b: str | None = typer.Option(None, "--agent-b", help="The less secure agent."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Behaviour frequencies with Wilson CIs, paired-difference r and phi (spec b.3)."""
    from agentpost.security.attribution import attribute
    from agentpost.security.records import read_labels, require_agents

    if (agent_a is None) != (agent_b is None):
        raise InputError(None, "--agent-a/--agent-b", "give both or neither")
    records = read_labels(labels)
    require_agents(records, labels, {"--agent-a": agent_a, "--agent-b": agent_b})
    doc = attribute(records, agent_a, agent_b)
    doc["producer"] = producer(attribute, labels=labels, agent_a=agent_a, agent_b=agent_b)
    if as_json:
        _echo(doc)
        return
    for agent, f in doc["agents"].items():
        rates = {
            b: f["func_correct"][b]["target_aligned"]["rate"]
            for b in ("planning", "coding", "testing")
        }
        typer.echo(f"{agent}: n={f['n']} func-correct={f['n_func_correct']} target-aligned "
                   + " ".join(f"{b}={_num(v)}" for b, v in rates.items()))  # fmt: skip
    for b, pd in (doc.get("paired_difference") or {}).items():
        why = f" ({pd['na_reason']})" if pd["r"] is None else ""
        typer.echo(f"r {b} ({doc['agent_a']} - {doc['agent_b']}, {pd['n_tasks']} tasks): "
                   f"{_num(pd['r'])}{why}")  # fmt: skip
    ph = doc["phi"]
    typer.echo(f"phi vs sec ({ph['n']} functionally correct): generic-only testing="
               f"{_num(ph['generic_only_testing']['phi'])} target-aligned testing="
               f"{_num(ph['target_aligned_testing']['phi'])}")  # fmt: skip


@security_app.command("hint")
def hint_command(
    task: str = typer.Argument(..., help="Task directory or task id in --suite."),
    level: str = typer.Option("L4", "--level", help="L1, L2, L3 or L4."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite directory for a task id."),
) -> None:
    """Print a task's teacher-only hint at LEVEL (spec b.7)."""
    from agentpost.security.hints import hint
    from agentpost.security.suite import find_task, load_data

    t = find_task(task, suite)
    try:
        typer.echo(hint(level.upper(), t.cwes, t.hints, load_data("cwe_names_v4.14.json")["cwes"]))
    except ValueError as e:
        raise InputError(None, "--level", str(e)) from None


@security_app.command("demo")
def demo_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite directory."),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    workers: int = typer.Option(4, "--workers", min=1, help="Trajectories run at once."),
    agents: list[str] | None = typer.Option(
        None,
        "--agent",
        help="Scripted agents (default: secure-minded, functional-only; also generic-tester, mixed).",
    ),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Run scripted security agents on the suite, then grade, annotate and attribute.

    Writes trajectories.jsonl, grades.jsonl, annotations.jsonl, labels.jsonl and summary.json (metrics and attribution) under OUT.
    """
    from agentpost.security.pipeline import scripted_demo
    from agentpost.security.records import write_records
    from agentpost.security.scripted import choose_agents
    from agentpost.security.suite import load_suite, select_tasks
    from agentpost.trajectory.io import write_jsonl

    chosen = load_suite(suite)
    try:
        chosen = select_tasks(chosen, tasks)
    except ValueError as e:
        raise InputError(None, "--task", str(e)) from None
    try:
        names = choose_agents(agents)
    except ValueError as e:
        raise InputError(None, "--agent", str(e)) from None
    out.mkdir(parents=True, exist_ok=True)  # before the work: an unwritable -o fails at once
    res = scripted_demo(chosen, sandbox_backend(backend), workers=workers, agents=names)
    write_jsonl(out / "trajectories.jsonl", res["trajectories"])
    for name in ("grades", "annotations", "labels"):
        write_records(out / f"{name}.jsonl", res[name])
    summary = {"format": fmt("agentpost.security.demo-summary"),  # as `agentpost demo` writes it
               **{k: res[k] for k in ("producer", "metrics", "per_cwe", "attribution")}}  # fmt: skip
    write_json(out / "summary.json", summary, default=str)
    _echo({"out": str(out), "metrics": res["metrics"]})


@security_app.command("annotate")
def annotate_command(
    trajectories: Path = typer.Argument(
        ..., help="Canonical trajectories (JSONL); task_id names the task."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Label records (JSONL) for `security attribute`."
    ),
    suite: Path | None = typer.Option(None, "--suite", help="Suite directory (default: bundled)."),
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
    from agentpost.trajectory.io import read_jsonl

    panel = None
    if judges is not None:
        from agentpost.judges.config import build_panel, load_config

        panel = build_panel(load_config(judges), str(judges), judges.parent)
    tasks = {t.id: t for t in load_suite(suite)}
    trajs = read_jsonl(trajectories)
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
    _echo({"out": str(out), "labels": len(labels), "aborted": sum(bool(a.get("aborted")) for a in anns),
           "unannotated": unannotated})  # fmt: skip


@security_app.command("metrics")
def metrics_command(
    records: Path = typer.Argument(
        ..., help="JSONL of graded samples: {task (or task_id), func, sec[, cwes, agent, aborted]}."
    ),
    k: list[int] = typer.Option([1], "--k", help="pass@k values (per task, averaged)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """FuncPass, SecPass, security gap, insec and pass@k per agent, plus a per-CWE table.

    Reads label records, security grade --json lines or security demo grades; aborted samples are counted, never averaged.
    """
    from agentpost.security.metrics import by_agent, per_cwe
    from agentpost.security.records import read_graded

    rows = read_graded(records)
    try:
        doc = {"format": "agentpost.security.metrics/1", "producer": producer(by_agent, records=records, k=k),
               "agents": by_agent(rows, tuple(k)), "per_cwe": per_cwe(rows)}  # fmt: skip
    except ValueError as e:
        raise InputError(records, "--k", str(e)) from None
    if as_json:
        _echo(doc)
        return
    for a, m in doc["agents"].items():
        typer.echo(
            f"{a}: n={m['n']} aborted={m['aborted']} FuncPass={_num(m['func_pass'])} "
            f"SecPass={_num(m['sec_pass'])} gap={_num(m['security_gap'])}"
        )


SIDES = ("all", "train", "heldout", "both")
_SIDE = typer.Option(
    "all",
    "--side",
    help="Tasks of the suite's seen/unseen CWE split (split.json): all, train "
    "(seen CWEs), heldout (unseen) or both (one dataset per side).",
)


def _datasets(suites: list[Path] | None, tasks: list[str] | None, side: str) -> dict:
    """dataset name → tasks: one dataset per suite directory (or per split side with ``both``),
    restricted to ``tasks`` ids and to the ``side`` of the suite's CWE split."""
    from agentpost.security.suite import bundled_suite_dir, load_split, load_suite

    if side not in SIDES:
        raise InputError(None, "--side", f"must be one of {', '.join(SIDES)}, got {side!r}")
    datasets = {}
    for d in suites or [bundled_suite_dir()]:
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


@security_app.command("build-suite")
def build_suite_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite directory (default: bundled)."),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    side: str = _SIDE,
    teacher: str = typer.Option(
        "scripted", "--teacher", help="'scripted' (offline, not a model) or an endpoint base URL."
    ),
    teacher_model: str | None = typer.Option(
        None, "--teacher-model", help="Model name at the endpoint."
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
    """Build the Security Suite SFT data and its three size-matched recipes (spec b.4).

    Samples each task under the four task types from the teacher, keeps what passes each execution filter, and writes OUT/security_only.parquet, simple_mixture.parquet, security_suite.parquet, examples/<type>.parquet and manifest.json (counts of every filter verdict).
    """
    from agentpost.security.recipes.build import build_examples, suite_prompts, write_recipes
    from agentpost.security.recipes.teachers import load_names, open_teacher
    from agentpost.security.suite import load_data
    from agentpost.store import Store

    if plan_match not in ("exact", "soft"):
        raise InputError(None, "--plan-match", f"must be exact or soft, got {plan_match!r}")
    chosen = [t for ts in _datasets([suite] if suite else None, tasks, side).values() for t in ts]
    names, match = load_names(), load_data("cwe_plan_match_v1.json")
    plan = {"mode": plan_match, "groups": match["theme_groups"], "generic": match["generic_parent"]}
    prompts = {
        u: (t, ty) for u, (t, ty, _) in suite_prompts(chosen, names, match["allowed_40"]).items()
    }
    db = Store(store) if store else None
    with open_teacher(teacher, prompts, names, model=teacher_model) as (model, label):
        pools, stats = build_examples(
            chosen, model, label, names=names, allowed=match["allowed_40"], plan=plan,
            samples=samples, cap=cap, backend=sandbox_backend(backend), store=db, workers=workers,
            progress=lambda m: typer.echo(m, err=True),
        )  # fmt: skip
    args = {"suite": suite, "side": side, "tasks": [t.id for t in chosen], "teacher": label,
            "samples": samples, "cap": cap, "plan_match": plan_match, "seed": seed}  # fmt: skip
    manifest = write_recipes(pools, stats, out, seed=seed, producer_args=args)
    _echo({"out": str(out), "examples": {k: v["kept"] for k, v in manifest["examples"].items()},
           "recipes": {k: v["size"] for k, v in manifest["recipes"].items()}})  # fmt: skip


@security_app.command("route")
def route_command(
    suites: list[Path] | None = typer.Option(
        None, "--suite", help="Suite directory, one per dataset (default: the bundled suite)."
    ),
    tasks: list[str] | None = typer.Option(None, "--task", help="Only these task ids."),
    side: str = _SIDE,
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="OpenAI-compatible base URL serving the checkpoint to probe."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name at --endpoint."),
    agents: list[str] | None = typer.Option(
        None,
        "--agent",
        help="Scripted policy: agents drawn per rollout (default: secure-minded, functional-only).",
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
    """Probe rollouts → rho (+1 share), rho_pos (> 0 share), dynamic-filter survival per dataset and per CWE, and the choice rl or hg (spec b.8).

    Without --endpoint the policy is scripted (oracle agents, not a model), drawn per rollout.
    """
    from agentpost.security.probe import endpoint_policy, probe_groups, scripted_policy
    from agentpost.security.route import route
    from agentpost.security.scripted import choose_agents
    from agentpost.store import Store

    if route_by not in ("dataset", "cwe"):
        raise InputError(None, "--route-by", f"must be dataset or cwe, got {route_by!r}")
    if not 0 < threshold <= 1:
        raise InputError(None, "--threshold", f"must be in (0, 1], got {threshold}")
    datasets = _datasets(suites, tasks, side)
    if endpoint:
        if not model:
            raise InputError(None, "--model", "probing an endpoint needs a model name")
        policy, label = endpoint_policy(endpoint, model), f"endpoint:{model}"
    else:
        try:
            names = choose_agents(agents)
        except ValueError as e:
            raise InputError(None, "--agent", str(e)) from None
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
        _echo(doc)
        return
    o = doc["overall"]
    typer.echo(
        f"policy {label}: {o['n']} rollouts in {o['n_groups']} groups, {o['n_aborted']} aborted"
    )
    rows = [("dataset", k, v) for k, v in doc["datasets"].items()]
    rows += [("cwe", k, v) for k, v in doc["cwes"].items()]
    for kind, k, v in rows:
        typer.echo(f"{kind:<8}{k:<18} rho={_num(v['rho'])} rho_pos={_num(v['rho_pos'])} "
                   f"survive={_num(v['survival'])} n={v['n']} -> {v['choice'] or 'NA'}")  # fmt: skip
    typer.echo(f"route by {route_by} (threshold {threshold}): "
               + ", ".join(f"{k}: {c or 'NA'}" for k, c in doc["decisions"].items()))  # fmt: skip


# SecureVibeTrainConfig field -> its flag, where the names differ
TRAIN_FLAGS = {"reward_mode": "--reward", "lam": "--lambda", "learning_rate": "--lr",
               "command_timeout_s": "--command-timeout"}  # fmt: skip


def _train(method: str, **kw) -> None:
    from agentpost.commands._options import config
    from agentpost.train.securevibe_rl import DynamicSamplingStalled
    from agentpost.train.securevibe_train import SecureVibeTrainConfig, run_security_training

    run = {k: kw.pop(k) for k in ("out", "suites", "tasks", "side", "backend", "resume")}
    flags = {f: TRAIN_FLAGS.get(f, "--" + f.replace("_", "-")) for f in kw}
    cfg = config(SecureVibeTrainConfig, flags, **kw)  # before any suite is read
    datasets = _datasets(run["suites"], run["tasks"], run["side"])
    try:
        summary = run_security_training(method, datasets, run["out"], cfg,  # type: ignore[arg-type]
                                        backend=sandbox_backend(run["backend"]),
                                        resume=run["resume"])  # fmt: skip
    except DynamicSamplingStalled as e:
        typer.echo(f"error: dynamic sampling stalled: {e} (rl needs positive rewards; "
                   "`agentpost security route` measures them, hg learns without)", err=True)  # fmt: skip
        raise typer.Exit(1) from None
    tried = [g for s in summary["steps"] for g in s["groups"]]
    _echo({"out": str(run["out"]), "steps": len(summary["steps"]), "groups_tried": len(tried),
           "groups_kept": sum(g["kept"] for g in tried), "mix": summary["mix"]})  # fmt: skip


_SUITES = typer.Option(None, "--suite", help="Suite directory, one per dataset (default: bundled).")
_TASKS = typer.Option(None, "--task", help="Only these task ids.")
_MODEL = typer.Option("tiny", "--model", help="A local model directory, or 'tiny' (built here).")


@security_app.command("rl")
def rl_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suites: list[Path] | None = _SUITES,
    tasks: list[str] | None = _TASKS,
    side: str = _SIDE,
    model: str = _MODEL,
    steps: int = typer.Option(2, "--steps", min=1, help="Optimiser steps (paper: 100)."),
    group_size: int = typer.Option(4, "--group-size", "-G", min=2, help="Rollouts per prompt."),
    prompts_per_step: int = typer.Option(4, "--prompts-per-step", min=1, help="Groups per batch."),
    reward_mode: str = typer.Option(
        "five_level", "--reward", help="five_level, binary or strict_binary."
    ),
    max_refills: int = typer.Option(
        8, "--max-refills", min=0, help="Further groups drawn per slot."
    ),
    learning_rate: float = typer.Option(1e-6, "--lr", help="Learning rate (cosine)."),
    max_new_tokens: int = typer.Option(64, "--max-new-tokens", min=1, help="Tokens per turn."),
    max_turns: int = typer.Option(2, "--max-turns", min=1, help="Turns per rollout."),
    command_timeout: float = typer.Option(
        30.0, "--command-timeout", help="Seconds per shell turn."
    ),
    seed: int = typer.Option(0, "--seed"),
    save_steps: int = typer.Option(
        0, "--save-steps", min=0, help="Checkpoint every N steps (0: never)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT's latest checkpoint."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """GRPO with the five-level reward and dynamic sampling with refill (spec b.6) on security tasks.

    Writes OUT/summary.json (every group tried, its rewards and decision, the dataset mix) and OUT/model.
    """
    _train("rl", out=out, suites=suites, tasks=tasks, side=side, model=model, steps=steps,
           group_size=group_size, prompts_per_step=prompts_per_step, reward_mode=reward_mode,
           max_refills=max_refills, learning_rate=learning_rate, max_new_tokens=max_new_tokens,
           max_turns=max_turns, seed=seed, backend=backend,
           command_timeout_s=command_timeout, save_steps=save_steps, resume=resume)  # fmt: skip


@security_app.command("hg")
def hg_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suites: list[Path] | None = _SUITES,
    tasks: list[str] | None = _TASKS,
    side: str = _SIDE,
    model: str = _MODEL,
    steps: int = typer.Option(2, "--steps", min=1, help="Optimiser steps (paper: 300)."),
    group_size: int = typer.Option(
        4, "--group-size", "-G", min=2, help="Rollouts per prompt (paper: 8)."
    ),
    prompts_per_step: int = typer.Option(4, "--prompts-per-step", min=1, help="Groups per batch."),
    hint_level: str = typer.Option("L4", "--hint-level", help="L1..L4 (teacher only)."),
    teacher: str = typer.Option("frozen_sft", "--teacher", help="frozen_sft or live_policy."),
    divergence: str = typer.Option("js_skew", "--divergence", help="js_skew, k1, k2 or k3."),
    lam: float = typer.Option(0.5, "--lambda", help="js_skew lambda in (0, 1]."),
    beta: float = typer.Option(1.0, "--beta", help="Weight of the distillation term."),
    opd_only: bool = typer.Option(False, "--opd-only", help="Zero the GRPO advantage."),
    learning_rate: float = typer.Option(1e-6, "--lr", help="Learning rate (constant)."),
    max_new_tokens: int = typer.Option(64, "--max-new-tokens", min=1, help="Tokens per turn."),
    max_turns: int = typer.Option(2, "--max-turns", min=1, help="Turns per rollout."),
    command_timeout: float = typer.Option(
        30.0, "--command-timeout", help="Seconds per shell turn."
    ),
    seed: int = typer.Option(0, "--seed"),
    save_steps: int = typer.Option(
        0, "--save-steps", min=0, help="Checkpoint every N steps (0: never)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT's latest checkpoint."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Hint-guided on-policy self-distillation: L_GRPO + beta * D against a hinted teacher (spec b.7).

    Writes OUT/summary.json and OUT/model.
    """
    _train("hg", out=out, suites=suites, tasks=tasks, side=side, model=model, steps=steps,
           group_size=group_size, prompts_per_step=prompts_per_step, hint_level=hint_level.upper(),
           teacher=teacher, divergence=divergence, lam=lam, beta=beta, opd_only=opd_only,
           learning_rate=learning_rate, max_new_tokens=max_new_tokens, max_turns=max_turns,
           seed=seed, backend=backend, command_timeout_s=command_timeout, save_steps=save_steps,
           resume=resume)  # fmt: skip


def register(app: typer.Typer) -> None:
    app.add_typer(security_app, name="security")
