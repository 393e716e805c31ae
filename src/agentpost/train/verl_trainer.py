"""verl v1 trainer whose advantage step receives HERO's inputs (``trainer.v1.trainer_mode=
agentpost_hero``).

Why a subclass: verl 0.9.1's v1 ``PPOTrainer._compute_advantage`` fetches a fixed list of fields
from the TransferQueue (``uid``, ``response_mask``, ``rm_scores``, log-probs, values) before it
calls the estimator, so a registered ``hero`` estimator (``verl_hero``) never sees a turn entropy
or a token count and raises even on a GPU; the ``compute_advantage`` hook of ``verl_hero`` only
reaches the legacy trainer. ``HeroPPOTrainer`` (a ``PPOTrainerSync``) overrides that one step for
``algorithm.adv_estimator=hero`` (any other estimator runs verl's own step) and fetches, besides
verl's fields:

- ``hero_token_entropy`` (per response token, the mean renormalised top-k entropy of spec b.6,
  put there by ``verl_agent_loop.HeroShellAgentLoop`` when its server returned top-k log-probs),
  else, per rollout whose row carries NaN, verl's own ``entropy`` (full-vocabulary entropy of the
  actor's old-log-prob pass, which the v1 trainer writes to the queue just before; a documented
  departure from the paper's top-10 entropy);
- ``hero_total_tokens`` (C_i, Σ context + generated tokens over the rollout's calls), else the
  response length;
- the group ids (``uid``) and the turn spans (maximal runs of ``response_mask``), as before.

It then computes ``verl_hero.compute_hero_advantage`` and writes ``advantages`` and ``returns``
back as the stock step does (KL-in-reward and rollout correction as in verl's step, checked
against verl 0.9.1's ``trainer_base.py``). ``register()`` registers the class with verl's trainer registry; Ray
workers get it through ``verl_main.worker_setup``.

Layer: edges.
"""

from __future__ import annotations

import functools
from typing import Any

TRAINER_MODE = "agentpost_hero"
HERO_KEYS = ("hero_token_entropy", "hero_total_tokens")


def hero_inputs(data: Any, response_mask: Any) -> tuple[Any, Any]:
    """(token entropy [bs, L], total tokens [bs]) from a padded batch: the agent loop's
    ``hero_token_entropy`` where defined, verl's ``entropy`` for rows that carry NaN (or when
    the agent loop sent none); ``hero_total_tokens`` or the response length."""
    import torch

    keys = set(data.keys())
    mask = response_mask.float()
    ent = data["hero_token_entropy"].float() if "hero_token_entropy" in keys else None
    if ent is None or bool(torch.isnan(ent * mask).any()):
        if "entropy" not in keys:
            raise ValueError("HERO needs hero_token_entropy from the agent loop or verl's "
                             "entropy from the old-log-prob pass; neither reached the batch")  # fmt: skip
        fallback = data["entropy"].float()
        if ent is None:
            ent = fallback
        else:
            bad = torch.isnan(ent * mask).any(dim=-1, keepdim=True)
            ent = torch.where(bad, fallback, ent)
    ent = torch.nan_to_num(ent * mask)
    if "hero_total_tokens" in keys:
        total = data["hero_total_tokens"].float().reshape(len(mask), -1)[:, 0]
    else:
        total = mask.sum(-1)
    return ent, total


@functools.cache
def trainer_cls() -> type:
    import numpy as np
    import transfer_queue as tq
    from tensordict import TensorDict
    from verl.protocol import DataProto
    from verl.trainer.ppo.ray_trainer import apply_kl_penalty
    from verl.trainer.ppo.rollout_corr_helper import compute_rollout_correction_and_add_to_batch
    from verl.trainer.ppo.v1 import PPOTrainerSync
    from verl.workers.utils.padding import response_to_nested

    from agentpost.train.verl_hero import compute_hero_advantage, hero_from_env

    class HeroPPOTrainer(PPOTrainerSync):
        """``PPOTrainerSync`` with HERO's inputs fetched for the advantage step."""

        def _compute_advantage(self, batch: Any, metrics: dict) -> Any:
            """verl 0.9.1's v1 step (KL-in-reward, rollout correction, write-back) with the
            estimator replaced by HERO fed from the extra fields."""
            algo = self.config.algorithm
            if str(getattr(algo.adv_estimator, "value", algo.adv_estimator)) != "hero":
                return super()._compute_advantage(batch, metrics)
            fields = ["uid", "response_mask", "rm_scores", "rollout_log_probs", "old_log_probs",
                      "ref_log_prob", "values", "entropy", *HERO_KEYS]  # fmt: skip
            data = tq.kv_batch_get(
                keys=batch.keys, partition_id=batch.partition_id, select_fields=fields
            )  # absent fields are left out
            nested_mask = data["response_mask"]
            data = DataProto(batch=data.to_padded_tensor())
            data.batch["token_level_scores"] = data.batch["rm_scores"]
            uid = np.array(data.batch.pop("uid").tolist(), dtype=object)
            data.non_tensor_batch["uid"] = uid
            if algo.use_kl_in_reward:
                data, kl_metrics = apply_kl_penalty(data, kl_ctrl=self.kl_ctrl_in_reward,
                                                    kl_penalty=algo.kl_penalty)  # fmt: skip
                metrics.update(kl_metrics)
            else:
                data.batch["token_level_rewards"] = data.batch["token_level_scores"]
            corr = algo.get("rollout_correction", None)
            bypass = corr and corr.get("bypass_mode", False)
            correction = corr is not None and "rollout_log_probs" in data.batch and not bypass
            if correction:
                data, is_metrics = compute_rollout_correction_and_add_to_batch(data, corr)
                metrics.update(is_metrics)
            mask = data.batch["response_mask"]
            ent, total = hero_inputs(data.batch, mask)
            adv, ret = compute_hero_advantage(data.batch["token_level_rewards"], mask, index=uid,
                                              config=algo, hero_token_entropy=ent,
                                              hero_total_tokens=total,
                                              hero=hero_from_env())  # fmt: skip
            data.batch["advantages"], data.batch["returns"] = adv, ret
            metrics["hero/mean_total_tokens"] = float(total.mean())
            out_fields = ["advantages", "returns"]
            if algo.use_kl_in_reward:
                out_fields.append("token_level_rewards")
            if correction:
                out_fields.append("response_mask")
                if "rollout_is_weights" in data.batch:
                    out_fields.append("rollout_is_weights")
            out = {f: response_to_nested(data.batch[f], nested_mask) for f in out_fields}
            return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                                   fields=TensorDict(out, batch_size=len(batch)))  # fmt: skip

    return HeroPPOTrainer


def register() -> type:
    """Register ``HeroPPOTrainer`` as ``trainer.v1.trainer_mode=agentpost_hero`` (idempotent)."""
    from verl.trainer.ppo.v1 import trainer_base

    cls = trainer_cls()
    if trainer_base.TRAINER_REGISTRY.get(TRAINER_MODE) is not cls:
        trainer_base.register_trainer(TRAINER_MODE)(cls)
    return cls
