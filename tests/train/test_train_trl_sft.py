"""SFT through TRL's SFTTrainer on a tiny Llama built here: the loss sees only supervised tokens
(changing the target of a masked token changes nothing; changing a supervised one does), and a
few steps lower the supervised loss. The paper's Table 8 values are the config defaults."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from agentpost.sft.rows import IGNORE, make_row, tokenize_row  # noqa: E402
from agentpost.train.tiny import char_chat_tokenizer, tiny_llama  # noqa: E402
from agentpost.train.trl_sft import SFTDefaults, masked_loss, sft_config, train_sft  # noqa: E402


def rows(tail: str = "later note"):
    """Student prefix (masked), teacher turns (trained), then an untrained trailing message."""
    msgs = [
        {"role": "system", "content": "shell agent"},
        {"role": "user", "content": "make hello.txt say hi"},
        {"role": "assistant", "content": "echo hi > hello.txt"},
        {"role": "tool", "content": "exit_code: 0"},
        {"role": "assistant", "content": "cat hello.txt"},
        {"role": "tool", "content": "hi"},
        {"role": "assistant", "content": "verified, done"},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": tail},
    ]
    row = make_row(msgs, train_from=4)
    row.messages[-1]["train"] = False  # a masked assistant message after the targets
    return [row]


def trainer_loss(model, tok, row) -> float:
    """The loss TRL's own collator and compute_loss give for one row."""
    from trl import SFTTrainer

    from agentpost.train.trl_sft import sft_dataset

    ds, _, _ = sft_dataset([row], tok, SFTDefaults(max_length=4096))
    cfg = sft_config("/tmp/unused-sft", activation_checkpointing=False, use_cpu=True)
    tr = SFTTrainer(model=model, args=cfg, train_dataset=ds, processing_class=tok)
    batch = tr.data_collator([ds[0]])
    model.eval()
    with torch.no_grad():
        return float(tr.compute_loss(model, batch))


def test_table8_defaults():
    d = SFTDefaults()
    assert (d.num_train_epochs, d.learning_rate, d.lr_scheduler_type, d.warmup_ratio) == (
        3.0, 1e-5, "cosine", 0.03)  # fmt: skip
    assert (d.max_length, d.per_device_train_batch_size, d.gradient_accumulation_steps) == (
        32_768, 1, 8)  # fmt: skip
    assert (d.weight_decay, d.max_grad_norm, d.gradient_checkpointing) == (0.01, 1.0, True)
    assert cfg_checkpointing() is True
    cfg = sft_config("/tmp/x")
    assert cfg.learning_rate == 1e-5 and cfg.gradient_accumulation_steps == 8
    assert (
        cfg.max_length == 32_768
        and cfg.warmup_steps == 0.03
        and cfg.lr_scheduler_type.value == "cosine"
    )


def cfg_checkpointing():
    return sft_config("/tmp/x").activation_checkpointing


def test_masked_targets_do_not_reach_the_loss():
    tok = char_chat_tokenizer()
    model = tiny_llama(len(tok))
    base = rows()[0]
    t = tokenize_row(base, tok, max_length=4096, supervise_reasoning=True)
    assert t.labels[-1] == IGNORE  # the trailing message is masked
    a = trainer_loss(model, tok, base)
    assert a == pytest.approx(masked_loss(model, t.input_ids, t.labels), rel=1e-6)
    # a different masked target (the trailing message is the target of positions before it)
    assert trainer_loss(model, tok, rows("something else entirely")[0]) == a
    # a different supervised target changes the loss
    changed = rows()[0]
    changed.messages[6]["content"] = "verified, dome"
    assert trainer_loss(model, tok, changed) != a


def test_a_few_steps_lower_the_supervised_loss(tmp_path):
    tok = char_chat_tokenizer()
    model = tiny_llama(len(tok))
    row = rows()[0]
    t = tokenize_row(row, tok, max_length=4096, supervise_reasoning=True)
    before = masked_loss(model, t.input_ids, t.labels)
    run = train_sft(
        rows() * 4, model, tok, tmp_path / "out", SFTDefaults(max_length=4096),
        max_steps=12, learning_rate=3e-3, gradient_accumulation_steps=1,
        activation_checkpointing=False, warmup_ratio=0.0, use_cpu=True,
    )  # fmt: skip
    model.eval()
    after = masked_loss(model, t.input_ids, t.labels)
    assert after < before - 0.3, (before, after)
    assert (
        run.rows == 4
        and run.dropped == {}
        and run.supervised_tokens == 4 * sum(1 for x in t.labels if x != IGNORE)
    )
    assert len(run.log) == 12 and (tmp_path / "out" / "config.json").exists()
