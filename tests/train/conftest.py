"""Tiny models for the training tests: a character-level tokenizer and a random Llama of a few
hundred thousand parameters at most, built here (no downloads)."""

from __future__ import annotations

import string

import pytest


@pytest.fixture
def char_tokenizer():
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models

    chars = list(string.printable)
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {c: i + 3 for i, c in enumerate(chars)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.decoder = decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


@pytest.fixture
def tiny_llama():
    """``tiny_llama(vocab)`` → a random LlamaForCausalLM (hidden 32, 2 layers)."""
    transformers = pytest.importorskip("transformers")

    def make(vocab: int):
        cfg = transformers.LlamaConfig(
            vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
            pad_token_id=0, eos_token_id=1, bos_token_id=None,
        )  # fmt: skip
        return transformers.LlamaForCausalLM(cfg)

    return make


WRONG_CALC = "def calculate(expression):\n    return 0\n"


@pytest.fixture
def scripted_calculator_envs(backend, tmp_path_factory):
    """``make(schedule)`` → an env factory for the ``calculator`` task: rollout n gets candidate
    ``schedule[n // G][n % G]`` written into its /app before the policy's turns (``secure`` or
    ``vulnerable`` reference, ``wrong`` = functionally wrong, ``none`` = untouched), because a
    random tiny model writes nothing useful. The policy's own turns run as a logging command
    (random text is never a shell command). Grading of the final /app is real. Two failures are
    real too: ``abort`` closes the rollout's sandbox before the policy's turns (the rollout
    fails: aborted), ``gradefail`` grades the secure candidate with a suite harness that exits
    before the candidate runs (the grader fails: aborted, a grading failure)."""
    import dataclasses
    import shlex

    from agentpost.security.suite import find_task
    from agentpost.train.securevibe_rl import SecurityTaskEnv

    task = find_task("calculator")
    broken = tmp_path_factory.mktemp("harness") / "_harness.py"
    broken.write_text("raise SystemExit(4)  # the harness fails before the candidate runs\n")
    broken_task = dataclasses.replace(task, harness=broken)

    def candidate(kind: str) -> str | None:
        if kind in ("none", "abort"):
            return None
        if kind == "gradefail":
            kind = "secure"
        text = WRONG_CALC if kind == "wrong" else (task.references[kind] / "calc.py").read_text()
        return f"cat > /app/calc.py <<'EOF_CAND'\n{text}EOF_CAND"

    def log_turn(action: str) -> str:
        return f"printf %s {shlex.quote(action)} >> /tmp/turns.txt && wc -c < /tmp/turns.txt"

    def make(schedule, group_size: int):
        def env_factory(n: int, t):
            kind = schedule[n // group_size][n % group_size]
            t = broken_task if kind == "gradefail" else t
            env = SecurityTaskEnv(t, backend=backend, command=log_turn, timeout_s=30)
            cmd = candidate(kind)
            if cmd:
                assert env.box.exec(cmd).exit_code == 0
            if kind == "abort":
                env.box.close()
            return env

        return env_factory

    make.task = task
    return make
