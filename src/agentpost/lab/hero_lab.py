"""HERO vs GRPO and every b.11 ablation on the lab policy (spec HERO.md (d)): same SFT
checkpoint, same seeds, the same TRL trainer and real sandboxes; only the advantage differs.

``run_hero_lab(out, cfg)``: family → scripted corpus → stage-1 SFT (``lab.stages``) → the
pre-flight table (``lab.preflight``: is the SFT policy in HERO's regime?) → per seed, the SFT
policy's held-out evaluation (step 0, shared by every variant) → for each variant and seed,
``cfg.steps`` GRPO steps of ``prompts_per_step`` × ``group`` rollouts with
``HeroConfig().with_ablation(variant)`` (``grpo`` is λ = 0), evaluating on the held-out split
every ``eval_every`` steps (``eval_samples`` rollouts per task). The (variant, seed) runs go to
``workers`` processes, one torch thread each; each writes ``rl/<variant>-s<seed>.json`` when it
finishes, so a rerun skips finished runs. ``hero_lab.json`` holds the table (``lab.stats``:
intervals that resample seeds and tasks, differences paired on the same draws), the curves, the
per-step training dynamics (b.9.3) and a verdict per pre-registered direction
(``lab.directions.HERO``).

Micro scale, and said so in the output. A direction that does not show is reported as it came
out.

Layer: edges.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentpost.config_checks import at_least, check, one_of, positive
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.hero.behaviours import detect
from agentpost.hero.config import ABLATIONS, HeroConfig
from agentpost.intervals import RESAMPLES
from agentpost.lab import directions, stats
from agentpost.lab.episodes import Episode, to_trajectory
from agentpost.lab.stages import PolicyConfig, evaluate_policy, family, load_policy, memo_for
from agentpost.sandbox.base import Backend

FORMAT = fmt("agentpost.lab-hero")
CAVEAT = ("Micro scale: a ~1M-parameter policy trained from scratch on procedural tasks whose "
          "parameters come from a closed vocabulary, a few dozen RL steps. Directions only; not "
          "the paper's numbers.")  # fmt: skip
VARIANTS = ("grpo", "hero", "no_hpo", "no_gating", "no_clipping", "no_calibration", "no_coarse",
            "no_fine", "random_20", "highest_entropy_20")  # fmt: skip
RATES = ("resolved",)  # shares of rollouts: Wilson-floored intervals (``stats.estimate``)
METRICS = ("resolved", "tokens", "tokens_success", "unproductive", "entropy", "turns")


@dataclass
class HeroLabConfig:
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    variants: tuple[str, ...] = VARIANTS
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 6
    prompts_per_step: int = 2
    group: int = 8
    rl_lr: float = 3e-4
    eval_every: int = 6
    eval_samples: int = 2
    preflight_group: int = 8
    n_boot: int = RESAMPLES
    workers: int = 3

    def __post_init__(self) -> None:
        check(self, {
            "variants": (bool(self.variants) and set(self.variants) <= set(ABLATIONS),
                         "a non-empty tuple of " + one_of(ABLATIONS)),
            "seeds": (bool(self.seeds) and all(at_least(s, 0) for s in self.seeds),
                      "a non-empty tuple of seeds >= 0"),
            "steps": (at_least(self.steps, 1), "at least 1"),
            "prompts_per_step": (at_least(self.prompts_per_step, 1), "at least 1"),
            "group": (at_least(self.group, 2), "at least 2 (an advantage needs a group)"),
            "rl_lr": (positive(self.rl_lr), "> 0"),
            "eval_every": (at_least(self.eval_every, 1), "at least 1"),
            "eval_samples": (at_least(self.eval_samples, 1), "at least 1"),
            "preflight_group": (at_least(self.preflight_group, 2), "at least 2"),
            "n_boot": (at_least(self.n_boot, 1), "at least 1"),
            "workers": (at_least(self.workers, 1), "at least 1"),
        })  # fmt: skip


def episode_record(ep: Episode, sample: int) -> dict[str, Any]:
    """One held-out rollout's figures, with its per-turn entropy and unproductive flags."""
    flags = detect(to_trajectory(ep, run_id="lab"))
    unprod = [bool(f.unproductive) for f in flags]
    return {"task": ep.task_id, "sample": sample, "resolved": bool(ep.resolved),
            "tokens": ep.cost_tokens, "turns": len(ep.commands),
            "unproductive": sum(unprod) / max(1, len(unprod)),
            "entropy": float(np.mean(ep.turn_entropy)) if ep.turn_entropy else 0.0,
            "h": [round(h, 5) for h in ep.turn_entropy], "unprod": unprod}  # fmt: skip


def _eval(out: Path, cfg: HeroLabConfig, model, tok, held, backend, memo, agent: str,
          seed: int) -> list[dict]:  # fmt: skip
    eps = evaluate_policy(model, tok, held, backend, cfg.policy, agent=agent, seed=seed,
                          samples=cfg.eval_samples, memo=memo)  # fmt: skip
    n = len(held)
    return [episode_record(ep, i // n) for i, ep in enumerate(eps)]


def _setup(out: Path, backend_name: str):
    from agentpost.lab.sampling import one_thread
    from agentpost.sandbox.registry import get_backend

    one_thread()
    return get_backend(backend_name)


def run_step0(out: Path, cfg: HeroLabConfig, seed: int, backend_name: str) -> Path:
    """The SFT policy's held-out evaluation for ``seed`` (a worker job)."""
    path = out / "rl" / f"step0-s{seed}.json"
    if path.is_file():
        return path
    backend = _setup(out, backend_name)
    _, held = family(out, cfg.policy)
    model, tok = load_policy(out / "sft", cfg.policy.device)
    recs = _eval(out, cfg, model, tok, held, backend, memo_for(out), "lab/sft", 10_000 + seed)
    write_json(path, {"seed": seed, "records": recs}, indent=None)
    return path


def train_variant(out: Path, cfg: HeroLabConfig, variant: str, seed: int, backend_name: str):
    """One RL run from the SFT checkpoint (a worker job); writes ``rl/<variant>-s<seed>.json``."""
    path = out / "rl" / f"{variant}-s{seed}.json"
    if path.is_file():
        return path
    backend = _setup(out, backend_name)
    import datasets
    import torch
    import transformers

    from agentpost.lab.rl import lab_rollout_func
    from agentpost.train.trl_hero import hero_grpo_config, hero_grpo_trainer_cls, resolved_reward

    train, held = family(out, cfg.policy)
    memo = memo_for(out)
    model, tok = load_policy(out / "sft", cfg.policy.device)
    hero = HeroConfig(learning_rate=cfg.rl_lr, seed=seed).with_ablation(variant)
    pol = cfg.policy
    rollout = lab_rollout_func({t.id: t for t in train}, backend, max_turns=pol.max_turns,
                               max_new_tokens=pol.max_new_tokens, seed=seed, memo=memo)  # fmt: skip
    args = hero_grpo_config(
        str(out / "rl" / f"{variant}-s{seed}"), hero,
        per_device_train_batch_size=cfg.prompts_per_step * cfg.group,
        num_generations=cfg.group, max_steps=cfg.steps, use_cpu=cfg.policy.device == "cpu", logging_steps=1,
        max_completion_length=pol.size.max_positions, disable_dropout=True, seed=seed,
        disable_tqdm=True,
    )  # fmt: skip
    data = datasets.Dataset.from_dict({"prompt": [t.id for t in train]})
    step0 = json.loads((out / "rl" / f"step0-s{seed}.json").read_text())["records"]
    curve: list[dict[str, Any]] = [{"step": 0, **_means(step0)}]
    final: dict[str, list] = {"records": step0}

    class EvalEvery(transformers.TrainerCallback):
        def on_step_end(self, _args, state, control, model=None, **_kw):
            s = state.global_step
            if s % cfg.eval_every == 0 or s == cfg.steps:
                recs = _eval(out, cfg, model, tok, held, backend, memo, f"lab/{variant}",
                             10_000 + seed)  # fmt: skip
                final["records"] = recs
                curve.append({"step": s, **_means(recs)})

    t0 = time.monotonic()
    torch.manual_seed(seed)
    trainer = hero_grpo_trainer_cls()(model=model, args=args, processing_class=tok,
                                      reward_funcs=[resolved_reward], train_dataset=data,
                                      rollout_func=rollout, hero_config=hero,
                                      callbacks=[EvalEvery()])  # fmt: skip
    trainer.train()
    dynamics = [{k.removeprefix("hero/"): v for k, v in e.items()
                 if k.startswith("hero/") or k in ("step", "loss")}
                for e in trainer.state.log_history if "hero/gate_mean" in e]  # fmt: skip
    write_json(path, {"variant": variant, "seed": seed, "curve": curve, "dynamics": dynamics,
                      "records": final["records"], "memo": [memo.hits, memo.misses],
                      "train_s": round(time.monotonic() - t0, 1)}, indent=None)  # fmt: skip
    return path


def _means(recs: list[dict]) -> dict[str, float]:
    y = np.array([r["resolved"] for r in recs], dtype=float)
    c = np.array([r["tokens"] for r in recs], dtype=float)
    return {"resolved": float(y.mean()), "tokens": float(c.mean()),
            "tokens_success": float((c * y).sum() / y.sum()) if y.sum() else float("nan"),
            "unproductive": float(np.mean([r["unproductive"] for r in recs])),
            "entropy": float(np.mean([r["entropy"] for r in recs]))}  # fmt: skip


def cells(runs: dict[int, list[dict]], tasks: list[str], k: int) -> dict[str, tuple]:
    """metric → (num[S, T, K], den[S, T, K]) of one arm; ``runs``: seed → records."""
    seeds = sorted(runs)
    t_ix = {t: i for i, t in enumerate(tasks)}
    shape = (len(seeds), len(tasks), k)
    num = {m: np.full(shape, np.nan) for m in METRICS}
    den = {m: np.full(shape, np.nan) for m in METRICS}
    low = [np.zeros(shape[:2] + (1,)) for _ in range(4)]  # unprod-low, low, unprod-rest, rest
    for s, seed in enumerate(seeds):
        by_task: dict[str, list[dict]] = {}
        for r in runs[seed]:
            i, j = t_ix[r["task"]], r["sample"]
            y, c = float(r["resolved"]), float(r["tokens"])
            vals = {"resolved": (y, 1), "tokens": (c, 1), "tokens_success": (c * y, y),
                    "unproductive": (r["unproductive"], 1), "entropy": (r["entropy"], 1),
                    "turns": (r["turns"], 1)}  # fmt: skip
            for m, (a, b) in vals.items():
                num[m][s, i, j], den[m][s, i, j] = a, b
            by_task.setdefault(r["task"], []).append(r)
        for task, rs in by_task.items():  # b.9.2: q20 over the group's turns (its K samples)
            h = np.array([x for r in rs for x in r["h"]], dtype=float)
            u = np.array([x for r in rs for x in r["unprod"]], dtype=float)
            if len(h) == 0:
                continue
            is_low = h <= np.percentile(h, 20)
            i = t_ix[task]
            vals4 = ((u * is_low).sum(), is_low.sum(), (u * ~is_low).sum(), (~is_low).sum())
            for arr, v in zip(low, vals4, strict=True):
                arr[s, i, 0] = v
    out = {m: (num[m], den[m]) for m in METRICS}
    out["_low"] = ((low[0], low[1]), (low[2], low[3]))
    return out


def table(arms: dict[str, dict[int, list[dict]]], tasks: list[str], k: int, n_boot: int,
          seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Per arm: every metric {mean, ci95}; each arm's difference against GRPO and against
    HERO, paired on the same (seed, task) draws; and a verdict per pre-registered direction."""
    c = {a: cells(runs, tasks, k) for a, runs in arms.items()}
    n_seeds = len(next(iter(arms.values())))
    d = stats.draws(n_seeds, len(tasks), n_boot, seed)
    rows: dict[str, Any] = {}
    for arm, cc in c.items():
        row: dict[str, Any] = {m: stats.estimate(*cc[m], d, m in RATES) for m in METRICS}
        for ref in ("grpo", "hero"):
            if ref in c and ref != arm:
                for m in METRICS:
                    row[m][f"delta_vs_{ref}"] = stats.difference(cc[m], c[ref][m], d)
        row["n"] = int(np.sum(~np.isnan(cc["resolved"][0])))
        rows[arm] = row
    verdicts = []
    for dr in directions.HERO:
        if dr.a not in c or (dr.b is not None and dr.b not in c):
            continue
        if dr.metric == "low_entropy_unproductive":
            lo_, rest = c[dr.a]["_low"]
            ci = stats.interval(stats.replicates(*lo_, d) - stats.replicates(*rest, d))
            est = {"mean": stats.ratio(*lo_) - stats.ratio(*rest),
                   "ci95": ci if ci is None or ci[1] > ci[0] else None,  # never zero-width
                   "low_rate": stats.ratio(*lo_), "rest_rate": stats.ratio(*rest)}  # fmt: skip
        else:
            est = stats.difference(c[dr.a][dr.metric], c[dr.b][dr.metric], d)
        verdicts.append({**dr.to_json(), "estimate": est,
                         "verdict": directions.verdict(dr, est["ci95"])})  # fmt: skip
    return {"arms": rows, "directions": verdicts}


def run_hero_lab(out: str | Path, cfg: HeroLabConfig, backend: Backend,
                 progress: Callable[[str], None] = print) -> dict:  # fmt: skip
    from agentpost.lab.preflight import preflight_stage
    from agentpost.lab.sampling import one_thread
    from agentpost.lab.stages import student

    one_thread()
    out = Path(out)
    t_start = time.monotonic()
    have = student(out, cfg.policy, backend, progress)
    held, sft_info = have[1], have[7]
    pf = preflight_stage(out, cfg.policy, backend, cfg.preflight_group, progress, have)
    progress("preflight: " + json.dumps({k: pf["summary"][k] for k in (
        "share_in_regime", "median_cost_ratio", "resolved", "exposed", "repaired",
        "in_regime")}))  # fmt: skip
    jobs = [(run_step0, (out, cfg, s, backend.name)) for s in cfg.seeds]
    _pool(jobs, cfg.workers, progress, "step 0")
    jobs = [(train_variant, (out, cfg, v, s, backend.name)) for s in cfg.seeds
            for v in cfg.variants]  # fmt: skip
    _pool(jobs, cfg.workers, progress, "rl")
    runs = [json.loads((out / "rl" / f"{v}-s{s}.json").read_text())
            for v in cfg.variants for s in cfg.seeds]  # fmt: skip
    arms: dict[str, dict[int, list[dict]]] = {"base": {}}
    for s in cfg.seeds:
        arms["base"][s] = json.loads((out / "rl" / f"step0-s{s}.json").read_text())["records"]
    for r in runs:
        arms.setdefault(r["variant"], {})[r["seed"]] = r["records"]
    tab = table(arms, [t.id for t in held], cfg.eval_samples, cfg.n_boot)
    doc = {
        "format": FORMAT,
        "producer": {**producer(run_hero_lab, **asdict(cfg)), "caveat": CAVEAT},
        "sft": sft_info,
        "preflight": pf["summary"],
        "seeds": list(cfg.seeds),
        "table": tab["arms"],
        "directions": tab["directions"],
        "runs": [
            {k: r[k] for k in ("variant", "seed", "curve", "dynamics", "train_s", "memo")}
            for r in runs
        ],  # fmt: skip
        "wall_s": round(time.monotonic() - t_start, 1),
    }
    write_json(out / "hero_lab.json", doc, default=str)
    return doc


def _pool(jobs: list[tuple], workers: int, progress: Callable[[str], None], what: str) -> None:
    """Run ``(fn, args)`` jobs on ``workers`` spawned processes (in this one when 1)."""
    if workers == 1:
        for fn, args in jobs:
            t0 = time.monotonic()
            fn(*args)
            progress(f"{what}: {args[2:-1]} done in {time.monotonic() - t0:.0f} s")
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
        futs = {pool.submit(fn, *args): args for fn, args in jobs}
        for f in as_completed(futs):
            f.result()
            progress(f"{what}: {futs[f][2:-1]} done")
