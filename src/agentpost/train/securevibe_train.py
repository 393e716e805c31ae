"""Run SecureVibe ``rl`` or ``hg`` on a local checkpoint (or ``tiny``, a random model built here)
over security task suites: the piece behind ``agentpost security rl`` and ``security hg``.

The policy's turns run as shell commands in ``/app`` of a bwrap sandbox holding the task's
starter files (``SecurityTaskEnv``); its final ``/app`` is graded in a fresh sandbox. Prompts are
the tasks' functional instructions, rendered with the tokenizer's chat template when it has one;
each suite is one dataset, mixed at equal weights by the deficit sampler (b.6: 50/50 over two).
``hg`` gets the task's hint at ``hint_level`` (default L4, b.7) as teacher-only context, rendered
with ``hint_template`` (``release`` by default, ``paraphrase``, ``library``, or a file holding
``{hint}``). Both train with the release's group advantage (``securevibe_grpo``); the refill and
grading-failure rules are options (``refill``, ``on_grading_failure``; ``securevibe_rl``).

Writes ``OUT/summary.json`` (every group tried, its rewards and filter decision, the realised
dataset mix, TRL's log history) and the trained model under ``OUT/model``. With ``save_steps``
TRL checkpoints go to ``OUT/trl/checkpoint-N``; ``resume`` continues from the latest one
(optimiser, scheduler, step and data position; the prompt sampler's mix counts restart, and
``summary.json`` then lists the groups of the resumed steps only).

Layer: edges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from agentpost.config_checks import at_least, check, in_unit, non_negative, one_of, positive
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InputError
from agentpost.sandbox.base import Backend
from agentpost.security.hints import LEVELS
from agentpost.security.model import SecurityTask
from agentpost.security.rewards import RewardMode
from agentpost.train.divergences import DIVERGENCES
from agentpost.train.hint_context import TEMPLATES, check_template
from agentpost.train.securevibe_rl import ON_GRADING_FAILURE, REFILL_MODES

Method = Literal["rl", "hg"]
REWARD_MODES = get_args(RewardMode)
TEACHERS = ("frozen_sft", "live_policy")


@dataclass(frozen=True)
class SecureVibeTrainConfig:
    """The settings of ``security rl`` (b.6) and ``security hg`` (b.7); hg-only fields are
    ignored by rl. Checked at construction, naming the field (``config_checks``)."""

    model: str = "tiny"
    steps: int = 2
    group_size: int = 4
    prompts_per_step: int = 4
    reward_mode: str = "five_level"
    max_refills: int = 8
    refill: str = "count"  # or "backoff": the release's rule for aborted groups
    backoff_s: float = 30.0
    backoff_cap_s: float = 300.0
    max_consecutive_aborted: int = 0  # 0: never stop
    on_grading_failure: str = "drop"  # or "zero": the release's rule
    hint_level: str = "L4"
    hint_template: str = "release"  # a TEMPLATES name or a file holding {hint}
    teacher: str = "frozen_sft"
    divergence: str = "js_skew"
    lam: float = 0.5  # js_skew's lambda
    beta: float = 1.0  # weight of the distillation term
    opd_only: bool = False
    learning_rate: float = 1e-6
    max_turns: int = 2
    max_new_tokens: int = 64
    command_timeout_s: float = 30.0
    seed: int = 0
    save_steps: int = 0

    def __post_init__(self) -> None:
        check(self, {
            "model": (isinstance(self.model, str) and bool(self.model), "a model directory or tiny"),
            "steps": (at_least(self.steps, 1), "at least 1"),
            "group_size": (at_least(self.group_size, 2), "at least 2 (an advantage needs a group)"),
            "prompts_per_step": (at_least(self.prompts_per_step, 1), "at least 1"),
            "reward_mode": (self.reward_mode in REWARD_MODES, one_of(REWARD_MODES)),
            "max_refills": (at_least(self.max_refills, 0), "at least 0"),
            "refill": (self.refill in REFILL_MODES, one_of(REFILL_MODES)),
            "backoff_s": (non_negative(self.backoff_s), ">= 0 seconds"),
            "backoff_cap_s": (non_negative(self.backoff_cap_s), ">= 0 seconds"),
            "max_consecutive_aborted": (at_least(self.max_consecutive_aborted, 0), "at least 0"),
            "on_grading_failure": (self.on_grading_failure in ON_GRADING_FAILURE,
                                   one_of(ON_GRADING_FAILURE)),
            "hint_level": (self.hint_level in LEVELS, one_of(LEVELS)),
            "hint_template": (isinstance(self.hint_template, str) and bool(self.hint_template),
                              f"one of {', '.join(TEMPLATES)} or a template file"),
            "teacher": (self.teacher in TEACHERS, one_of(TEACHERS)),
            "divergence": (self.divergence in DIVERGENCES, one_of(DIVERGENCES)),
            "lam": (in_unit(self.lam, open_low=True), "in (0, 1]"),
            "beta": (non_negative(self.beta), ">= 0"),
            "learning_rate": (positive(self.learning_rate), "> 0"),
            "max_turns": (at_least(self.max_turns, 1), "at least 1"),
            "max_new_tokens": (at_least(self.max_new_tokens, 1), "at least 1"),
            "command_timeout_s": (positive(self.command_timeout_s), "a positive number of seconds"),
            "save_steps": (at_least(self.save_steps, 0), "at least 0"),
        })  # fmt: skip


def load_policy(model: str, max_positions: int = 8192) -> tuple[Any, Any]:
    """(model, tokenizer) from a local directory, or ``tiny`` (``train.tiny``)."""
    if model == "tiny":
        from agentpost.train.tiny import char_chat_tokenizer, tiny_llama

        tok = char_chat_tokenizer()
        return tiny_llama(len(tok), max_positions=max_positions), tok
    path = Path(model)
    if not (path / "config.json").is_file():
        raise InputError(model, "--model", "not a model directory (no config.json); or use tiny")
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return transformers.AutoModelForCausalLM.from_pretrained(path), tok


def load_template(name_or_path: str) -> str:
    """The teacher block template: a ``TEMPLATES`` name, or a UTF-8 file holding ``{hint}``
    once (e.g. the release's exact text)."""
    if name_or_path in TEMPLATES:
        return TEMPLATES[name_or_path]
    path = Path(name_or_path)
    try:
        return check_template(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(name_or_path, "--hint-template",
                         f"not a template name ({', '.join(TEMPLATES)}) nor a readable file: "
                         f"{e}") from None  # fmt: skip
    except ValueError as e:
        raise InputError(name_or_path, "--hint-template", str(e)) from None


def _render(tok: Any, text: str) -> str:
    if getattr(tok, "chat_template", None):
        return tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                       add_generation_prompt=True)  # fmt: skip
    return text


def run_security_training(
    method: Method,
    datasets: Mapping[str, Sequence[SecurityTask]],
    out: str | Path,
    cfg: SecureVibeTrainConfig | None = None,
    *,
    backend: Backend | None = None,
    cpu: bool = True,
    resume: bool = False,
) -> dict[str, Any]:
    cfg = cfg or SecureVibeTrainConfig()
    template = load_template(cfg.hint_template) if method == "hg" else None
    policy, tok = load_policy(cfg.model)

    from agentpost.security.cwe import load_names
    from agentpost.security.hints import hint
    from agentpost.train.hint_distill import hint_distill_config, hint_distill_trainer_cls
    from agentpost.train.prompt_sampler import PromptSampler
    from agentpost.train.securevibe_grpo import (
        mixed_prompt_dataset,
        securevibe_grpo_config,
        securevibe_trainer_cls,
        security_reward,
    )
    from agentpost.train.securevibe_rl import Prompt, SecurityTaskEnv, make_security_rollout_func

    prompts = {}
    for name, tasks in datasets.items():
        for t in tasks:
            text = _render(tok, t.instruction)
            prompts.setdefault(text, Prompt(text, name, t))
    by_ds: dict[str, list[str]] = {}
    for p in prompts.values():
        by_ds.setdefault(p.dataset, []).append(p.text)
    names = load_names()
    rollout = make_security_rollout_func(
        prompts,
        lambda n, task: SecurityTaskEnv(task, backend=backend, timeout_s=cfg.command_timeout_s),
        sampler=PromptSampler(by_ds, seed=cfg.seed),
        reward_mode=cfg.reward_mode,  # type: ignore[arg-type]
        group_filter="dynamic" if method == "rl" else "aborted_only", max_refills=cfg.max_refills,
        refill=cfg.refill, backoff_s=cfg.backoff_s, backoff_cap_s=cfg.backoff_cap_s,
        max_consecutive_aborted=cfg.max_consecutive_aborted,
        on_grading_failure=cfg.on_grading_failure,
        max_turns=cfg.max_turns, max_new_tokens=cfg.max_new_tokens,
        hint=(lambda t: hint(cfg.hint_level, t.cwes, t.hints, names)) if method == "hg" else None,
    )  # fmt: skip
    out = Path(out)
    common = {"per_device_train_batch_size": cfg.group_size * cfg.prompts_per_step,
              "num_generations": cfg.group_size, "max_steps": cfg.steps,
              "learning_rate": cfg.learning_rate,
              "use_cpu": cpu, "logging_steps": 1, "seed": cfg.seed, "disable_dropout": True,
              "max_completion_length": cfg.max_turns * (cfg.max_new_tokens + 96)}  # fmt: skip
    if cfg.save_steps:
        common |= {"save_strategy": "steps", "save_steps": cfg.save_steps}
    # TRL repeats each prompt G times
    data = mixed_prompt_dataset(by_ds, cfg.steps * cfg.prompts_per_step, seed=cfg.seed)
    kwargs = {"model": policy, "processing_class": tok, "reward_funcs": [security_reward],
              "train_dataset": data, "rollout_func": rollout}  # fmt: skip
    if method == "rl":
        trainer = securevibe_trainer_cls()(
            args=securevibe_grpo_config(str(out / "trl"), **common), **kwargs
        )
    else:
        trainer = hint_distill_trainer_cls()(
            args=hint_distill_config(str(out / "trl"), **common), teacher=cfg.teacher,
            divergence=cfg.divergence, lam=cfg.lam, beta=cfg.beta, opd_only=cfg.opd_only,
            hint_template=template, **kwargs,
        )  # fmt: skip
    ckpts = sorted((out / "trl").glob("checkpoint-*")) if resume else []
    trainer.train(resume_from_checkpoint=bool(ckpts) or None)
    trainer.save_model(str(out / "model"))
    summary = {
        "format": fmt("agentpost.security.train"),
        "producer": producer(run_security_training, method=method, **asdict(cfg),
                             datasets={k: [t.id for t in v] for k, v in datasets.items()}),
        "resumed_from": ckpts[-1].name if ckpts else None,
        "steps": rollout.history,
        "mix": rollout.sampler.mix(),
        "log_history": trainer.state.log_history,
    }  # fmt: skip
    write_json(out / "summary.json", summary, default=str)
    return summary
