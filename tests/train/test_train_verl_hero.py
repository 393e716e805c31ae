"""verl adapter: the `hero` estimator equals the pure function; registry test when verl imports."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agentpost.hero.advantage import hero_advantages, make_batch, token_advantages  # noqa: E402
from agentpost.hero.config import HeroConfig  # noqa: E402
from agentpost.train.verl_hero import compute_hero_advantage, mask_runs  # noqa: E402


def verl_batch(seed: int = 0, groups: int = 3, size: int = 4, length: int = 40):
    rng = np.random.default_rng(seed)
    n = groups * size
    mask = np.zeros((n, length), dtype=np.int64)
    for i in range(n):
        pos = 0
        while pos < length - 4:
            gen, obs = int(rng.integers(1, 6)), int(rng.integers(1, 5))
            mask[i, pos : pos + gen] = 1
            pos += gen + obs
    rewards = np.zeros((n, length))
    resolved = rng.random(n) < 0.75
    last = np.array([np.flatnonzero(m)[-1] for m in mask])
    rewards[np.arange(n), last] = resolved.astype(float)
    ent = rng.gamma(2.0, 0.3, (n, length))
    index = np.array([f"uid-{i // size}" for i in range(n)], dtype=object)
    total = rng.integers(1000, 100_000, n).astype(np.float64)
    return rewards, mask, index, ent, total, resolved


def test_mask_runs():
    assert mask_runs(np.array([0, 1, 1, 0, 1, 0, 0, 1])) == [(1, 3), (4, 5), (7, 8)]
    assert mask_runs(np.zeros(3)) == []


def test_hero_estimator_equals_the_pure_function():
    rewards, mask, index, ent, total, resolved = verl_batch()
    hero = HeroConfig(tau=0.5, lam=0.4)
    adv, ret = compute_hero_advantage(
        torch.tensor(rewards, dtype=torch.float32),
        torch.tensor(mask),
        index,
        config={"hero": {"tau": 0.5, "lam": 0.4}},
        hero_token_entropy=torch.tensor(ent),
        hero_total_tokens=torch.tensor(total),
    )
    turns = [
        [(float(ent[i, s:e].mean()), s, e) for s, e in mask_runs(mask[i])] for i in range(len(mask))
    ]
    batch = make_batch(list(index), list(resolved), list(total), turns, response_len=mask.shape[1])
    expected, tmask = token_advantages(batch, hero_advantages(batch, **hero.kwargs()).turn)
    assert adv.shape == (len(mask), mask.shape[1]) and adv.dtype == torch.float32
    assert np.allclose(adv.numpy(), expected, atol=1e-6)
    assert np.array_equal(tmask, mask.astype(bool)) and torch.equal(adv, ret)
    assert np.all(adv.numpy()[mask == 0] == 0)


def test_hero_estimator_needs_entropy():
    rewards, mask, index, *_ = verl_batch()
    with pytest.raises(ValueError, match="hero_token_entropy"):
        compute_hero_advantage(torch.tensor(rewards), torch.tensor(mask), index)


def test_registered_in_verl_when_it_imports():
    pytest.importorskip(
        "verl", reason="verl is an optional extra with its own venv (see verl_hero)"
    )
    from verl.trainer.ppo import core_algos

    from agentpost.train.verl_hero import register

    fn = register()
    assert core_algos.get_adv_estimator_fn("hero") is fn is compute_hero_advantage
    rewards, mask, index, ent, total, _ = verl_batch(1)
    adv, _ = fn(
        token_level_rewards=torch.tensor(rewards),
        response_mask=torch.tensor(mask),
        index=index,
        config=None,
        hero_token_entropy=torch.tensor(ent),
        hero_total_tokens=torch.tensor(total),
    )
    assert adv.shape == rewards.shape


def test_verl_compute_advantage_hook_reads_hero_tensors_from_the_batch(monkeypatch):
    pytest.importorskip(
        "verl", reason="verl is an optional extra with its own venv (see verl_hero)"
    )
    try:
        from verl import DataProto
        from verl.trainer.ppo import ray_trainer
    except ImportError as e:  # verl's trainer pulls in serving deps some installs lack
        pytest.skip(f"verl.trainer.ppo.ray_trainer does not import: {e}")
    from agentpost.train.verl_hero import install_compute_advantage_hook

    # a verl module that did `from ...ray_trainer import compute_advantage` before the hook (as
    # verl.trainer.ppo.v1.utils does; importing that one needs verl's transfer_queue extra)
    probe = types.ModuleType("verl.agentpost_probe")
    probe.compute_advantage = ray_trainer.compute_advantage
    monkeypatch.setitem(sys.modules, probe.__name__, probe)
    rewards, mask, index, ent, total, resolved = verl_batch(2)
    hero = HeroConfig(tau=0.5, lam=0.4)
    install_compute_advantage_hook(hero)
    install_compute_advantage_hook(hero)  # idempotent: wraps verl's original once
    hook = ray_trainer.compute_advantage
    assert hook._agentpost_original.__module__ == "verl.trainer.ppo.ray_trainer"
    assert probe.compute_advantage is hook  # re-pointed, not left on the original
    data = DataProto.from_dict(
        tensors={
            "token_level_rewards": torch.tensor(rewards, dtype=torch.float32),
            "response_mask": torch.tensor(mask),
            "hero_token_entropy": torch.tensor(ent),
            "hero_total_tokens": torch.tensor(total),
        },
        non_tensors={"uid": index},
    )
    out = ray_trainer.compute_advantage(data, adv_estimator="hero", config=None)
    expected, _ = compute_hero_advantage(
        torch.tensor(rewards, dtype=torch.float32),
        torch.tensor(mask),
        index,
        hero_token_entropy=torch.tensor(ent),
        hero_total_tokens=torch.tensor(total),
        hero=hero,
    )
    assert torch.allclose(out.batch["advantages"], expected)
    grpo = ray_trainer.compute_advantage(data, adv_estimator="grpo")  # others untouched
    assert grpo.batch["advantages"].shape == rewards.shape


def test_hero_config_from_the_algorithm_config():
    from agentpost.train.verl_hero import _config_from

    assert _config_from(None) == HeroConfig()
    assert _config_from({"hero": {"tau": 0.8, "lam": 0.1}}) == HeroConfig(tau=0.8, lam=0.1)
    with pytest.raises(ValueError, match=r"algorithm.hero: unknown keys \['tua'\]"):
        _config_from({"hero": {"tua": 0.8}})


def test_hero_config_from_verl_omegaconf_node():
    omegaconf = pytest.importorskip("omegaconf", reason="verl's config type; comes with verl")
    from agentpost.train.verl_hero import _config_from

    node = omegaconf.OmegaConf.create({"gamma": 1.0, "hero": {"tau": 0.8, "lam": 0.1}})
    assert _config_from(node) == HeroConfig(tau=0.8, lam=0.1)
