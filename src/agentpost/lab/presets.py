"""The lab's experiment sizes by name (``agentpost lab ... --scale``).

- ``smoke``: seconds on 2 cores; what CI runs (a tiny model, three tasks per split);
- ``cpu``: the experiment on this project's 2-core machine (300 train and 30 held-out tasks, a
  ~1M-parameter policy, 3 seeds, groups of 8);
- ``gpu``: the same experiments larger, for a CUDA machine (``scripts/lab-gpu.sh``): twice the
  tasks, a ~6M-parameter policy, groups of 16 (the paper's G), more steps and evaluations.

Layer: edges (it names the experiments' configs).
"""

from __future__ import annotations

from agentpost.lab.hero_lab import HeroLabConfig
from agentpost.lab.policy import PolicySize
from agentpost.lab.scvd_lab import ScvdLabConfig
from agentpost.lab.stages import PolicyConfig

TINY = PolicySize(hidden=64, layers=2, heads=2, intermediate=128, max_positions=1024)


def policy_config(scale: str) -> PolicyConfig:
    if scale == "smoke":
        # a model this small learns nothing in seconds: the SCVD smoke then builds its rows
        # from scripted parts (``ScvdLabConfig.scripted_fallback``) so its fine-tunes still run
        return PolicyConfig(n_train=3, n_heldout=3, vocab_size=400, sft_epochs=4, sft_lr=1e-2,
                            sft_batch=4, size=TINY, teacher_epochs=2, max_turns=6,
                            max_new_tokens=32, copy_epochs=2)  # fmt: skip
    if scale == "gpu":
        big = PolicySize(hidden=256, layers=6, heads=8, intermediate=768, max_positions=2048)
        return PolicyConfig(n_train=600, n_heldout=60, size=big, sft_epochs=4, teacher_epochs=4,
                            device="cuda")  # fmt: skip
    return PolicyConfig()


def hero_config(scale: str) -> HeroLabConfig:
    pol = policy_config(scale)
    if scale == "smoke":
        return HeroLabConfig(policy=pol, variants=("grpo", "hero"), seeds=(0,), steps=1,
                             prompts_per_step=2, group=2, eval_every=1, eval_samples=1,
                             preflight_group=2, n_boot=50, workers=1)  # fmt: skip
    if scale == "gpu":
        return HeroLabConfig(policy=pol, steps=30, prompts_per_step=8, group=16, eval_every=10,
                             eval_samples=8, workers=4)  # fmt: skip
    return HeroLabConfig(policy=pol)


def scvd_config(scale: str) -> ScvdLabConfig:
    pol = policy_config(scale)
    if scale == "smoke":
        return ScvdLabConfig(policy=pol, rollouts_per_task=2, ftd_samples=2, teacher_turns=3,
                             seeds=(0,), eval_samples=1, epochs=3.0, lr=5e-3, batch=2,
                             n_boot=50, scripted_fallback=True, token_tol=0.25)  # fmt: skip
    if scale == "gpu":
        return ScvdLabConfig(policy=pol, rollouts_per_task=2, eval_samples=8)
    return ScvdLabConfig(policy=pol)
