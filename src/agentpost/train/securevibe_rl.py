"""TRL adapter for SecureVibe ``rl`` (spec b.6): GRPO over multi-turn agent rollouts on security
tasks, rewarded by real grading in sandboxes, with dynamic sampling that drops groups **and
refills the batch** by drawing further prompts.

How it plugs into TRL 1.16 (the same route as ``trl_hero``): ``GRPOTrainer`` takes a
``rollout_func(prompts, trainer)`` that returns ``prompt_ids``, ``completion_ids``, ``logprobs``,
``env_mask`` and extra per-sample fields; TRL uses the returned token ids (not its own prompts)
for the loss, and hands the extra fields to the reward functions. TRL itself never refills a
filtered batch, so the refill happens here, in the rollout function:

1. TRL passes B = n_groups × G prompts (each prompt G times in a row, its ``RepeatSampler``).
2. For each group slot the first try is TRL's prompt; G rollouts are run (``SecurityTaskEnv``:
   the task's starter in ``/app`` of a bwrap sandbox, each turn's text a shell command, the final
   ``/app`` graded by ``agentpost.security.grade.grade_candidate`` in a fresh sandbox).
3. The group filter decides (``dynamic``: b.6, keep iff no sample aborted, reward std > 1e-6 and
   some reward > 0; ``aborted_only``: b.7's filter for ``hg``; ``none``). A dropped group is
   replaced by a group on the next prompt of the ``PromptSampler`` (the 50/50 deficit selector
   over datasets; TRL's prompts are counted into its mix with ``observe``), until the slot is
   filled or ``max_refills`` further groups were drawn for it (then ``DynamicSamplingStalled``,
   as verl's ``max_num_gen_batches`` stops a run that cannot fill its batch).
   ``refill="backoff"`` is the release's rule for aborted groups: each one waits
   min(30 s × 2^k, 300 s) before its replacement (k + 1 = aborted groups in a row, across slots
   and steps; any other group resets k) and does not count against ``max_refills`` (which still
   bounds the other drops). Under either rule ``max_consecutive_aborted`` > 0 stops the run after
   that many aborted groups in a row (``AbortedGroupsLimit``; 0, the release's default, never
   does). ``sleep`` is injectable so tests do not wait.
4. A grading failure (the grader's infrastructure, not the rollout's) aborts its sample by
   default (``on_grading_failure="drop"``: the group is dropped, spec b.6); ``"zero"`` is the
   release's rule: the sample stays in its group with reward 0. A rollout whose sandbox failed
   aborts under both.
5. The returned batch has exactly B samples, all from kept groups, in slot order. The five-level
   reward (or its ``binary`` / ``strict_binary`` ablation) reaches TRL through
   ``securevibe_grpo.security_reward``; ``securevibe_grpo.SecureVibeGRPOTrainer`` then replaces
   TRL's group advantage ((r − mean)/(std + 1e-4)) with the release's,
   ``security.rewards.group_advantages`` ((r − mean)/(std_ddof1 + 1e-6)), over the same groups.

Departures from the release: see ``docs/securevibe-hg.md``. Generation is HF ``generate``, one
rollout at a time, in one process (as ``trl_hero``); a sandbox that cannot start aborts the
sample (reward 0, group dropped), never scored as agent behaviour.

Layer: edges.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentpost.errors import AgentpostError
from agentpost.ingress.keys import Refused
from agentpost.sandbox.base import Backend, SandboxSpec
from agentpost.security.grade import default_backend, grade_candidate, uncarried
from agentpost.security.model import Grade, SecurityTask
from agentpost.security.rewards import RewardMode, ablate, dynamic_filter
from agentpost.security.scripted import SPEC_ENV, final_files, materialise
from agentpost.train.prompt_sampler import PromptSampler
from agentpost.train.trl_hero import _rollout_one

GroupFilter = Literal["dynamic", "aborted_only", "none"]
RefillMode = Literal["count", "backoff"]
OnGradingFailure = Literal["drop", "zero"]
REFILL_MODES = ("count", "backoff")
ON_GRADING_FAILURE = ("drop", "zero")


class DynamicSamplingStalled(RuntimeError):
    """Every refill for a batch slot was dropped: the policy gives no usable signal here."""


class AbortedGroupsLimit(DynamicSamplingStalled):
    """``max_consecutive_aborted`` groups in a row aborted: the infrastructure keeps failing."""


def backoff_delay(k: int, base_s: float = 30.0, cap_s: float = 300.0) -> float:
    """Seconds to wait before replacing the (k+1)-th aborted group in a row: min(base·2^k, cap)."""
    return min(base_s * 2.0 ** min(k, 64), cap_s)


class SecurityTaskEnv:
    """One rollout's environment: a sandbox holding the task's starter files in ``/app``. Each
    turn's text is run as a shell command (``command`` maps it first; tests pass a wrapper so
    random model text never runs as a command); ``resolved()`` grades the final ``/app`` and
    keeps the ``Grade`` in ``.grade``."""

    def __init__(
        self,
        task: SecurityTask,
        *,
        backend: Backend | None = None,
        command: Callable[[str], str] | None = None,
        timeout_s: float = 10.0,
        obs_chars: int = 64,
        grade_timeout_s: float = 30.0,
        func_only: float = 0.5,
    ):
        self.task, self.backend = task, backend or default_backend()
        self.command, self.timeout_s, self.obs_chars = command, timeout_s, obs_chars
        self.grade_timeout_s, self.func_only = grade_timeout_s, func_only
        self.grade: Grade | None = None
        self.infra_error: str | None = None  # the rollout's sandbox failed
        self.grading_failed = False  # the grader's infrastructure failed (not the rollout's)
        self.box = None
        try:
            self.box = self.backend.create(SandboxSpec(env=SPEC_ENV, default_timeout_s=timeout_s))
            self.box.put_dir(str(task.environment_dir), "/app")
        except (AgentpostError, OSError) as e:
            self.infra_error = f"sandbox did not start: {e}"

    def step(self, action: str) -> tuple[str, bool]:
        if self.box is None:
            return "", True
        try:
            res = self.box.exec((self.command or str)(action) or "true", cwd="/app")
        except (AgentpostError, OSError) as e:
            self.infra_error = f"sandbox failed during the rollout: {e}"
            return "", True
        return f"\n[{res.exit_code}] {(res.stdout + res.stderr)[: self.obs_chars]}\n", False

    def _grade(self) -> Grade:
        if self.infra_error or self.box is None:
            return Grade(self.task.id, "aborted", None, None, 0.0, aborted=True,
                         detail=self.infra_error or "no sandbox")  # fmt: skip
        try:
            files = final_files(self.box)
        except Refused as e:  # the policy's own /app (over the bound): its result, not a fault
            return uncarried(self.task, e, self.func_only)
        except (AgentpostError, OSError) as e:
            self.infra_error = f"could not read the rollout's final files: {e}"
            return Grade(self.task.id, "aborted", None, None, 0.0, aborted=True, detail=str(e))
        d = materialise(files)
        try:
            g = grade_candidate(self.task, candidate_dir=d, backend=self.backend,
                                timeout_s=self.grade_timeout_s, func_only=self.func_only)  # fmt: skip
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.grading_failed = g.aborted
        return g

    def resolved(self) -> bool:
        self.grade = self._grade()
        return self.grade.reward >= 1.0

    def close(self) -> None:
        if self.box is not None:
            self.box.close()


@dataclass(frozen=True)
class Prompt:
    """One training prompt: the student sees ``text`` (functional instruction only)."""

    text: str
    dataset: str
    task: SecurityTask


def security_prompts(datasets: Mapping[str, Sequence[SecurityTask]]) -> dict[str, Prompt]:
    """prompt text → Prompt for every task of every dataset (first dataset wins a duplicate)."""
    out: dict[str, Prompt] = {}
    for name, tasks in datasets.items():
        for t in tasks:
            out.setdefault(t.instruction, Prompt(t.instruction, name, t))
    return out


def keep_group(
    rewards: Sequence[float], aborted: Sequence[bool], group_filter: GroupFilter, mode: RewardMode
) -> tuple[bool, str]:
    """(keep, reason) for one group under ``group_filter`` (see the module docstring)."""
    if group_filter == "dynamic":
        d = dynamic_filter(rewards, aborted, mode)
        return d.keep, d.reason
    if group_filter == "aborted_only":
        return (False, "aborted") if any(aborted) else (True, "kept")
    if group_filter == "none":
        return True, "kept"
    raise ValueError(f"group filter must be dynamic, aborted_only or none, got {group_filter!r}")


def make_security_rollout_func(
    prompts: Mapping[str, Prompt],
    env_factory: Callable[[int, SecurityTask], Any],
    *,
    sampler: PromptSampler[str] | None = None,
    reward_mode: RewardMode = "five_level",
    group_filter: GroupFilter = "dynamic",
    max_refills: int = 8,
    refill: RefillMode = "count",
    backoff_s: float = 30.0,
    backoff_cap_s: float = 300.0,
    max_consecutive_aborted: int = 0,
    on_grading_failure: OnGradingFailure = "drop",
    sleep: Callable[[float], None] = time.sleep,
    max_turns: int = 2,
    max_new_tokens: int = 16,
    topk: int = 10,
    hint: Callable[[SecurityTask], str] | None = None,
) -> Callable[[list, Any], dict]:
    """A TRL ``rollout_func`` with dynamic sampling and refill (module docstring). ``sampler``
    draws refill prompts (texts that are keys of ``prompts``; default: all of them, one dataset
    per name at equal weight). ``hint(task)`` adds the teacher-only ``sv_hint`` field for ``hg``.
    ``.history`` keeps one record per call: every group tried, its rewards and the decision."""
    if refill not in REFILL_MODES:
        raise ValueError(f"refill must be one of {REFILL_MODES}, got {refill!r}")
    if on_grading_failure not in ON_GRADING_FAILURE:
        raise ValueError(f"on_grading_failure must be one of {ON_GRADING_FAILURE}")
    if sampler is None:
        by_ds: dict[str, list[str]] = {}
        for p in prompts.values():
            by_ds.setdefault(p.dataset, []).append(p.text)
        sampler = PromptSampler(by_ds)
    state = {"n": 0, "aborted_in_a_row": 0}
    limits = {"max_turns": max_turns, "max_new_tokens": max_new_tokens, "topk": topk}

    def run_group(model: Any, tok: Any, p: Prompt, g: int) -> list[tuple[Any, Grade, bool]]:
        """(sample, grade, aborted) per rollout; a grading failure is kept at reward 0 under
        ``on_grading_failure="zero"`` (its grade's reward is 0 already)."""
        out = []
        for _ in range(g):
            env = env_factory(state["n"], p.task)
            state["n"] += 1
            try:
                sample = _rollout_one(model, tok, env, p.text, **limits)
                gr = env.grade
                keep_zero = on_grading_failure == "zero" and getattr(env, "grading_failed", False)
                out.append((sample, gr, gr.aborted and not keep_zero))
            finally:
                env.close()
        return out

    def fill_slot(model: Any, tok: Any, slot: int, p: Prompt, g: int, record: dict) -> tuple:
        refills = tries = 0
        while True:
            group = run_group(model, tok, p, g)
            raw = [gr.reward for _, gr, _ in group]
            ok, reason = keep_group(raw, [a for _, _, a in group], group_filter, reward_mode)
            rec = {"slot": slot, "task": p.task.id, "dataset": p.dataset, "refill": tries > 0,
                   "rewards": raw, "statuses": [gr.status for _, gr, _ in group],
                   "kept": ok, "reason": reason}  # fmt: skip
            record["groups"].append(rec)
            tries += 1
            aborted = reason == "aborted"
            state["aborted_in_a_row"] = state["aborted_in_a_row"] + 1 if aborted else 0
            if ok:
                return p, group
            n = state["aborted_in_a_row"]
            if aborted and 0 < max_consecutive_aborted <= n:
                raise AbortedGroupsLimit(f"slot {slot}: {n} aborted groups in a row "
                                         f"(max_consecutive_aborted={max_consecutive_aborted})")  # fmt: skip
            if aborted and refill == "backoff":
                rec["backoff_s"] = backoff_delay(n - 1, backoff_s, backoff_cap_s)
                sleep(rec["backoff_s"])
            else:
                refills += 1
                if refills > max_refills:
                    raise DynamicSamplingStalled(
                        f"slot {slot}: {tries} groups drawn and all dropped "
                        f"({[r['reason'] for r in record['groups'] if r['slot'] == slot]})"
                    )
            p = prompts[sampler.draw()[1]]

    def rollout(batch_prompts: list, trainer: Any) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        tok = trainer.processing_class
        g = trainer.num_generations if model.training else trainer.num_generations_eval
        record: dict[str, Any] = {"groups": [], "batch": []}
        kept = []
        for slot, text in enumerate(batch_prompts[::g]):
            p = prompts[text]
            sampler.observe(p.dataset)
            kept.append(fill_slot(model, tok, slot, p, g, record))
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs",
                                                "env_mask", "sv_reward", "sv_raw_reward",
                                                "sv_status", "sv_task", "sv_dataset",
                                                "sv_prompt")}  # fmt: skip
        if hint is not None:
            out["sv_hint"] = []
        for p, group in kept:
            for sample, gr, _ in group:
                out["prompt_ids"].append(sample.prompt_ids)
                out["completion_ids"].append(sample.completion_ids)
                out["logprobs"].append(sample.logprobs)
                out["env_mask"].append(sample.loss_mask)
                out["sv_reward"].append(ablate(gr.reward, reward_mode))
                out["sv_raw_reward"].append(gr.reward)
                out["sv_status"].append(gr.status)
                out["sv_task"].append(p.task.id)
                out["sv_dataset"].append(p.dataset)
                out["sv_prompt"].append(p.text)
                if hint is not None:
                    h = hint(p.task)
                    if h in p.text:
                        raise ValueError(
                            f"{p.task.id}: the teacher hint occurs in the student prompt"
                        )
                    out["sv_hint"].append(h)
            record["batch"].append(p.task.id)
        rollout.history.append(record)
        return out

    rollout.history = []
    rollout.sampler = sampler
    return rollout
