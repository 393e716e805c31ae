"""SecureVibe ``rl``: two GRPO steps on a tiny Llama over multi-turn rollouts on a bundled
security task, rewarded by real grading in bwrap sandboxes, with dynamic sampling that drops
groups and refills the batch to size, trained with the release's group advantage.

A random tiny model writes nothing useful, so each rollout's edit of /app is scripted: the
environment factory writes a candidate (the secure or vulnerable reference, a functionally
wrong file, or nothing) into the rollout's sandbox before the policy's turns, which then run as a
harmless logging command. The reward is whatever the real grader says about that /app.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

import math  # noqa: E402

from agentpost.security.rewards import group_advantages  # noqa: E402
from agentpost.train.securevibe_grpo import (  # noqa: E402
    batch_advantages,
    mixed_prompt_dataset,
    securevibe_grpo_config,
    securevibe_trainer_cls,
    security_reward,
)
from agentpost.train.securevibe_rl import (  # noqa: E402
    AbortedGroupsLimit,
    DynamicSamplingStalled,
    backoff_delay,
    keep_group,
    make_security_rollout_func,
    security_prompts,
)

G = 2
# candidates per group, in the order groups are drawn; rewards and the b.6 decision:
SCHEDULE = [
    ("secure", "vulnerable"),  # step 1 slot 0: +1, +0.5 → kept
    ("vulnerable", "vulnerable"),  # step 1 slot 1: +0.5, +0.5 → zero variance, dropped
    ("none", "secure"),  # refill: −1, +1 → kept
    ("none", "none"),  # step 2 slot 0: −1, −1 → dropped
    ("wrong", "vulnerable"),  # refill: −0.5, +0.5 → kept
    ("wrong", "none"),  # step 2 slot 1: −0.5, −1 → no positive reward, dropped
    ("secure", "wrong"),  # refill: +1, −0.5 → kept
]


def train(tmp_path, envs, char_tokenizer, tiny_llama, schedule, max_refills=4):
    torch.manual_seed(0)
    tok = char_tokenizer
    model = tiny_llama(len(tok))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    prompts = security_prompts({"secure": [envs.task]})
    rollout = make_security_rollout_func(
        prompts, envs(schedule, G), max_turns=2, max_new_tokens=4, max_refills=max_refills
    )
    args = securevibe_grpo_config(
        str(tmp_path), per_device_train_batch_size=2 * G, num_generations=G, max_steps=2,
        learning_rate=5e-3, use_cpu=True, logging_steps=1, max_completion_length=256,
        disable_dropout=True, seed=0,
    )  # fmt: skip
    data = mixed_prompt_dataset({"secure": list(prompts)}, 8)
    trainer = securevibe_trainer_cls()(
        model=model, args=args, processing_class=tok, reward_funcs=[security_reward],
        train_dataset=data, rollout_func=rollout,
    )  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        trainer.train()
    finally:
        torch.set_num_threads(threads)
    return model, before, rollout, trainer


def test_two_steps_drop_filtered_groups_and_refill_the_batch(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    model, before, rollout, trainer = train(
        tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama, SCHEDULE
    )
    assert len(rollout.history) == 2
    groups = [g for rec in rollout.history for g in rec["groups"]]
    assert [g["rewards"] for g in groups] == [
        [1.0, 0.5], [0.5, 0.5], [-1.0, 1.0], [-1.0, -1.0], [-0.5, 0.5], [-0.5, -1.0], [1.0, -0.5],
    ]  # fmt: skip
    assert [g["reason"] for g in groups] == [
        "kept", "zero_variance", "kept", "zero_variance", "kept", "no_positive", "kept",
    ]  # fmt: skip
    assert [g["refill"] for g in groups] == [False, False, True, False, True, False, True]
    step1, step2 = rollout.history
    # every batch is back at its size (2 groups of G) and holds only kept groups
    assert [len(rec["batch"]) for rec in rollout.history] == [2, 2]
    assert [g["slot"] for g in step1["groups"] if g["kept"]] == [0, 1]
    assert [g["slot"] for g in step2["groups"] if g["kept"]] == [0, 1]
    assert groups[1]["statuses"] == ["ok", "ok"] and groups[3]["statuses"] == ["no_patch"] * 2
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "no parameter moved"
    # the loss saw the release's advantage, (r − mean)/(std_ddof1 + 1e-6), not TRL's (ε 1e-4)
    assert len(trainer.sv_applied) == 2
    for applied in trainer.sv_applied:
        rewards, group, adv = applied["sv_rewards"], applied["sv_group"], applied["advantages"]
        assert sorted(group.tolist()) == [0, 0, 1, 1]  # whole groups, rows shuffled by TRL
        for row in range(len(rewards)):
            members = rewards[group == group[row]].tolist()
            ours = group_advantages(members)[members.index(float(rewards[row]))]
            mean, std = sum(members) / len(members), float(torch.tensor(members).std())
            trls = (float(rewards[row]) - mean) / (std + 1e-4)
            assert float(adv[row]) == pytest.approx(ours, rel=1e-6, abs=1e-9)
            assert abs(ours - trls) > 1e-5  # the two formulas differ measurably here


def test_batch_advantages_are_group_advantages_over_consecutive_groups():
    r = [1.0, 0.5, -1.0, 1.0, 0.5, 0.5]
    assert batch_advantages(r, 2) == group_advantages(r[:2]) + group_advantages(r[2:4]) + [0, 0]
    a = batch_advantages([1.0, 0.5], 2)[0]
    assert a == pytest.approx(0.25 / (math.sqrt(0.125) + 1e-6), rel=1e-12)
    with pytest.raises(ValueError, match="groups of 4"):
        batch_advantages(r, 4)


def test_a_slot_that_never_fills_stops_the_run(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    never = [("none", "none")] * 8
    with pytest.raises(DynamicSamplingStalled, match="all dropped"):
        train(tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama, never, max_refills=1)


def test_group_filters_and_ablations():
    assert keep_group([0.5, 1.0], [False, False], "dynamic", "five_level") == (True, "kept")
    # binary: +0.5 and +1 both map to 1 → zero variance → dropped
    assert keep_group([0.5, 1.0], [False, False], "dynamic", "binary") == (False, "zero_variance")
    # strict binary: only +1 is positive
    assert keep_group([0.5, -1.0], [False, False], "dynamic", "strict_binary")[1] == "zero_variance"
    assert keep_group([1.0, 0.5], [False, False], "dynamic", "strict_binary") == (True, "kept")
    assert keep_group([1.0, 0.0], [False, True], "dynamic", "five_level") == (False, "aborted")
    # hg keeps zero-variance groups (D still teaches) but never an aborted one
    assert keep_group([0.5, 0.5], [False, False], "aborted_only", "five_level") == (True, "kept")
    assert keep_group([0.5, 0.5], [True, False], "aborted_only", "five_level")[0] is False
    with pytest.raises(ValueError):
        keep_group([1.0], [False], "dapo", "five_level")


def test_binary_ablation_drops_what_five_level_keeps_and_refills(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    """The rollout function called by a real (untrained) GRPOTrainer: under ``binary`` a +1/+0.5
    group has zero variance and is replaced; TRL gets the ablated rewards."""
    trl = pytest.importorskip("trl")
    tok = char_tokenizer
    prompts = security_prompts({"secure": [scripted_calculator_envs.task]})
    schedule = [("secure", "vulnerable"), ("secure", "none")]
    rollout = make_security_rollout_func(prompts, scripted_calculator_envs(schedule, G),
                                         reward_mode="binary", max_new_tokens=2)  # fmt: skip
    args = securevibe_grpo_config(str(tmp_path), per_device_train_batch_size=G,
                                  num_generations=G, use_cpu=True, max_steps=1)  # fmt: skip
    trainer = trl.GRPOTrainer(
        model=tiny_llama(len(tok)), args=args, processing_class=tok,
        reward_funcs=[security_reward], train_dataset=mixed_prompt_dataset(
            {"secure": list(prompts)}, 2), rollout_func=rollout,
    )  # fmt: skip
    out = rollout([next(iter(prompts))] * G, trainer)
    (rec,) = rollout.history
    assert [(g["rewards"], g["reason"]) for g in rec["groups"]] == [
        ([1.0, 0.5], "zero_variance"), ([1.0, -1.0], "kept")]  # fmt: skip
    assert out["sv_reward"] == [1.0, 0.0] and out["sv_raw_reward"] == [1.0, -1.0]
    assert security_reward([], out["sv_reward"]) == [1.0, 0.0]
    assert rollout.sampler.counts == {"secure": 2}  # TRL's prompt observed, one refill drawn


def call_rollout(tmp_path, tok, model, prompts, rollout):
    """One call of ``rollout`` by a real, untrained SecureVibe trainer (one slot of G)."""
    args = securevibe_grpo_config(str(tmp_path), per_device_train_batch_size=G,
                                  num_generations=G, use_cpu=True, max_steps=1)  # fmt: skip
    trainer = securevibe_trainer_cls()(
        model=model, args=args, processing_class=tok, reward_funcs=[security_reward],
        train_dataset=mixed_prompt_dataset({"secure": list(prompts)}, 2), rollout_func=rollout,
    )  # fmt: skip
    return rollout([next(iter(prompts))] * G, trainer)


def test_backoff_refill_waits_30_60_120_for_aborted_groups_and_spends_no_refills(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    assert [backoff_delay(k) for k in range(6)] == [30, 60, 120, 240, 300, 300]
    prompts = security_prompts({"secure": [scripted_calculator_envs.task]})
    schedule = [("abort", "abort"), ("abort", "abort"), ("gradefail", "gradefail"),
                ("secure", "wrong")]  # fmt: skip
    slept: list[float] = []
    rollout = make_security_rollout_func(
        prompts, scripted_calculator_envs(schedule, G), max_new_tokens=2, max_turns=1,
        refill="backoff", max_refills=0, sleep=slept.append,
    )  # fmt: skip
    out = call_rollout(tmp_path, char_tokenizer, tiny_llama(len(char_tokenizer)), prompts, rollout)
    (rec,) = rollout.history
    assert [g["reason"] for g in rec["groups"]] == ["aborted", "aborted", "aborted", "kept"]
    assert rec["groups"][2]["statuses"] == ["aborted", "aborted"]  # the grader failed: dropped
    assert slept == [30, 60, 120]
    assert [g.get("backoff_s") for g in rec["groups"]] == [30, 60, 120, None]
    assert out["sv_reward"] == [1.0, -0.5]  # filled although max_refills is 0


def test_consecutive_aborted_groups_stop_the_run_under_either_refill_rule(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    prompts = security_prompts({"secure": [scripted_calculator_envs.task]})
    for refill in ("count", "backoff"):
        slept: list[float] = []
        rollout = make_security_rollout_func(
            prompts, scripted_calculator_envs([("abort", "abort")] * 3, G), max_new_tokens=2,
            max_turns=1, refill=refill, max_consecutive_aborted=2, sleep=slept.append,
        )  # fmt: skip
        with pytest.raises(AbortedGroupsLimit, match="2 aborted groups in a row"):
            call_rollout(tmp_path, char_tokenizer, tiny_llama(len(char_tokenizer)), prompts,
                         rollout)  # fmt: skip
        assert len(rollout.history) == 0 and slept == ([30] if refill == "backoff" else [])


def test_a_grading_failure_keeps_its_sample_at_reward_0_when_asked(
    tmp_path, scripted_calculator_envs, char_tokenizer, tiny_llama
):
    """``zero`` (the release): the sample whose grader failed stays in its group with reward 0,
    while a rollout whose sandbox failed still aborts its group. (Under the default ``drop`` a
    grading failure aborts too: the back-off test above.)"""
    prompts = security_prompts({"secure": [scripted_calculator_envs.task]})
    rollout = make_security_rollout_func(
        prompts, scripted_calculator_envs([("abort", "abort"), ("gradefail", "secure")], G),
        max_new_tokens=2, max_turns=1, on_grading_failure="zero",
    )  # fmt: skip
    out = call_rollout(tmp_path, char_tokenizer, tiny_llama(len(char_tokenizer)), prompts, rollout)
    (rec,) = rollout.history
    assert [(g["rewards"], g["statuses"], g["reason"]) for g in rec["groups"]] == [
        ([0.0, 0.0], ["aborted", "aborted"], "aborted"),
        ([0.0, 1.0], ["aborted", "ok"], "kept")]  # fmt: skip
    assert out["sv_reward"] == [0.0, 1.0] and out["sv_status"] == ["aborted", "ok"]
