"""TRL adapter: two GRPO steps with HERO advantages over multi-turn rollouts in bwrap sandboxes.

A tiny random Llama (hidden 32) and a character-level tokenizer are built here (no downloads).
Each turn's sampled text goes to a real sandbox, which appends it to a file and answers with the
file's size; outcomes are scripted per rollout so that groups are mixed (p = 0.75 > τ, so the
gate is open and HERO terms are live).

Determinism: the sampled text is never run as a shell command itself (random characters can
start background jobs whose output order races, or read the clock), so the observation fed back
to the policy is a pure function of the actions; torch runs on one thread; sampling is seeded
(torch here, TRL's ``seed`` for generation and batch shuffling). The same machine therefore
replays the same rollouts, and the checks below do not depend on which rows TRL shuffles where.
"""

from __future__ import annotations

import shlex
import string

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

from agentpost.hero.advantage import hero_advantages, make_batch, token_advantages  # noqa: E402
from agentpost.hero.config import HeroConfig  # noqa: E402
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


def rows(ids, adv) -> list[tuple]:
    return [(tuple(i.tolist()), tuple(a.tolist())) for i, a in zip(ids, adv, strict=True)]


@pytest.mark.skipif(not BwrapBackend().available(), reason="bubblewrap is not available")
def test_two_grpo_steps_apply_the_hero_advantage(tmp_path):
    torch.manual_seed(0)
    tok = char_tokenizer()
    assert tok.decode(tok.encode("ls -a", add_special_tokens=False)) == "ls -a"
    model = tiny_model(len(tok))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    # rollout n of each group of 4: resolved unless it is the last one (p = 0.75), except the
    # last group of step 2, which fails throughout (p = 0: all-zero advantages, dropped, b.7)
    envs, backend = [], BwrapBackend()

    def record(action: str) -> str:  # the sandbox's files persist across a rollout's turns
        return f"printf %s {shlex.quote(action)} >> /app/turns.txt && wc -c < /app/turns.txt"

    def env_factory(n: int, prompt: str):
        outcome = lambda env, n=n: n < 3 * G and n % G != G - 1  # noqa: E731
        envs.append(SandboxShellEnv(outcome, command=record, timeout_s=60, backend=backend))
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
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        trainer.train()
    finally:
        torch.set_num_threads(threads)

    assert len(rollout.history) == 2 and len(trainer.hero_applied) == 2, len(rollout.history)
    execs = sum(len(e.results) for e in envs)
    assert execs >= 2 * G, f"only {execs} sandbox execs"  # real sandbox execs, multi-turn
    for env in envs:  # each answer is the size of everything the rollout sent so far
        sizes = np.cumsum([len(a.encode()) for a in env.actions]).tolist()
        assert [int(r.stdout) for r in env.results] == sizes
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
    # one generation per step (steps_per_generation = 1): the loss saw exactly the generated rows,
    # in TRL's shuffled order; compare them as multisets of (ids, advantages)
    for step, ((gen_ids, gen_adv), seen) in enumerate(
        zip(trainer.hero_generated, trainer.hero_applied, strict=True)
    ):
        ids, adv, loss_mask = seen["completion_ids"], seen["advantages"], seen["loss_mask"]
        assert sorted(rows(gen_ids, gen_adv)) == sorted(rows(ids, adv))
        # the p = 0 group (step 2) left the loss and its token count; every other row is in it
        dropped = ~loss_mask.bool().any(dim=1)
        assert dropped.sum() == (G if step == 1 else 0)
        assert torch.all(adv[dropped] == 0) and torch.all(adv[~dropped].abs().sum(1) > 0)
        assert seen["num_items_in_batch"] == int(loss_mask.sum())
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "no parameter moved"
