"""The TRL trainer, config and reward for SecureVibe ``rl`` (spec b.6), shared by ``hg`` (b.7).

``SecureVibeGRPOTrainer`` is ``trl.GRPOTrainer`` with one change: the group advantage is the
release's, ``security.rewards.group_advantages`` ((r − mean)/(std_ddof1 + 1e-6), one group = the
G consecutive rollouts of one prompt, as TRL's ``RepeatSampler`` and our rollout function lay them
out), computed from the graded reward ``sv_reward`` the rollout function returns, and it replaces
TRL's own (same form, ε = 1e-4) after TRL has scored the batch. TRL's PPO-clip token loss,
reducer and logging are unchanged. It keeps, per loss call, the rewards, group ids and
advantages that reached the loss (``sv_applied``), so a test can check training used ours.

Limits: one process (a group must not straddle processes), as ``trl_hero``.

Layer: edges.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from agentpost.security.rewards import group_advantages
from agentpost.train.prompt_sampler import PromptSampler


def batch_advantages(rewards: Sequence[float], group_size: int) -> list[float]:
    """``group_advantages`` over consecutive groups of ``group_size``. Shapes: [B] → [B]."""
    if group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    out: list[float] = []
    for k in range(0, len(rewards), group_size):
        out += group_advantages(rewards[k : k + group_size])
    return out


@functools.cache
def securevibe_trainer_cls() -> type:
    """``SecureVibeGRPOTrainer(GRPOTrainer)`` (module docstring); same arguments as TRL's."""
    import torch
    from trl import GRPOTrainer

    class SecureVibeGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            if self.accelerator.num_processes != 1:
                raise NotImplementedError("SecureVibe training runs in one process")
            self.sv_applied: list[dict[str, Any]] = []

        def _generate_and_score_completions(self, inputs: list[dict]) -> dict:
            out = super()._generate_and_score_completions(inputs)  # fills inputs' extra fields
            if "sv_reward" not in inputs[0]:
                raise ValueError("SecureVibeGRPOTrainer: the rollout_func gave no sv_reward; build "
                                 "it with make_security_rollout_func")  # fmt: skip
            g = self.num_generations if self.model.training else self.num_generations_eval
            rewards = [float(i["sv_reward"]) for i in inputs]
            device = out["completion_ids"].device
            out["advantages"] = torch.tensor(batch_advantages(rewards, g), device=device)
            # carried through TRL's shuffle with the rows, for the record in _compute_loss
            out["sv_rewards"] = torch.tensor(rewards, device=device)
            out["sv_group"] = torch.arange(len(rewards), device=device) // g
            return out

        def _compute_loss(self, model: Any, inputs: dict) -> Any:
            self.sv_applied.append({k: inputs[k].detach().cpu()
                                    for k in ("sv_rewards", "sv_group", "advantages")})  # fmt: skip
            return super()._compute_loss(model, inputs)

    return SecureVibeGRPOTrainer


def security_reward(completions: list, sv_reward: list[float], **_: Any) -> list[float]:
    """The TRL reward function: the graded five-level reward (or its ablation) per sample."""
    return [float(r) for r in sv_reward]


def securevibe_grpo_config(output_dir: str, **overrides: Any) -> Any:
    """A ``trl.GRPOConfig`` with spec b.6 defaults (token-level PPO-clip ε 0.2/0.28, KL 0, entropy
    bonus 1e-4, one PPO epoch, lr 1e-6 cosine, Adam (0.9, 0.98), weight decay 0.1, temperature 1, G = 4);
    the dataset order is kept (``shuffle_dataset=False``) so a deficit-ordered dataset keeps its
    mix. ``overrides`` win."""
    from trl import GRPOConfig

    base = {
        "output_dir": output_dir,
        "learning_rate": 1e-6,
        "lr_scheduler_type": "cosine",
        "adam_beta1": 0.9,
        "adam_beta2": 0.98,
        "weight_decay": 0.1,
        "beta": 0.0,
        "entropy_coef": 1e-4,
        "epsilon": 0.2,
        "epsilon_high": 0.28,
        "num_iterations": 1,
        "loss_type": "dapo",
        "scale_rewards": "group",
        "num_generations": 4,
        "temperature": 1.0,
        "top_p": 1.0,
        "shuffle_dataset": False,
        "mask_truncated_completions": False,
        "report_to": [],
        "save_strategy": "no",
    }
    return GRPOConfig(**(base | overrides))


def mixed_prompt_dataset(
    datasets: Mapping[str, Sequence[str]], n: int, weights: Mapping[str, float] | None = None,
    seed: int = 0,
) -> Any:  # fmt: skip
    """An HF ``Dataset`` of ``n`` prompt texts in deficit order over ``datasets`` (its own
    sampler: the rollout function's sampler counts these prompts when TRL hands them over)."""
    import datasets as hf

    s = PromptSampler(datasets, weights, seed)
    return hf.Dataset.from_dict({"prompt": [s.draw()[1] for _ in range(n)]})
