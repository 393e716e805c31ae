"""Launch verl's PPO trainer with the ``hero`` estimator live in every Ray worker.

Why: verl (checked with 0.9.1) runs ``RayPPOTrainer.fit`` inside a ``TaskRunner`` Ray actor, so
``verl_hero.register()`` or ``install_compute_advantage_hook()`` in the driver never reaches the
process that computes advantages; there ``algorithm.adv_estimator=hero`` is an unknown
estimator. ``main_ppo.run_ppo`` calls ``ray.init`` only when Ray is not initialised yet, so this
entry point initialises it first, with verl's own runtime env plus a
``worker_process_setup_hook`` (``worker_setup``) that Ray runs in every worker process
it starts (the TaskRunner and the FSDP workers alike): it registers ``hero`` and installs the
``compute_advantage`` hook that hands ``hero_token_entropy`` / ``hero_total_tokens`` from the
batch to the estimator. The HERO hyperparameters travel as JSON in ``AGENTPOST_HERO_CONFIG``.

Use (in the verl venv, see ``verl_hero``)::

    python -m agentpost.train.verl_main algorithm.adv_estimator=hero <verl hydra overrides>
    AGENTPOST_HERO_CONFIG='{"alpha": 0.5}' python -m agentpost.train.verl_main ...

The inputs: ``response_mask`` gives the turn spans; ``hero_token_entropy[bs, L]`` (top-k
entropy per token, captured at rollout) must be put into the batch by the rollout (an agent loop
that returns it as an extra tensor; stock verl's ``entropys`` is popped before
``compute_advantage``), and ``hero_total_tokens[bs]`` optionally.

Layer: edges.
"""

from __future__ import annotations

import json
import os
from typing import Any

HERO_ENV = "AGENTPOST_HERO_CONFIG"
SETUP_HOOK = "agentpost.train.verl_main.worker_setup"


def runtime_env(hero: dict[str, Any] | None = None, base: dict | None = None) -> dict:
    """A Ray runtime env: ``base`` (verl's, when None) plus the HERO worker setup hook and its
    hyperparameters (``hero``: ``HeroConfig`` fields, validated in each worker)."""
    if base is None:
        try:
            from omegaconf import OmegaConf
            from verl.trainer.constants_ppo import get_ppo_ray_runtime_env

            base = OmegaConf.to_container(OmegaConf.create(get_ppo_ray_runtime_env()))
        except ImportError:
            base = {}
    env = dict(base)
    env_vars = dict(env.get("env_vars", {}))
    hero_json = json.dumps(hero) if hero is not None else os.environ.get(HERO_ENV)
    if hero_json:
        env_vars[HERO_ENV] = hero_json
    env["env_vars"] = env_vars
    env["worker_process_setup_hook"] = SETUP_HOOK
    return env


def init_ray(hero: dict[str, Any] | None = None, **ray_kwargs: Any) -> None:
    """``ray.init`` with ``runtime_env(hero)`` (a no-op when Ray already runs: then the caller
    is responsible for the hook)."""
    import ray

    if not ray.is_initialized():
        ray.init(runtime_env=runtime_env(hero), **ray_kwargs)


def worker_setup() -> None:
    """Ray ``worker_process_setup_hook``: register ``hero`` and install the
    ``compute_advantage`` hook in this worker (the legacy trainer), with the HERO
    hyperparameters of ``AGENTPOST_HERO_CONFIG`` (JSON of ``HeroConfig`` fields) when set; and
    register the v1 trainer ``agentpost_hero`` (``verl_trainer``) and the agent loop
    ``agentpost_shell`` (``verl_agent_loop``) that carry HERO's inputs to it."""
    from agentpost.train import verl_agent_loop, verl_hero, verl_trainer

    verl_hero.install_compute_advantage_hook(verl_hero.hero_from_env())
    verl_trainer.register()
    verl_agent_loop.register()


def main() -> None:
    """verl's hydra ``main_ppo.main``, with Ray initialised by ``init_ray`` first."""
    init_ray()
    from verl.trainer import main_ppo

    main_ppo.main()


if __name__ == "__main__":
    main()
