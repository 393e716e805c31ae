"""TRL adapter: two GRPO steps with HERO advantages over multi-turn rollouts in bwrap sandboxes.

A tiny random Llama (hidden 32) and a character-level tokenizer are built here (no downloads).
Each turn's sampled text runs as a shell command in a real sandbox; outcomes are scripted per
rollout so that groups are mixed (p = 0.75 > τ, so the gate is open and HERO terms are live).
"""

from __future__ import annotations

import string

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

from agentpost.efficiency.advantage import hero_advantages, make_batch, token_advantages  # noqa: E402
from agentpost.efficiency.config import HeroConfig  # noqa: E402
from agentpost.sandbox.bwrap import BwrapBackend  # noqa: E402
from agentpost.train.trl_hero import (  # noqa: E402
    SandboxShellEnv,
    hero_grpo_config,
    hero_grpo_trainer_cls,
    make_rollout_func,
    resolved_reward,
)

G = 4


def char_tokenizer():
    from tokenizers import Tokenizer, decoders, models

    chars = list(string.printable)
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {c: i + 3 for i, c in enumerate(chars)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.decoder = decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def tiny_model(vocab: int):
    cfg = transformers.LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=None,
    )
    return transformers.LlamaForCausalLM(cfg)


@pytest.mark.skipif(not BwrapBackend().available(), reason="bubblewrap is not available")
def test_two_grpo_steps_apply_the_hero_advantage(tmp_path):
    torch.manual_seed(0)
    tok = char_tokenizer()
    assert tok.decode(tok.encode("ls -a", add_special_tokens=False)) == "ls -a"
    model = tiny_model(len(tok))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    # rollout n of each group of 4: resolved unless it is the last one (p = 0.75)
    envs = []

    def env_factory(n: int, prompt: str):
        envs.append(SandboxShellEnv(lambda env, n=n: n % G != G - 1))
        return envs[-1]

    rollout = make_rollout_func(env_factory, max_turns=3, max_new_tokens=6)
    hero = HeroConfig(lam=0.3, tau=0.6)
    args = hero_grpo_config(
        str(tmp_path),
        hero,
        per_device_train_batch_size=2 * G,
        num_generations=G,
        max_steps=2,
        learning_rate=5e-3,
        use_cpu=True,
        logging_steps=1,
        max_completion_length=64,
        disable_dropout=True,
    )
    data = datasets.Dataset.from_dict({"prompt": ["ls ", "echo ", "cat ", "pwd "]})
    trainer = hero_grpo_trainer_cls()(
        model=model,
        args=args,
        processing_class=tok,
        reward_funcs=[resolved_reward],
        train_dataset=data,
        rollout_func=rollout,
        hero_config=hero,
    )
    trainer.train()

    assert len(rollout.history) == 2 and len(trainer.hero_applied) >= 2, len(rollout.history)
    execs = sum(len(e.results) for e in envs)
    assert execs >= 2 * G, f"only {execs} sandbox execs"  # real sandbox execs, multi-turn
    assert any(len(t) > 1 for h in rollout.history for t in h["hero_turns"])
    for hist, (gen_ids, gen_adv) in zip(rollout.history, trainer.hero_generated, strict=True):
        # the pure function, recomputed here from what the rollouts recorded
        batch = make_batch(
            [i // G for i in range(len(hist["hero_turns"]))],
            hist["hero_resolved"],
            hist["hero_tokens"],
            hist["hero_turns"],
            response_len=gen_ids.size(1),
        )
        expected, mask = token_advantages(batch, hero_advantages(batch, **hero.kwargs()).turn)
        assert np.allclose(gen_adv.numpy(), expected, atol=1e-6)
        assert np.any(expected[mask] != 0), "all advantages are zero"
        # observation tokens carry no advantage and are out of TRL's loss mask
        env_mask = np.zeros_like(mask)
        for i, m in enumerate(hist["env_mask"]):
            env_mask[i, : len(m)] = m
        assert np.array_equal(mask, env_mask.astype(bool))
    # what reached the loss are rows of the generated batch (TRL may shuffle rows; two rollouts
    # can share ids, e.g. an immediate EOS, so match on ids and advantages together)
    gen_rows: dict[tuple, list] = {}
    for ids, adv in trainer.hero_generated:
        for r, a in zip(ids, adv, strict=True):
            gen_rows.setdefault(tuple(r.tolist()), []).append(a)
    for ids, adv in trainer.hero_applied:
        for r, a in zip(ids, adv, strict=True):
            cands = gen_rows.get(tuple(r.tolist()), [])
            assert any(torch.allclose(c, a) for c in cands), f"applied row not generated: {r}"
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "no parameter moved"
