"""HERO vs GRPO in the lab: RL from the same SFT checkpoint through the TRL adapter.

``lab_rollout_func`` is a TRL ``rollout_func`` for the lab transcript: each prompt is a lab task
id; all rollouts of a step (every prompt × its group) decode together in one batch
(``lab.sampling.rollouts``, KV cache), each in its own ``LabEnv`` (real sandboxes behind the
memo, the task's hidden evaluator); it returns the fields ``train.trl_hero.hero_grpo_trainer_cls``
reads (prompt and completion ids, observation mask, log-probs, HERO turn spans with mean top-k
entropy, C_i and resolution). Every variant (GRPO = ``lam 0``, HERO, the b.11 ablations) runs
through that one trainer with a different ``HeroConfig``, so they differ in the advantage only.
Sampling is seeded per step (``seed``, global step), so two variants draw their first step's
rollouts identically.

Departure from the paper: micro scale (a ~1M-parameter policy, a few dozen steps), so results
show directions, not the paper's numbers.

Layer: edges.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.episodes import Episode
from agentpost.lab.sampling import rollouts
from agentpost.sandbox.base import Backend
from agentpost.tasks.model import Task
from agentpost.train.trl_hero import rollout_batch


def lab_rollout_func(
    tasks: dict[str, Task],
    backend: Backend,
    *,
    max_turns: int,
    max_new_tokens: int,
    seed: int = 0,
    memo: Memo | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> Callable[[list, Any], dict]:
    """A TRL ``rollout_func`` over lab tasks (prompts are task ids)."""
    import torch

    def run(prompts: list, trainer: Any) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        tok = trainer.processing_class
        gen = torch.Generator().manual_seed(seed * 100_003 + trainer.state.global_step)
        envs = [LabEnv(tasks[p], backend, memo) for p in prompts]
        try:
            done = rollouts(model, tok, envs, "lab/policy", max_turns=max_turns,
                            max_new_tokens=max_new_tokens, temperature=1.0,
                            generator=gen)  # fmt: skip
        finally:
            for e in envs:
                e.close()
        if on_episode:
            for ep, _ in done:
                on_episode(ep)
        out = rollout_batch([s for _, s in done])
        run.history.append(out)
        return out

    run.history = []
    return run
