"""TRL adapter for SecureVibe ``hg``: hint-guided on-policy self-distillation (spec b.7), as the
release's trainer computes it:

    L = L_GRPO(task reward, b.6 ladder) + β · Σ_{t ∈ Y, teacher ok} ℓ_t / N,   β = 1
    ℓ_t = divergences.token_loss(kind, s_t, s_old_t, u_t, λ),   kind ∈ {js_skew (λ 0.5), k1, k2, k3,
          js_sym};   N = the normaliser TRL's policy-gradient loss uses for the same micro-batch

The student samples multi-turn rollouts on the plain task prompt x (``securevibe_rl``'s rollout
function, with ``group_filter="aborted_only"`` as b.7 asks and a ``hint`` callable that adds the
teacher-only ``sv_hint``). After generation the teacher scores x ‖ H(h) ‖ y
(``hint_context.teacher_sequence``: the hint block, by default the release's template, between
prompt and response, prefix-side truncation, alignment asserted), giving u = log π_T(y_t) on every
completion position. In the loss, s = log π_θ(y_t) is the log-prob TRL computes for its PPO term
(captured from that same forward pass, so there is one student forward), s_old is what TRL uses
as the old log-prob (``old_per_token_logps``, else sg[s]: one PPO epoch is on-policy), and ℓ_t
carries the release's clipped ratio clip(π_θ/π_old, 0, 100) (see ``divergences``).

**Aggregation** (``pg_reduce``): the distillation term goes through the policy-gradient loss's
own reducer, so both are per-token means over the same tokens. With the SecureVibe configs
(``loss_type="dapo"``) that is Σ over the micro-batch's loss tokens / the loss tokens of the whole
generation batch (rescaled for accumulation as TRL does), the release's ``--calculate-per-token-loss``
reduction: a long trajectory weighs by its token count, not as one sample. A teacher call that
fails (``None`` from ``Teacher.score``, e.g. a response too long for the teacher) zeroes ℓ for
that sample's tokens, which still count in N (the release masks the same way); its task reward
and PPO term stay. ``opd_only`` zeroes the GRPO advantages (pure distillation). The group
advantage itself is the release's (``securevibe_grpo``).

Teacher: ``frozen_sft`` (default) is a deep copy of the policy taken when the trainer is built,
never updated (the release serves it separately); ``live_policy`` scores with the current
weights under ``no_grad``. Anything with ``score(queries) -> [list[float] | None]`` can stand in
(e.g. an endpoint returning prompt log-probs), which is how tests inject a failing call.

Why not TRL's own self-distillation: trl 1.16 ships ``trl.experimental.sdpo`` (SDPO: GRPO plus
a self-distillation term with a privileged-context teacher, ``teacher_model_kind`` base / live /
ema) and ``trl.experimental.sdft``. Both are experimental ``_BaseTrainer`` subclasses with their
own single-turn generation: no ``rollout_func`` and no tool/env mask, so multi-turn agent
rollouts in sandboxes (and b.6's refill) cannot feed them, and their teacher prompt is a string
template re-tokenised on its own, so token alignment with the student's y is not asserted. We
therefore subclass ``GRPOTrainer`` (the same path as ``rl`` and HERO) and add the b.7 term.

Departures from the release: ``docs/securevibe-hg.md`` (one line each, with the reason).

Layer: edges.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentpost.train.divergences import DIVERGENCES, token_loss
from agentpost.train.hint_context import (
    MAX_TEACHER_TOKENS,
    RELEASE_TEMPLATE,
    TeacherInputTooLong,
    check_template,
    contains,
    hint_block,
    teacher_sequence,
)

TeacherKind = Literal["frozen_sft", "live_policy"]


@dataclass(frozen=True)
class TeacherQuery:
    """One sample to score: student prompt ids x, hint block ids H(h), completion ids y [T]."""

    prompt_ids: list[int]
    block_ids: list[int]
    completion_ids: list[int]


class Teacher(Protocol):
    def score(self, queries: Sequence[TeacherQuery]) -> list[list[float] | None]:
        """log π_T(y_t | x, H(h), y_<t) for every t of each query's y, or None on failure."""
        ...


class ModelTeacher:
    """A causal LM scoring x ‖ H(h) ‖ y. ``model`` may be a frozen copy or the live policy."""

    def __init__(self, model: Any, max_len: int = MAX_TEACHER_TOKENS):
        self.model, self.max_len = model, max_len
        self.sequences: list[tuple[list[int], int]] = []  # (teacher ids, y start) per query

    def score(self, queries: Sequence[TeacherQuery]) -> list[list[float] | None]:
        import torch

        out: list[list[float] | None] = []
        for q in queries:
            try:
                ids, start = teacher_sequence(q.prompt_ids, q.block_ids, q.completion_ids,
                                              self.max_len)  # fmt: skip
            except TeacherInputTooLong:
                out.append(None)
                continue
            self.sequences.append((ids, start))
            device = next(self.model.parameters()).device
            with torch.no_grad():
                logits = self.model(input_ids=torch.tensor([ids], device=device)).logits[0]
            logp = torch.log_softmax(logits[start - 1 : len(ids) - 1].float(), dim=-1)
            y = torch.tensor(ids[start:], device=logp.device)
            out.append(logp.gather(1, y[:, None])[:, 0].tolist())
        return out


def _rows(ids: Any, mask: Any) -> list[list[int]]:
    return [
        [int(t) for t, m in zip(r, mr, strict=True) if m] for r, mr in zip(ids, mask, strict=True)
    ]


def pg_reduce(trainer: Any, per_token: Any, mask: Any, denom_mask: Any, inputs: dict) -> Any:
    """Reduce a [B, T] per-token loss exactly as TRL 1.16's ``GRPOTrainer._compute_loss`` reduces
    its policy-gradient loss for ``trainer.loss_type`` (numerator over ``mask``, denominators
    from ``denom_mask``, the loss mask). [B, T] → scalar."""
    mode = "train" if trainer.model.training else "eval"
    accum = trainer.current_gradient_accumulation_steps if mode == "train" else 1.0
    num = per_token * mask
    lt = trainer.loss_type
    if lt in ("grpo", "sapo"):
        return (num.sum(-1) / denom_mask.sum(-1).clamp(min=1.0)).mean() / accum
    if lt == "bnpo":
        return num.sum() / denom_mask.sum().clamp(min=1.0) / accum
    if lt == "dr_grpo":
        return num.sum() / (per_token.size(0) * trainer.max_completion_length) / accum
    if lt in ("dapo", "cispo", "vespo"):
        normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / trainer.accelerator.num_processes
        if mode == "train":
            normalizer = normalizer * accum / trainer.args.steps_per_generation
        return num.sum() / normalizer
    if lt == "luspo":
        return num.sum(-1).mean() / accum
    raise ValueError(f"no reducer for loss_type {lt!r}")


@functools.cache
def hint_distill_trainer_cls() -> type:
    """``HintDistillTrainer(SecureVibeGRPOTrainer)``; extra arguments: ``teacher`` (``frozen_sft``
    | ``live_policy`` | a ``Teacher``), ``divergence``, ``lam``, ``beta``, ``opd_only``,
    ``max_teacher_len``, ``hint_template`` (text holding ``{hint}``). It keeps ``hg_steps``: per
    loss call the log-probs, masks, the GRPO loss, the distillation term and the total."""
    import torch

    from agentpost.train.securevibe_grpo import securevibe_trainer_cls

    class HintDistillTrainer(securevibe_trainer_cls()):  # type: ignore[misc]
        def __init__(self, *args: Any, teacher: TeacherKind | Teacher = "frozen_sft",
                     divergence: str = "js_skew", lam: float = 0.5, beta: float = 1.0,
                     opd_only: bool = False, max_teacher_len: int = MAX_TEACHER_TOKENS,
                     hint_template: str = RELEASE_TEMPLATE, **kwargs: Any):  # fmt: skip
            super().__init__(*args, **kwargs)
            if divergence not in DIVERGENCES:
                raise ValueError(f"divergence must be one of {DIVERGENCES}, got {divergence!r}")
            # prefixed: GRPOTrainer's own ``beta`` is the KL coefficient
            self.hg_divergence, self.hg_lam, self.hg_beta = divergence, lam, beta
            self.hg_opd_only, self.hg_template = opd_only, check_template(hint_template)
            if teacher == "frozen_sft":
                frozen = copy.deepcopy(self.accelerator.unwrap_model(self.model)).eval()
                frozen.requires_grad_(False)
                self.teacher: Any = ModelTeacher(frozen, max_teacher_len)
            elif teacher == "live_policy":
                self.teacher = ModelTeacher(self.accelerator.unwrap_model(self.model),
                                            max_teacher_len)  # fmt: skip
            elif hasattr(teacher, "score"):
                self.teacher = teacher
            else:
                raise ValueError(
                    f"teacher must be frozen_sft, live_policy or a Teacher, got {teacher!r}"
                )
            self.hg_steps: list[dict[str, Any]] = []
            self._captured: list[Any] | None = None

        def _generate_and_score_completions(self, inputs: list[dict]) -> dict:
            out = super()._generate_and_score_completions(inputs)
            if "sv_hint" not in inputs[0]:
                raise ValueError("HintDistillTrainer: the rollout_func gave no sv_hint; build it "
                                 "with make_security_rollout_func(..., hint=...)")  # fmt: skip
            tok = self.processing_class
            prompts = _rows(out["prompt_ids"].tolist(), out["prompt_mask"].tolist())
            comps = out["completion_ids"].tolist()
            queries = []
            for i, inp in enumerate(inputs):
                block = hint_block(inp["sv_hint"], self.hg_template)
                hint_ids = tok.encode(inp["sv_hint"], add_special_tokens=False)
                text = tok.decode(prompts[i], skip_special_tokens=True)
                if inp["sv_hint"] in text or contains(prompts[i], hint_ids):
                    raise AssertionError(f"sample {i}: the teacher hint is in the student prompt")
                block_ids = tok.encode(block, add_special_tokens=False)
                queries.append(TeacherQuery(prompts[i], block_ids, comps[i]))
            scored = self.teacher.score(queries)
            t = out["completion_ids"].size(1)
            u = torch.zeros(len(scored), t, device=out["completion_ids"].device)
            ok = torch.zeros(len(scored), device=u.device)
            for i, row in enumerate(scored):
                if row is not None and len(row) == t:
                    u[i], ok[i] = torch.tensor(row, device=u.device), 1.0
            out["teacher_logps"], out["teacher_ok"] = u, ok
            if self.hg_opd_only:
                out["advantages"] = torch.zeros_like(out["advantages"])
            return out

        def _get_per_token_logps_and_entropies(self, *args: Any, **kwargs: Any) -> Any:
            res = super()._get_per_token_logps_and_entropies(*args, **kwargs)
            if self._captured is not None:
                self._captured.append(res[0])
            return res

        def _compute_loss(self, model: Any, inputs: dict) -> Any:
            self._captured = []
            try:
                grpo = super()._compute_loss(model, inputs)
                s = self._captured[0]  # the policy forward of the PPO term
            finally:
                self._captured = None
            mask = inputs["completion_mask"] * inputs.get("tool_mask", 1)
            ok = inputs["teacher_ok"][:, None].bool()
            s_old = inputs.get("old_per_token_logps")
            s_old = s.detach() if s_old is None else s_old
            u = torch.where(ok, inputs["teacher_logps"], s.detach())  # no teacher: no signal
            per_tok = token_loss(self.hg_divergence, s, s_old, u, self.hg_lam)  # type: ignore[arg-type]
            per_tok = torch.where(ok, per_tok, torch.zeros_like(per_tok))
            d = pg_reduce(self, per_tok, mask * ok, mask, inputs)
            loss = grpo + self.hg_beta * d
            okm = (mask * ok).detach()
            rev_kl = ((s - u).detach() * okm).sum() / okm.sum().clamp(min=1.0)
            self.hg_steps.append({"distill": float(d.detach()), "grpo_loss": float(grpo.detach()),
                                  "loss": float(loss.detach()), "reverse_kl": float(rev_kl),
                                  "teacher_ok": inputs["teacher_ok"].cpu(),
                                  "advantages": inputs["advantages"].detach().cpu(),
                                  "student_logps": s.detach().cpu(), "old_logps": s_old.cpu(),
                                  "teacher_logps": inputs["teacher_logps"].cpu(),
                                  "mask": mask.detach().cpu(),
                                  "num_items_in_batch": float(inputs["num_items_in_batch"])})  # fmt: skip
            mode = "train" if self.model.training else "eval"
            self._metrics[mode]["hg/distill_loss"].append(float(d.detach()))
            self._metrics[mode]["hg/reverse_kl"].append(float(rev_kl))
            self._metrics[mode]["hg/teacher_ok"].append(float(inputs["teacher_ok"].mean()))
            return loss

    return HintDistillTrainer


def hint_distill_config(output_dir: str, **overrides: Any) -> Any:
    """A ``trl.GRPOConfig`` with spec b.7 defaults (G = 8, lr 1e-6 constant, Adam (0.9, 0.98),
    weight decay 0.01, temperature 1, KL 0, token-level PPO-clip, no entropy bonus: b.7 lists
    none); ``overrides`` win."""
    from agentpost.train.securevibe_grpo import securevibe_grpo_config

    base = {
        "num_generations": 8,
        "lr_scheduler_type": "constant",
        "weight_decay": 0.01,
        "entropy_coef": 0.0,
    }
    return securevibe_grpo_config(output_dir, **(base | overrides))
