"""HERO reaches verl's Ray workers: with ``verl_main.runtime_env`` the estimator, its inputs and
its hyperparameters are live in a worker process (where verl 0.9.1 runs ``fit``); without it,
``hero`` is an unknown estimator there. Runs in the verl venv (``scripts/verl-check.sh``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("verl", reason="verl has its own venv (scripts/verl-check.sh)")
ray = pytest.importorskip("ray")

from agentpost.hero.config import HeroConfig  # noqa: E402
from agentpost.train.verl_hero import compute_hero_advantage  # noqa: E402
from agentpost.train.verl_main import HERO_ENV, SETUP_HOOK, runtime_env  # noqa: E402

pytestmark = pytest.mark.timeout(600)


def _batch(seed: int = 3, n: int = 8, length: int = 24):
    rng = np.random.default_rng(seed)
    mask = (rng.random((n, length)) < 0.7).astype(np.int64)
    mask[:, 0] = 1
    rewards = np.zeros((n, length), dtype=np.float32)
    rewards[np.arange(n), length - 1] = (rng.random(n) < 0.6).astype(np.float32)
    ent = rng.gamma(2.0, 0.3, (n, length))
    index = np.array([f"uid-{i // 4}" for i in range(n)], dtype=object)
    total = rng.integers(1000, 50_000, n).astype(np.float64)
    return rewards, mask, index, ent, total


def _advantages_in_worker(rewards, mask, index, ent, total):
    """What verl's fit does in its TaskRunner actor: ``compute_advantage`` on the batch."""
    from verl import DataProto
    from verl.trainer.ppo import core_algos, ray_trainer

    data = DataProto.from_dict(
        tensors={
            "token_level_rewards": torch.tensor(rewards),
            "response_mask": torch.tensor(mask),
            "hero_token_entropy": torch.tensor(ent),
            "hero_total_tokens": torch.tensor(total),
        },
        non_tensors={"uid": index},
    )
    out = ray_trainer.compute_advantage(data, adv_estimator="hero", config=None)
    return out.batch["advantages"].numpy(), "hero" in core_algos.ADV_ESTIMATOR_REGISTRY, os.getpid()


def test_runtime_env_carries_the_hook_and_hyperparameters():
    env = runtime_env({"tau": 0.5}, base={"env_vars": {"TOKENIZERS_PARALLELISM": "true"}})
    assert env["worker_process_setup_hook"] == SETUP_HOOK
    assert env["env_vars"] == {"TOKENIZERS_PARALLELISM": "true", HERO_ENV: '{"tau": 0.5}'}


def test_hero_estimator_and_inputs_reach_a_ray_worker():
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    hero = {"tau": 0.1, "lam": 0.9}  # gates these groups open: the result depends on it
    ray.init(num_cpus=1, include_dashboard=False, runtime_env=runtime_env(hero))
    try:
        rewards, mask, index, ent, total = _batch()
        adv, registered, pid = ray.get(
            ray.remote(_advantages_in_worker).remote(rewards, mask, index, ent, total)
        )
    finally:
        ray.shutdown()
    expected, _ = compute_hero_advantage(
        torch.tensor(rewards),
        torch.tensor(mask),
        index,
        hero_token_entropy=torch.tensor(ent),
        hero_total_tokens=torch.tensor(total),
        hero=HeroConfig(**hero),
    )
    assert registered and pid != os.getpid()
    assert np.allclose(adv, expected.numpy(), atol=1e-6)
    default, _ = compute_hero_advantage(
        torch.tensor(rewards),
        torch.tensor(mask),
        index,
        hero_token_entropy=torch.tensor(ent),
        hero_total_tokens=torch.tensor(total),
    )
    assert not np.allclose(adv, default.numpy())  # the worker used the hyperparameters sent


def test_without_the_hook_a_worker_does_not_know_hero():
    script = textwrap.dedent(
        """
        import ray
        from agentpost.train import verl_hero  # noqa: F401 (the driver imports the adapter)
        verl_hero.register()  # ... and registers it: only in the driver

        @ray.remote
        def lookup():
            from verl.trainer.ppo import core_algos
            try:
                core_algos.get_adv_estimator_fn("hero")
                return "known"
            except ValueError as e:
                return "unknown: " + str(e)[:60]

        ray.init(num_cpus=1, include_dashboard=False)
        print(ray.get(lookup.remote()))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert out.stdout.strip().startswith("unknown"), out.stdout + out.stderr[-2000:]
