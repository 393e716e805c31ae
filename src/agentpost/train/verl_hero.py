"""verl adapter: ``hero`` as a registered advantage estimator (``algorithm.adv_estimator=hero``).

verl calls a registered estimator with ``token_level_rewards[bs, L]``, ``response_mask[bs, L]``,
``index[bs]`` (the group uid) and ``config`` (``AlgoConfig``); nothing else. HERO needs three
more things, which the adapter takes as follows:

- **turn spans**: from ``response_mask``. verl's multi-turn agent loop sets the mask to 0 on
  tool/observation tokens, so each maximal run of 1s is one assistant turn (``mask_runs``).
- **turn entropy** h: ``hero_token_entropy[bs, L]``, the per-token top-k entropy (spec b.6)
  captured at rollout time (``logprobs=10`` from vLLM/SGLang, reduced with
  ``agentpost.hero.entropy.token_entropy``) and put into ``batch``; h of a turn is its mean
  over the turn's tokens. Fallback: ``entropys`` (full-vocabulary entropy from the actor's
  log-prob pass), a departure from the paper's top-10 entropy; stock verl 0.9.1 computes it but
  pops it from the batch before ``compute_advantage`` (``ray_trainer.fit``), so the fallback only
  applies to a trainer that keeps it. Without either tensor the estimator raises, naming
  ``hero_token_entropy``.
- **C_i**: ``hero_total_tokens[bs]`` (Σ prompt + completion tokens over the rollout's calls).
  Fallback: ``response_mask.sum(-1)``, which misses the re-read context (documented departure).

Resolved y_i = ``token_level_rewards.sum(-1) > 0.5`` (the reward is the resolution flag).
Departure from spec b.7: an estimator cannot drop rows, so an all-zero group (p = 0) stays in
verl's token-mean denominator (the TRL adapter drops it).
Hyperparameters: the hook's ``hero`` argument, else ``config.hero`` (a dict of ``HeroConfig``
fields) when the algorithm config has one, else the ``HeroConfig`` defaults.

The v1 trainer (verl's default) fetches a fixed field list before its advantage step, so there
the estimator is reached through ``verl_trainer.HeroPPOTrainer`` (``trainer.v1.trainer_mode=
agentpost_hero``), fed by the ``agentpost_shell`` agent loop (``verl_agent_loop``).
For the legacy trainer: because stock verl passes only the four standard arguments (``token_level_rewards``,
``response_mask``, ``config``, ``index``; checked against verl 0.9.1 ``compute_advantage``),
``install_compute_advantage_hook`` wraps ``verl.trainer.ppo.ray_trainer.compute_advantage`` so
that, for ``adv_estimator == "hero"``, the extra tensors are read from ``data.batch`` and handed
over as keyword arguments. ``RayPPOTrainer.fit`` looks the function up in that module at call
time; modules that imported it by name earlier (``verl.trainer.ppo.v1.utils``, the experimental
trainers) are re-pointed too.
Environment: verl pins an older transformers than the TRL extra (verl 0.9.1 brought 5.10.4 where
``train`` runs 5.24), so it gets its own venv; checked on CPU with verl 0.9.1::

    python3.11 -m venv .venv-verl
    .venv-verl/bin/pip install torch==2.13.0 verl cachetools uvicorn fastapi
    .venv-verl/bin/pip install --no-deps -e . && .venv-verl/bin/pip install pytest
    .venv-verl/bin/python -m pytest tests/train/test_train_verl_hero.py

(``ray_trainer`` imports ``cachetools``/``uvicorn``/``fastapi`` that verl's wheel does not
declare.) In the main venv the verl tests skip with a reason.

Reaching verl's workers: ``fit`` runs in a Ray actor, so launch through
``agentpost.train.verl_main`` (or pass its ``runtime_env()`` to ``ray.init``): Ray then runs
``verl_main.worker_setup`` in every worker process, which registers ``hero`` and installs the
hook there.

Layer: edges.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

from agentpost.hero.advantage import hero_advantages, make_batch, token_advantages
from agentpost.hero.config import HeroConfig


def mask_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of 1s in ``mask[L]`` as half-open spans."""
    m = np.concatenate([[0], (np.asarray(mask) > 0).astype(np.int8), [0]])
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))


def hero_from_tensors(
    token_level_rewards: Any,
    response_mask: Any,
    index: Any,
    *,
    token_entropy: Any,
    total_tokens: Any = None,
    hero: HeroConfig | None = None,
) -> np.ndarray:
    """[bs, L] HERO advantages from verl-shaped inputs (tensors or arrays)."""

    def arr(x: Any) -> np.ndarray:
        return x.detach().float().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)

    mask, ent = arr(response_mask), arr(token_entropy)
    y = arr(token_level_rewards).sum(-1) > 0.5
    tokens = arr(total_tokens) if total_tokens is not None else mask.sum(-1)
    turns = []
    for i in range(mask.shape[0]):
        turns.append([(float(ent[i, s:e].mean()), s, e) for s, e in mask_runs(mask[i])])
    groups = [str(g) for g in np.asarray(index).tolist()]
    batch = make_batch(
        groups, y.tolist(), tokens.astype(float).tolist(), turns, response_len=mask.shape[1]
    )
    res = hero_advantages(batch, **(hero or HeroConfig()).kwargs())
    return token_advantages(batch, res.turn)[0]


def _config_from(config: Any) -> HeroConfig:
    """``config.hero`` (a dict, an OmegaConf node or an ``AlgoConfig`` extra) as a HeroConfig."""
    extra = None
    if config is not None:
        extra = (
            config.get("hero", None) if hasattr(config, "get") else getattr(config, "hero", None)
        )
    if not extra:
        return HeroConfig()
    fields = HeroConfig.__dataclass_fields__
    unknown = sorted(set(dict(extra)) - set(fields))
    if unknown:
        raise ValueError(f"algorithm.hero: unknown keys {unknown}; known: {', '.join(fields)}")
    return HeroConfig(**dict(extra))


def compute_hero_advantage(
    token_level_rewards: Any,
    response_mask: Any,
    index: Any = None,
    config: Any = None,
    hero_token_entropy: Any = None,
    hero_total_tokens: Any = None,
    entropys: Any = None,
    hero: HeroConfig | None = None,
    **_: Any,
) -> tuple[Any, Any]:
    """The estimator verl calls: returns ``(advantages, returns)``, both [bs, L] tensors."""
    import torch

    ent = hero_token_entropy if hero_token_entropy is not None else entropys
    if ent is None:
        raise ValueError(
            "hero estimator needs hero_token_entropy (or entropys) [bs, L]; "
            "see agentpost.train.verl_hero"
        )
    if index is None:
        raise ValueError("hero estimator needs the group index (non_tensor_batch['uid'])")
    adv = hero_from_tensors(
        token_level_rewards,
        response_mask,
        index,
        token_entropy=ent,
        total_tokens=hero_total_tokens,
        hero=hero or _config_from(config),
    )
    out = torch.as_tensor(adv, dtype=token_level_rewards.dtype, device=token_level_rewards.device)
    return out, out


def register() -> Any:
    """Register ``hero`` with verl's estimator registry (idempotent); returns the function."""
    from verl.trainer.ppo import core_algos

    if core_algos.ADV_ESTIMATOR_REGISTRY.get("hero") is not compute_hero_advantage:
        core_algos.register_adv_est("hero")(compute_hero_advantage)
    return core_algos.get_adv_estimator_fn("hero")


def install_compute_advantage_hook(hero: HeroConfig | None = None) -> None:
    """Make verl's ``compute_advantage`` hand ``hero_token_entropy``/``hero_total_tokens`` from
    ``data.batch`` to the ``hero`` estimator (other estimators are untouched). ``hero`` fixes the
    hyperparameters (verl's ``AlgoConfig`` has no ``hero`` field unless you add one)."""
    from verl.trainer.ppo import ray_trainer

    register()
    current = ray_trainer.compute_advantage
    original = getattr(current, "_agentpost_original", current)

    def compute_advantage(data: Any, adv_estimator: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(adv_estimator, "value", adv_estimator)
        if name != "hero":
            return original(data, adv_estimator, *args, **kwargs)
        batch = data.batch
        if "response_mask" not in batch.keys():  # as verl's own compute_advantage does
            batch["response_mask"] = ray_trainer.compute_response_mask(data)
        keys = batch.keys()
        adv, ret = compute_hero_advantage(
            batch["token_level_rewards"],
            batch["response_mask"],
            index=data.non_tensor_batch["uid"],
            config=kwargs.get("config", args[4] if len(args) > 4 else None),
            hero_token_entropy=batch["hero_token_entropy"]
            if "hero_token_entropy" in keys
            else None,
            hero_total_tokens=batch["hero_total_tokens"] if "hero_total_tokens" in keys else None,
            entropys=batch["entropys"] if "entropys" in keys else None,
            hero=hero,
        )
        batch["advantages"], batch["returns"] = adv, ret
        return data

    compute_advantage._agentpost_original = original
    ray_trainer.compute_advantage = compute_advantage
    for name, module in list(sys.modules.items()):  # modules that imported it by name
        if name.startswith("verl.") and getattr(module, "compute_advantage", None) in (
            original,
            current,
        ):
            module.compute_advantage = compute_advantage


def hero_from_env() -> HeroConfig | None:
    """The HERO hyperparameters of ``AGENTPOST_HERO_CONFIG`` (JSON of ``HeroConfig`` fields),
    or None (then ``algorithm.hero``, else the defaults)."""
    raw = os.environ.get("AGENTPOST_HERO_CONFIG")
    return HeroConfig(**json.loads(raw)) if raw else None
