"""A verl agent loop for multi-turn shell tasks that hands HERO its inputs (``agent_name:
agentpost_shell``).

Each rollout: the prompt, then per turn one generation from verl's LLM server (the text is one
shell command), the command run by an environment, and its observation appended as masked tokens,
until the environment says done or ``max_turns``; the environment's grade is the reward. Besides
verl's fields (prompt and response ids, ``response_mask`` with 0 on observation tokens, rollout
log-probs, ``reward_score``), the output carries what ``verl_trainer.HeroPPOTrainer`` passes to
the ``hero`` estimator:

- ``hero_token_entropy[T]``: per response token, the renormalised top-k entropy (spec b.6) when
  the server's ``TokenOutput.extra_fields["top_logprobs"]`` has the top-k log-probs of each
  generated token; NaN otherwise (stock verl servers return only the chosen token's log-prob;
  the trainer then uses the actor's full-vocabulary entropy) and 0 on observation tokens;
- ``hero_total_tokens``: C_i of spec b.2, Σ over the rollout's calls of (context + generated);
- the turn spans are the runs of ``response_mask``; the group is verl's ``uid``.

The environment comes from the dataset row: ``extra_info = {"env": "module:factory", "env_args":
{...}}``; ``factory(**env_args)`` returns ``(env, transcript)`` where ``env`` has ``step(text) ->
(observation, done)``, ``resolved()`` and ``close()`` (``train.trl_hero.Environment``) and
``transcript`` has ``prompt`` (the rollout's first text) and ``observation(text)`` (how an
observation is written into the context). ``agentpost.lab.verl_env:lab_env`` is the lab's.

Layer: edges (verl and torch imported inside functions).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from agentpost.components import load_named
from agentpost.hero.entropy import token_entropy

AGENT_NAME = "agentpost_shell"
DEFAULT_MAX_TURNS = 10


def turn_entropy(top_logprobs: list[list[float]] | None, n: int, topk: int = 10) -> list[float]:
    """Per generated token, the renormalised top-k entropy (NaN where the server sent none)."""
    import numpy as np

    if not top_logprobs or len(top_logprobs) != n:
        return [math.nan] * n
    rows = np.full((n, topk), -np.inf)
    for i, lps in enumerate(top_logprobs):
        k = min(topk, len(lps))
        rows[i, :k] = sorted(lps, reverse=True)[:k]
    return [float(h) for h in token_entropy(rows, topk=topk)]


@functools.cache
def classes() -> tuple[type, type]:
    """(``HeroAgentLoopOutput``, ``HeroShellAgentLoop``), built on first use (verl is heavy)."""
    import torch
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopBase,
        AgentLoopMetrics,
        AgentLoopOutput,
    )

    class HeroAgentLoopOutput(AgentLoopOutput):
        hero_token_entropy: list[float] = []
        hero_total_tokens: float = 0.0

        def as_dict(self) -> dict[str, Any]:
            out = super().as_dict()
            out["hero_token_entropy"] = torch.tensor(self.hero_token_entropy, dtype=torch.float32)
            out["hero_total_tokens"] = torch.tensor([self.hero_total_tokens], dtype=torch.float32)
            return out

    class HeroShellAgentLoop(AgentLoopBase):
        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            import asyncio
            from uuid import uuid4

            ev = asyncio.get_running_loop()  # the env's blocking calls run on its executor

            info = kwargs.get("extra_info") or {}
            env, transcript = load_named({}, info["env"], "environment factory",
                                         **dict(info.get("env_args") or {}))  # fmt: skip
            max_turns = int(info.get("max_turns", DEFAULT_MAX_TURNS))
            budget = int(self.rollout_config.response_length)
            tok = self.tokenizer
            prompt = tok.encode(transcript.prompt, add_special_tokens=False)
            resp: list[int] = []
            mask: list[int] = []
            lps: list[float] = []
            ent: list[float] = []
            total = 0
            request_id = uuid4().hex
            try:
                for turn in range(max_turns):
                    context = prompt + resp
                    out = await self.server_manager.generate(request_id=request_id,
                                                             prompt_ids=context,
                                                             sampling_params=sampling_params)  # fmt: skip
                    ids = list(out.token_ids)
                    total += len(context) + len(ids)
                    resp += ids
                    mask += [1] * len(ids)
                    lps += list(out.log_probs) if out.log_probs else [0.0] * len(ids)
                    ent += turn_entropy(out.extra_fields.get("top_logprobs"), len(ids))
                    text = tok.decode([i for i in ids if i != tok.eos_token_id],
                                      skip_special_tokens=True)  # fmt: skip
                    obs, done = await ev.run_in_executor(None, env.step, text)
                    if done or turn == max_turns - 1 or len(resp) >= budget:
                        break
                    obs_ids = tok.encode(transcript.observation(obs), add_special_tokens=False)
                    resp += obs_ids
                    mask += [0] * len(obs_ids)
                    lps += [0.0] * len(obs_ids)
                    ent += [0.0] * len(obs_ids)
                reward = float(await ev.run_in_executor(None, env.resolved))
            finally:
                await ev.run_in_executor(None, env.close)
            n = min(len(resp), budget)
            return HeroAgentLoopOutput(
                prompt_ids=prompt, response_ids=resp[:n], response_mask=mask[:n],
                response_logprobs=lps[:n], reward_score=reward, num_turns=2 * (turn + 1),
                metrics=AgentLoopMetrics(), hero_token_entropy=ent[:n],
                hero_total_tokens=float(total),
            )  # fmt: skip

    for cls in (HeroAgentLoopOutput, HeroShellAgentLoop):  # importable by name (hydra)
        cls.__qualname__ = cls.__name__
    return HeroAgentLoopOutput, HeroShellAgentLoop


def __getattr__(name: str) -> Any:
    """``HeroShellAgentLoop`` / ``HeroAgentLoopOutput`` by name, so verl's registry entry
    (``agentpost.train.verl_agent_loop.HeroShellAgentLoop``, instantiated by hydra in the agent
    loop worker) resolves without importing verl at module import."""
    names = ("HeroAgentLoopOutput", "HeroShellAgentLoop")
    if name in names:
        return classes()[names.index(name)]
    raise AttributeError(name)


def register() -> type:
    """Register ``HeroShellAgentLoop`` as verl agent ``agentpost_shell`` (idempotent)."""
    from verl.experimental.agent_loop.agent_loop import register as verl_register

    loop = classes()[1]
    verl_register(AGENT_NAME)(loop)
    return loop
