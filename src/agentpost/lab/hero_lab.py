"""HERO vs GRPO on the lab policy (spec HERO.md (d)): same SFT checkpoint, same seeds, the same
TRL trainer and real sandboxes; only the advantage differs.

``run_hero_lab(out, cfg)``: family → scripted corpus → stage-1 SFT (``lab.stages``) → for each
variant and seed, ``cfg.steps`` GRPO steps with ``HeroConfig().with_ablation(variant)``
(``grpo`` is λ = 0), evaluating on the held-out split every ``eval_every`` steps: resolution,
C_i tokens per rollout, unproductive-turn rate (HERO's b.8 detectors on the canonical
trajectories) and mean turn entropy. Each (variant, seed) writes ``rl/<variant>-s<seed>.json``
when it finishes, so a rerun skips finished runs. ``hero_lab.json`` holds the table: per variant
the final held-out figures with 95% bootstrap CIs over (seed, task), and the paired difference
against GRPO on the same seeds and tasks.

Micro scale, and said so in the output: a policy of about 1M parameters trained from scratch on
three procedural task families. A direction that does not show here is reported as it came out.

Layer: edges.
"""

from __future__ import annotations

import json
import time
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
from agentpost.lab.episodes import Episode, to_trajectory
from agentpost.lab.stages import PolicyConfig, corpus, evaluate_policy, family, sft_policy
from agentpost.sandbox.base import Backend

FORMAT = fmt("agentpost.lab-hero")
CAVEAT = ("Micro scale: a ~1M-parameter policy trained from scratch on procedural tasks, a few "
          "dozen RL steps. Directions only; not the paper's numbers.")  # fmt: skip


@dataclass
class HeroLabConfig:
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    variants: tuple[str, ...] = ("grpo", "hero", "no_gating", "no_clipping", "no_fine")
    seeds: tuple[int, ...] = (0, 1)
    steps: int = 6
    prompts_per_step: int = 2
    group: int = 4
    rl_lr: float = 2e-4
    eval_every: int = 3
    n_boot: int = RESAMPLES

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
            "n_boot": (at_least(self.n_boot, 1), "at least 1"),
        })  # fmt: skip

    @classmethod
    def smoke(cls) -> HeroLabConfig:
        from agentpost.lab.policy import PolicySize

        pol = PolicyConfig(n_train=3, n_heldout=3, vocab_size=400, sft_epochs=2,
                           size=PolicySize(hidden=32, layers=1, heads=2, intermediate=64,
                                           max_positions=1024),
                           max_turns=3, max_new_tokens=24, copy_rows=40,
                           copy_epochs=1.0)  # fmt: skip
        return cls(policy=pol, variants=("grpo", "hero"), seeds=(0,), steps=1,
                   prompts_per_step=2, group=2, eval_every=1, n_boot=50)  # fmt: skip


def episode_metrics(eps: list[Episode]) -> dict[str, list[float]]:
    """Per-episode held-out figures: resolved, C_i, unproductive-turn rate, mean turn entropy."""
    out: dict[str, list[float]] = {"resolved": [], "tokens": [], "unproductive": [], "entropy": []}
    for ep in eps:
        flags = detect(to_trajectory(ep, run_id="lab"))
        out["resolved"].append(float(ep.resolved))
        out["tokens"].append(float(ep.cost_tokens))
        out["unproductive"].append(sum(f.unproductive for f in flags) / max(1, len(flags)))
        out["entropy"].append(float(np.mean(ep.turn_entropy)) if ep.turn_entropy else 0.0)
    return out


def _summary(m: dict[str, list[float]]) -> dict[str, float]:
    return {k: float(np.mean(v)) if v else float("nan") for k, v in m.items()}


def train_variant(
    out: Path, cfg: HeroLabConfig, variant: str, seed: int, train, held, backend: Backend
) -> dict[str, Any]:
    """One RL run from the SFT checkpoint; returns (and writes) its curve and final episodes."""
    import datasets
    import torch
    import transformers

    from agentpost.lab.rl import lab_rollout_func
    from agentpost.train.trl_hero import hero_grpo_config, hero_grpo_trainer_cls, resolved_reward

    path = out / "rl" / f"{variant}-s{seed}.json"
    if path.is_file():
        return json.loads(path.read_text())
    sft = out / "sft"
    model = transformers.AutoModelForCausalLM.from_pretrained(str(sft))
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(sft))
    hero = HeroConfig(learning_rate=cfg.rl_lr, seed=seed).with_ablation(variant)
    by_id = {t.id: t for t in train}
    pol = cfg.policy
    rollout = lab_rollout_func(by_id, backend, max_turns=pol.max_turns,
                               max_new_tokens=pol.max_new_tokens)  # fmt: skip
    args = hero_grpo_config(
        str(out / "rl" / f"{variant}-s{seed}"), hero,
        per_device_train_batch_size=cfg.prompts_per_step * cfg.group,
        num_generations=cfg.group, max_steps=cfg.steps, use_cpu=True, logging_steps=1,
        max_completion_length=pol.size.max_positions, disable_dropout=True, seed=seed,
    )  # fmt: skip
    data = datasets.Dataset.from_dict({"prompt": [t.id for t in train]})
    last: dict[str, list[float]] = {}

    def evaluate(step: int, model: Any) -> None:
        eps = evaluate_policy(model, tok, held, backend, pol, agent=f"lab/{variant}", seed=seed)
        last.clear()
        last.update(episode_metrics(eps))
        curve.append({"step": step, **_summary(last)})

    class EvalEvery(transformers.TrainerCallback):
        def on_step_end(self, _args, state, control, model=None, **_kw):
            if state.global_step % cfg.eval_every == 0 or state.global_step == cfg.steps:
                evaluate(state.global_step, model)

    curve: list[dict[str, Any]] = []
    start = out / "rl" / f"step0-s{seed}.json"  # the SFT policy: the same for every variant
    if start.is_file():
        last.update(json.loads(start.read_text()))
        curve.append({"step": 0, **_summary(last)})
    else:
        evaluate(0, model)
        start.parent.mkdir(parents=True, exist_ok=True)
        write_json(start, last, indent=None)
    t0 = time.monotonic()
    torch.manual_seed(seed)
    trainer = hero_grpo_trainer_cls()(model=model, args=args, processing_class=tok,
                                      reward_funcs=[resolved_reward], train_dataset=data,
                                      rollout_func=rollout, hero_config=hero,
                                      callbacks=[EvalEvery()])  # fmt: skip
    trainer.train()
    m = last
    result = {"variant": variant, "seed": seed, "curve": curve, "final": m,
              "train_s": round(time.monotonic() - t0, 1)}  # fmt: skip
    write_json(path, result, indent=None)
    return result


def _boot_ci(x: np.ndarray, n_boot: int, rng: np.random.Generator) -> list[float]:
    if len(x) == 0:
        return [float("nan"), float("nan")]
    means = rng.choice(x, size=(n_boot, len(x)), replace=True).mean(axis=1)
    return [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]


def table(results: list[dict], n_boot: int, seed: int = 0) -> dict[str, Any]:
    """Per variant: final held-out means with CIs over (seed, task), and paired Δ vs GRPO."""
    rng = np.random.default_rng(seed)
    by_v: dict[str, dict[str, np.ndarray]] = {}
    for r in sorted(results, key=lambda r: (r["variant"], r["seed"])):
        d = by_v.setdefault(r["variant"], {})
        for k, v in r["final"].items():
            d[k] = np.concatenate([d.get(k, np.array([])), np.array(v, dtype=float)])
    out: dict[str, Any] = {}
    base = by_v.get("grpo")
    for v, d in by_v.items():
        row: dict[str, Any] = {}
        for k, x in d.items():
            row[k] = {"mean": float(x.mean()), "ci95": _boot_ci(x, n_boot, rng)}
            if base is not None and v != "grpo" and len(base[k]) == len(x):
                diff = x - base[k]
                row[k]["delta_vs_grpo"] = {"mean": float(diff.mean()),
                                           "ci95": _boot_ci(diff, n_boot, rng)}  # fmt: skip
        out[v] = row
    return out


def run_hero_lab(out: str | Path, cfg: HeroLabConfig, backend: Backend, progress=print) -> dict:
    out = Path(out)
    train, held = family(out, cfg.policy)
    progress(f"tasks: {len(train)} train, {len(held)} held-out")
    eps = corpus(out, train, backend)
    progress(f"corpus: {len(eps)} scripted episodes")
    _, _, sft_info = sft_policy(out, eps, cfg.policy)
    progress(f"sft: {sft_info['params']:,} parameters, loss {sft_info['loss_first']} → "
             f"{sft_info['loss_last']}")  # fmt: skip
    results = []
    for variant in cfg.variants:
        for seed in cfg.seeds:
            progress(f"rl: {variant} seed {seed}")
            results.append(train_variant(out, cfg, variant, seed, train, held, backend))
    doc = {
        "format": FORMAT,
        "producer": {**producer(run_hero_lab, **asdict(cfg)), "caveat": CAVEAT},
        "sft": sft_info,
        "table": table(results, cfg.n_boot),
        "runs": [{k: r[k] for k in ("variant", "seed", "curve", "train_s")} for r in results],
    }
    write_json(out / "hero_lab.json", doc, default=str)
    return doc
