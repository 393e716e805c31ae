"""Run a trained lab policy on lab tasks: sample one command per turn, run it, feed the output.

``sample_turn`` draws one turn from the model (HF ``generate``, KV cache, stops at ``<|end|>``)
and returns its ids, the chosen tokens' log-probs and the mean renormalised top-k entropy, the
quantity HERO's turn penalty and the entropy analyses read (``hero.entropy``). ``rollout``
drives a ``LabEnv`` with it and returns an ``Episode`` plus the token-level sample TRL needs
(``train.masks.MultiTurnSample``: prompt ids, completion ids with observation tokens masked).
Each piece is tokenised on its own; the transcript's special-token boundaries make that equal to
tokenising the whole transcript (``lab.transcript``).

Layer: io (torch imported inside the functions).
"""

from __future__ import annotations

from typing import Any

from agentpost.hero.entropy import token_entropy
from agentpost.lab.env import LabEnv
from agentpost.lab.episodes import Episode
from agentpost.lab.transcript import CMD, OBS, TASK
from agentpost.train.masks import MultiTurnSample

TOPK = 10


def sample_turn(
    model: Any, context: list[int], eos_id: int, *, max_new_tokens: int, temperature: float
) -> tuple[list[int], list[float], float]:
    """(ids, chosen log-probs, mean top-k entropy) of one sampled turn."""
    import torch

    greedy = temperature <= 0
    with torch.no_grad():
        out = model.generate(
            torch.tensor([context]),
            attention_mask=torch.ones(1, len(context), dtype=torch.long),
            max_new_tokens=max_new_tokens,
            do_sample=not greedy,
            temperature=None if greedy else temperature,
            top_k=None if greedy else 0,
            top_p=None if greedy else 1.0,
            output_logits=True,
            return_dict_in_generate=True,
            eos_token_id=eos_id,
            pad_token_id=eos_id,
        )
    ids = out.sequences[0, len(context) :].tolist()
    logits = torch.stack(out.logits)[:, 0, :].float()
    logits = logits / (temperature if temperature > 0 else 1.0)
    logp = torch.log_softmax(logits, dim=-1)[: len(ids)]
    chosen = logp.gather(1, torch.tensor(ids)[:, None])[:, 0].tolist()
    top = torch.topk(logp, min(TOPK, logp.size(-1)), dim=-1).values.numpy()
    h = float(token_entropy(top, topk=TOPK).mean()) if ids else 0.0
    return ids, chosen, h


def rollout(
    model: Any,
    tok: Any,
    env: LabEnv,
    agent: str,
    *,
    max_turns: int = 8,
    max_new_tokens: int = 64,
    temperature: float = 1.0,
) -> tuple[Episode, MultiTurnSample]:
    """One rollout of ``model`` on ``env``'s task; the env is graded at the end."""
    task = env.task
    ep = Episode(task.id, agent, task.instruction)
    prompt = tok.encode(TASK + task.instruction.strip() + CMD, add_special_tokens=False)
    sample = MultiTurnSample(prompt_ids=prompt)
    ep.prompt_tokens = len(prompt)
    for _ in range(max_turns):
        ids, lps, h = sample_turn(model, sample.prompt_ids + sample.completion_ids,
                                  tok.eos_token_id, max_new_tokens=max_new_tokens,
                                  temperature=temperature)  # fmt: skip
        sample.add_turn(ids, lps, h)
        ep.turn_tokens.append(len(ids))
        ep.turn_entropy.append(h)
        text = tok.decode([i for i in ids if i != tok.eos_token_id], skip_special_tokens=True)
        obs, done = env.step(text)
        ep.commands.append(text.strip())
        ep.exits.append(env.exits[-1])
        ep.observations.append(None if done else obs)
        if done:
            break
        sample.add_observation(tok.encode(OBS + obs + CMD, add_special_tokens=False))
    ep.resolved = sample.resolved = env.resolved()
    ep.cost_tokens = sample.tokens
    return ep, sample
