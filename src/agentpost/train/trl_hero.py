"""TRL adapter: GRPO with HERO per-token advantages over multi-turn rollouts in sandboxes.

How it plugs into TRL (checked against trl 1.16): ``GRPOTrainer`` takes a ``rollout_func`` that
returns ``prompt_ids``, ``completion_ids``, ``logprobs`` and extra per-sample fields; an
``env_mask`` field becomes its ``tool_mask`` (observation tokens out of the loss), the other
fields reach the reward functions. ``_compute_loss`` accepts advantages of shape (B, T) from a
subclass. So the adapter is small and reuses TRL's PPO-clip token loss unchanged:

- ``make_rollout_func``: multi-turn rollouts with the policy being trained: each turn is sampled
  with HF ``generate`` (top-k log-probs captured at rollout time, spec b.6), its text is run by an
  ``Environment`` (``SandboxShellEnv``: a shell command in a bwrap sandbox), and the observation
  is appended as masked tokens. Per rollout it returns the HERO inputs (``hero_turns`` = [(h,
  start, end)], ``hero_tokens`` C_i, ``hero_resolved``).
- ``hero_grpo_trainer_cls()``: a ``GRPOTrainer`` subclass whose ``_generate_and_score_completions``
  replaces TRL's scalar group advantage with ``hero_advantages`` laid onto the completion tokens.
  Groups are the consecutive ``num_generations`` rollouts of one prompt, as TRL samples them.
  A group whose advantages are all exactly 0 (e.g. p = 0) is dropped as spec b.7 asks: its rows
  leave the loss mask and the token count that normalises the loss.
- ``hero_grpo_config``: a ``GRPOConfig`` with spec b.7 defaults (ε 0.2/0.28, β = 0, token-mean
  ``dapo`` loss, temperature 1).

Limits: one process (a group must not straddle processes, since HERO needs the whole group);
generation is HF ``generate``, one rollout at a time (vLLM would need top-10 log-probs returned
through ``rollout_func`` the same way). Heavy imports (torch, trl) happen inside functions.

Layer: edges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from agentpost.hero.advantage import hero_advantages, make_batch, token_advantages
from agentpost.hero.config import HeroConfig
from agentpost.hero.entropy import token_entropy
from agentpost.sandbox.base import SandboxSpec
from agentpost.sandbox.bwrap import BwrapBackend
from agentpost.train.masks import MultiTurnSample


class Environment(Protocol):
    def step(self, action: str) -> tuple[str, bool]:
        """Run one turn's text; return (observation text, episode done)."""
        ...

    def resolved(self) -> bool: ...

    def close(self) -> None: ...


class SandboxShellEnv:
    """One bwrap sandbox per rollout; each turn's text becomes a shell command run in it (the
    sandbox, and so its files, persist across the rollout's turns). ``command`` maps the turn's
    text to the command (default: the text itself); tests pass a fixed wrapper so that the
    observation fed back to the policy is a deterministic function of the actions. ``outcome``
    decides ``resolved`` (tests script it; a task evaluator would run hidden tests here).
    ``actions`` and ``results`` keep every turn's text and ``ExecResult``."""

    def __init__(
        self,
        outcome: Callable[[SandboxShellEnv], bool],
        *,
        command: Callable[[str], str] | None = None,
        timeout_s: float = 5.0,
        obs_chars: int = 24,
        backend: Any = None,
    ):
        self.box = (backend or BwrapBackend()).create(SandboxSpec(default_timeout_s=timeout_s))
        self.outcome, self.command, self.obs_chars = outcome, command, obs_chars
        self.actions: list[str] = []
        self.results: list[Any] = []

    def step(self, action: str) -> tuple[str, bool]:
        res = self.box.exec((self.command or str)(action) or "true")
        self.actions.append(action)
        self.results.append(res)
        return f"\n[{res.exit_code}] {(res.stdout + res.stderr)[: self.obs_chars]}\n", False

    def resolved(self) -> bool:
        return bool(self.outcome(self))

    def close(self) -> None:
        self.box.close()


def _generate_turn(
    model: Any, context: list[int], *, max_new_tokens: int, topk: int, eos_id: int, pad_id: int
) -> tuple[list[int], list[float], float, bool]:
    """Sample one turn: (ids, chosen log-probs, mean top-k entropy h, ended with EOS)."""
    import torch

    with torch.no_grad():
        out = model.generate(
            torch.tensor([context], device=model.device),
            attention_mask=torch.ones(1, len(context), dtype=torch.long, device=model.device),
            max_new_tokens=max_new_tokens,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            output_logits=True,
            return_dict_in_generate=True,
            eos_token_id=eos_id,
            pad_token_id=pad_id,
        )
    ids = out.sequences[0, len(context) :].tolist()
    logp = torch.log_softmax(torch.stack(out.logits)[:, 0, :].float(), dim=-1)[: len(ids)]
    chosen = logp.gather(1, torch.tensor(ids, device=logp.device)[:, None])[:, 0].tolist()
    top = torch.topk(logp, min(topk, logp.size(-1)), dim=-1).values.cpu().numpy()
    h = float(token_entropy(top, topk=topk).mean()) if len(ids) else 0.0
    return ids, chosen, h, bool(ids) and ids[-1] == eos_id


def make_rollout_func(
    env_factory: Callable[[int, str], Environment],
    *,
    max_turns: int = 3,
    max_new_tokens: int = 8,
    topk: int = 10,
) -> Callable[[list, Any], dict]:
    """A TRL ``rollout_func``; ``env_factory(rollout_number, prompt)`` makes each environment.
    The function keeps every batch it returned in ``.history`` (for logging and checks)."""
    counter = {"n": 0}
    limits = {"max_turns": max_turns, "max_new_tokens": max_new_tokens, "topk": topk}

    def rollout(prompts: list, trainer: Any) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        tok = trainer.processing_class
        samples = []
        for prompt in prompts:
            env = env_factory(counter["n"], prompt)
            counter["n"] += 1
            try:
                samples.append(_rollout_one(model, tok, env, prompt, **limits))
            finally:
                env.close()
        out = rollout_batch(samples)
        rollout.history.append(out)
        return out

    rollout.history = []
    return rollout


def rollout_batch(samples: list[MultiTurnSample]) -> dict[str, list]:
    """What a ``rollout_func`` returns for ``HeroGRPOTrainer``: TRL's fields (prompt and
    completion ids, log-probs, ``env_mask``) and the HERO inputs, one entry per rollout."""
    return {
        "prompt_ids": [s.prompt_ids for s in samples],
        "completion_ids": [s.completion_ids for s in samples],
        "logprobs": [s.logprobs for s in samples],
        "env_mask": [s.loss_mask for s in samples],
        "hero_turns": [s.hero_turns() for s in samples],
        "hero_tokens": [s.tokens for s in samples],
        "hero_resolved": [s.resolved for s in samples],
    }


def _rollout_one(
    model: Any,
    tok: Any,
    env: Environment,
    prompt: str,
    *,
    max_turns: int,
    max_new_tokens: int,
    topk: int,
) -> MultiTurnSample:
    sample = MultiTurnSample(prompt_ids=tok.encode(prompt, add_special_tokens=False))
    for _ in range(max_turns):
        ids, lps, h, ended = _generate_turn(
            model,
            sample.prompt_ids + sample.completion_ids,
            max_new_tokens=max_new_tokens,
            topk=topk,
            eos_id=tok.eos_token_id,
            pad_id=tok.pad_token_id,
        )
        sample.add_turn(ids, lps, h)
        if ended:
            break
        text = tok.decode(ids, skip_special_tokens=True)
        obs, done = env.step(text)
        sample.add_observation(tok.encode(obs, add_special_tokens=False))
        if done:
            break
    sample.resolved = env.resolved()
    return sample


def resolved_reward(completions: list, hero_resolved: list[bool], **_: Any) -> list[float]:
    """The resolution reward y_i (TRL reward function; HERO replaces the advantage anyway)."""
    return [1.0 if r else 0.0 for r in hero_resolved]


def hero_token_advantages(
    turns: list[list[tuple[float, int, int]]],
    tokens: list[float],
    resolved: list[bool],
    num_generations: int,
    length: int,
    hero: HeroConfig,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """HERO for B rollouts in groups of ``num_generations``: ``(adv[B, length], keep[B], info)``.

    ``keep`` is False for the rollouts of a group whose advantages are all exactly 0 (spec b.7
    group filter: e.g. p = 0; p = 1 groups keep their efficiency signal)."""
    groups = [i // num_generations for i in range(len(turns))]
    batch = make_batch(groups, resolved, tokens, turns, response_len=length)
    res = hero_advantages(batch, **hero.kwargs())
    adv, _ = token_advantages(batch, res.turn)
    kept = res.group_kept(batch)
    info = {  # spec b.9.3 training dynamics, logged per step as hero/<key>
        "resolution_rate": float(np.mean(resolved)) if len(resolved) else 0.0,
        "mean_tokens": float(np.mean(tokens)) if len(tokens) else 0.0,
        "gate_mean": float(res.gate.mean()),
        "frac_gated": float((res.gate > 0).mean()),
        "clipped_fraction": res.clipped_fraction(batch),
        "frac_groups_kept": float(kept.mean()) if len(kept) else 0.0,
    }
    return adv, kept[batch.group], info


HERO_FIELDS = ("hero_turns", "hero_tokens", "hero_resolved")


@functools.cache
def hero_grpo_trainer_cls() -> type:
    """``HeroGRPOTrainer(GRPOTrainer)``: pass ``hero_config=HeroConfig(...)``. It keeps what it
    generated in ``hero_generated`` [(completion_ids, advantages)] and what reached each loss call
    in ``hero_applied`` [{completion_ids, advantages, loss_mask, num_items_in_batch}]."""
    import torch
    from trl import GRPOTrainer

    class HeroGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, hero_config: HeroConfig | None = None, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.hero_config = hero_config or HeroConfig()
            self.hero_generated: list[tuple[Any, Any]] = []
            self.hero_applied: list[dict[str, Any]] = []

        def _generate_and_score_completions(self, inputs: list[dict]) -> dict:
            out = super()._generate_and_score_completions(inputs)  # fills inputs' extra fields
            missing = [k for k in HERO_FIELDS if k not in inputs[0]]
            if missing:
                raise ValueError(
                    f"HeroGRPOTrainer: the rollout_func returned no {', '.join(missing)}; "
                    "build it with agentpost.train.trl_hero.make_rollout_func"
                )
            n_gen = self.num_generations if self.model.training else self.num_generations_eval
            adv, keep, info = hero_token_advantages(
                *([i[k] for i in inputs] for k in HERO_FIELDS),
                n_gen,
                out["completion_ids"].size(1),
                self.hero_config,
            )
            device = out["completion_ids"].device
            out["advantages"] = torch.tensor(adv, dtype=torch.float32, device=device)
            if not keep.all():  # b.7: a dropped group leaves the loss and its token count
                rows = torch.tensor(keep, dtype=torch.long, device=device)[:, None]
                tool = out.get("tool_mask", torch.ones_like(out["completion_mask"]))
                out["tool_mask"] = tool * rows
                out["num_items_in_batch"] = (out["completion_mask"] * out["tool_mask"]).sum()
            mode = "train" if self.model.training else "eval"
            for k, v in info.items():
                self._metrics[mode][f"hero/{k}"].append(v)
            self.hero_generated.append((out["completion_ids"].cpu(), out["advantages"].cpu()))
            return out

        def _compute_loss(self, model: Any, inputs: dict) -> Any:
            mask = inputs["completion_mask"] * inputs.get("tool_mask", 1)
            self.hero_applied.append(
                {
                    "completion_ids": inputs["completion_ids"].detach().cpu(),
                    "advantages": inputs["advantages"].detach().cpu(),
                    "loss_mask": mask.detach().cpu(),
                    "num_items_in_batch": int(inputs["num_items_in_batch"]),
                }
            )
            return super()._compute_loss(model, inputs)

    return HeroGRPOTrainer


def hero_grpo_config(output_dir: str, hero: HeroConfig | None = None, **overrides: Any) -> Any:
    """A ``trl.GRPOConfig`` with the spec's b.7 loss defaults; ``overrides`` win."""
    from trl import GRPOConfig

    hero = hero or HeroConfig()
    base = {
        "output_dir": output_dir,
        "learning_rate": hero.learning_rate,
        "beta": hero.kl_coef,
        "epsilon": hero.clip_low,
        "epsilon_high": hero.clip_high,
        "num_iterations": 1,
        "loss_type": "dapo",
        "temperature": 1.0,
        "mask_truncated_completions": False,
        "lr_scheduler_type": "constant",
        "report_to": [],
        "save_strategy": "no",
    }
    return GRPOConfig(**(base | overrides))
