"""SecureVibe ``hg`` on a tiny Llama: GRPO plus β·(release's distillation surrogate) against a
hinted teacher, over graded multi-turn rollouts on a bundled security task (see
test_train_securevibe_rl for how each rollout's candidate is scripted; grading is real)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from agentpost.security.cwe import load_names  # noqa: E402
from agentpost.security.hints import hint  # noqa: E402
from agentpost.train.divergences import js_skew  # noqa: E402
from agentpost.train.hint_context import RELEASE_TEMPLATE, hint_block  # noqa: E402
from agentpost.train.hint_distill import (  # noqa: E402
    ModelTeacher,
    hint_distill_config,
    hint_distill_trainer_cls,
    pg_reduce,
)
from agentpost.train.securevibe_grpo import mixed_prompt_dataset, security_reward  # noqa: E402
from agentpost.train.securevibe_rl import (  # noqa: E402
    make_security_rollout_func,
    security_prompts,
)

G = 2
NAMES = load_names()


def l4(task) -> str:
    return hint("L4", task.cwes, task.hints, NAMES)


class FlakyTeacher:
    """A teacher whose call fails for the second sample of every batch."""

    def __init__(self, inner: ModelTeacher):
        self.inner = inner

    def score(self, queries):
        out = self.inner.score(queries)
        out[1] = None
        return out


def run(tmp_path, envs, tok, model, schedule, steps, *, hint_fn=l4, **trainer_kwargs):
    prompts = security_prompts({"secure": [envs.task]})
    rollout = make_security_rollout_func(
        prompts, envs(schedule, G), group_filter="aborted_only", max_turns=2, max_new_tokens=4,
        hint=hint_fn,
    )  # fmt: skip
    args = hint_distill_config(
        str(tmp_path), per_device_train_batch_size=2 * G, num_generations=G, max_steps=steps,
        learning_rate=5e-3, use_cpu=True, logging_steps=1, max_completion_length=256,
        disable_dropout=True, seed=0,
    )  # fmt: skip
    trainer = hint_distill_trainer_cls()(
        model=model, args=args, processing_class=tok, reward_funcs=[security_reward],
        train_dataset=mixed_prompt_dataset({"secure": list(prompts)}, 8), rollout_func=rollout,
        **trainer_kwargs,
    )  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        trainer.train()
    finally:
        torch.set_num_threads(threads)
    return trainer, rollout


SCHEDULE = [("secure", "vulnerable"), ("vulnerable", "vulnerable"), ("none", "wrong"),
            ("none", "none")]  # fmt: skip


def test_two_steps_with_the_release_defaults_frozen_teacher_and_a_failed_call(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    """Defaults: js_skew λ 0.5, the release's teacher block, per-token reduction over the step."""
    torch.manual_seed(0)
    tok, model = char_tokenizer, tiny_llama(len(char_tokenizer))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    probe = tiny_llama(len(tok))  # to build a frozen copy the flaky teacher wraps
    probe.load_state_dict(model.state_dict())
    teacher = FlakyTeacher(ModelTeacher(probe.eval()))
    trainer, rollout = run(tmp_path, scripted_calculator_envs, tok, model, SCHEDULE, 2,
                           teacher=teacher)  # fmt: skip
    task = scripted_calculator_envs.task
    h = l4(task)
    # zero-variance groups are kept under hg's filter (D still teaches); all four groups trained
    assert [g["kept"] for rec in rollout.history for g in rec["groups"]] == [True] * 4
    assert len(trainer.hg_steps) == 2
    block = tok.encode(hint_block(h, RELEASE_TEMPLATE), add_special_tokens=False)
    x = tok.encode(task.instruction, add_special_tokens=False)
    assert h not in task.instruction
    for ids, start in teacher.inner.sequences:  # x ‖ H(h) ‖ y, aligned token for token
        assert ids[:start] == x + block
    assert "Case-specific security hint:\n" + h in tok.decode(block)
    for step in trainer.hg_steps:
        ok, mask = step["teacher_ok"], step["mask"]
        assert ok.tolist().count(0.0) == 1  # the failed call, whichever row TRL shuffled it to
        s, u = step["student_logps"].double(), step["teacher_logps"].double()
        assert torch.equal(step["old_logps"], step["student_logps"])  # one epoch: on-policy
        # the term recomputed from the logged log-probs: a token sum over the samples whose
        # teacher answered, divided by every loss token of the step (the failed one's too)
        per_tok = js_skew(s, s, u, 0.5) * mask * ok[:, None]
        assert step["num_items_in_batch"] == float(mask.sum())
        assert step["distill"] == pytest.approx(float(per_tok.sum() / mask.sum()), abs=1e-6)
        assert step["loss"] == pytest.approx(step["grpo_loss"] + 1.0 * step["distill"], abs=1e-5)
        # the hint changes the teacher's log-probs of y
        assert float(((s - u) * mask * ok[:, None]).abs().max()) > 1e-3
        assert torch.all(step["teacher_logps"][~ok.bool()] == 0)
    # the teacher's log-probs are those of the initial weights on x ‖ H(h) ‖ y
    ids, start = teacher.inner.sequences[0]
    ref = tiny_llama(len(tok))
    ref.load_state_dict(before)
    with torch.no_grad():
        logp = torch.log_softmax(ref(input_ids=torch.tensor([ids])).logits[0], -1)
    u = logp[start - 1 : len(ids) - 1].gather(1, torch.tensor(ids[start:])[:, None])[:, 0]
    assert torch.allclose(torch.tensor(teacher.inner.score([_q(ids, start)])[0]), u, atol=1e-5)
    # the teacher stayed frozen, the student moved
    assert all(torch.equal(p, before[n]) for n, p in probe.named_parameters())
    assert any(not torch.equal(p.detach(), before[n]) for n, p in model.named_parameters())


def bare_trainer(tmp_path, tok, model, **kwargs):
    datasets = pytest.importorskip("datasets")
    args = hint_distill_config(str(tmp_path), per_device_train_batch_size=2, num_generations=2,
                               use_cpu=True, max_steps=1)  # fmt: skip
    return hint_distill_trainer_cls()(
        model=model, args=args, processing_class=tok, reward_funcs=[security_reward],
        train_dataset=datasets.Dataset.from_dict({"prompt": ["x"]}),
        rollout_func=lambda prompts, trainer: {}, **kwargs,
    )  # fmt: skip


def test_the_distillation_term_is_a_token_mean_like_the_policy_gradient_loss(
    tmp_path, char_tokenizer, tiny_llama
):
    """Two samples, of 2 and 6 tokens: the term weighs every token alike (the short sample counts
    2/8, not 1/2), with the same reducer TRL applies to its PPO term (checked on TRL's own loss:
    on-policy, the PPO per-token loss is −A, so per-token advantages v give −Σ v / N)."""
    torch.manual_seed(3)
    model = tiny_llama(len(char_tokenizer))
    trainer = bare_trainer(tmp_path, char_tokenizer, model)
    trainer.current_gradient_accumulation_steps = 1  # what TRL's training loop sets
    mask = torch.tensor([[1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
    v = torch.tensor([[0.3, -0.2, 0, 0, 0, 0], [1.0, 0.5, -0.4, 0.2, 0.1, -0.3]])
    inputs = {
        "prompt_ids": torch.tensor([[5, 6, 7], [8, 9, 10]]), "prompt_mask": torch.ones(2, 3),
        "completion_ids": torch.tensor([[11, 12, 0, 0, 0, 0], [13, 14, 15, 16, 17, 18]]),
        "completion_mask": mask, "advantages": v, "num_items_in_batch": torch.tensor(8.0),
        "teacher_logps": torch.full((2, 6), -2.0), "teacher_ok": torch.ones(2),
        "sv_rewards": torch.tensor([1.0, 0.5]), "sv_group": torch.tensor([0, 0]),
    }  # fmt: skip
    model.train()
    trainer._compute_loss(model, inputs)
    step = trainer.hg_steps[-1]
    assert step["grpo_loss"] == pytest.approx(float(-(v * mask).sum() / 8), rel=1e-5)
    assert float(pg_reduce(trainer, -v, mask, mask, inputs)) == pytest.approx(step["grpo_loss"])
    s = step["student_logps"].double()
    per_tok = js_skew(s, s, torch.full((2, 6), -2.0).double(), 0.5) * mask
    token_mean = float(per_tok.sum() / 8)
    sample_mean = float((per_tok.sum(-1) / mask.sum(-1)).mean())
    assert step["distill"] == pytest.approx(token_mean, rel=1e-5)
    assert abs(token_mean - sample_mean) > 1e-3  # the two weightings differ for these lengths
    # a failed teacher zeroes the sample's tokens but not the denominator
    trainer._compute_loss(model, inputs | {"teacher_ok": torch.tensor([0.0, 1.0])})
    assert trainer.hg_steps[-1]["distill"] == pytest.approx(float(per_tok[1].sum() / 8), rel=1e-5)


def _q(ids, start):
    from agentpost.train.hint_distill import TeacherQuery

    return TeacherQuery(ids[:start], [], ids[start:])


def test_opd_only_with_a_live_teacher_is_pure_distillation(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    torch.manual_seed(1)
    tok, model = char_tokenizer, tiny_llama(len(char_tokenizer))
    trainer, _ = run(tmp_path, scripted_calculator_envs, tok, model, SCHEDULE, 1,
                     teacher="live_policy", opd_only=True, divergence="k3", beta=0.5)  # fmt: skip
    assert trainer.teacher.model is trainer.accelerator.unwrap_model(trainer.model)
    (step,) = trainer.hg_steps
    assert torch.all(step["advantages"] == 0) and step["grpo_loss"] == pytest.approx(0, abs=1e-7)
    assert step["loss"] == pytest.approx(0.5 * step["distill"], rel=1e-5)
    assert torch.all(step["teacher_ok"] == 1) and step["distill"] != 0
    assert float((step["student_logps"] - step["teacher_logps"]).abs().max()) > 1e-3


def test_a_hint_that_occurs_in_the_student_prompt_is_refused(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    tok, model = char_tokenizer, tiny_llama(len(char_tokenizer))
    with pytest.raises(ValueError, match="hint occurs in the student prompt"):
        run(tmp_path, scripted_calculator_envs, tok, model, SCHEDULE, 1,
            hint_fn=lambda t: t.instruction[10:60])  # fmt: skip


def test_the_default_teacher_is_a_frozen_copy_of_the_policy(tmp_path, char_tokenizer, tiny_llama):
    model = tiny_llama(len(char_tokenizer))
    trainer = bare_trainer(tmp_path, char_tokenizer, model)
    frozen = trainer.teacher.model
    assert frozen is not model and not frozen.training
    assert all(not p.requires_grad for p in frozen.parameters())
    for (n, p), q in zip(model.named_parameters(), frozen.parameters(), strict=True):
        assert torch.equal(p, q) and p.data_ptr() != q.data_ptr(), n
    assert (trainer.hg_divergence, trainer.hg_lam, trainer.hg_template) == (
        "js_skew", 0.5, RELEASE_TEMPLATE)  # fmt: skip
    with pytest.raises(ValueError, match="divergence"):
        bare_trainer(tmp_path, char_tokenizer, model, divergence="kl")
    with pytest.raises(ValueError, match="exactly once"):
        bare_trainer(tmp_path, char_tokenizer, model, hint_template="no placeholder")
