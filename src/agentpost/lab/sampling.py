"""Run a trained lab policy on lab tasks: many rollouts at once, one command per turn.

``sample_turns`` draws one turn for each of a batch of contexts in one batched decode (left
padding, explicit position ids, the model's KV cache), stopping each row at ``<|end|>``; per
row it returns the ids, the chosen tokens' log-probs and the mean renormalised top-k entropy,
the quantity HERO's turn penalty and the entropy analyses read (``hero.entropy``).
``rollouts`` drives a list of ``LabEnv`` in lock-step with it (all rollouts of a group, or of a
whole RL step, decode together; their commands run on a small thread pool) and returns an
``Episode`` plus the token-level sample TRL needs (``train.masks.MultiTurnSample``: prompt ids,
completion ids with observation tokens masked) per rollout. Each piece is tokenised on its own;
the transcript's special-token boundaries make that equal to tokenising the whole transcript
(``lab.transcript``).

Torch runs one thread per process (``one_thread``): on 2 shared cores the default two threads
were ~25× slower than one under load (measured last session).

Layer: io (torch imported inside the functions).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentpost.hero.entropy import token_entropy
from agentpost.lab.env import LabEnv
from agentpost.lab.episodes import Episode
from agentpost.lab.transcript import CMD, OBS, TASK
from agentpost.train.masks import MultiTurnSample

TOPK = 10
ENV_WORKERS = 2


def one_thread() -> None:
    """One torch thread in this process (intra- and inter-op)."""
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set once in this process
        pass


def sample_turns(
    model: Any,
    contexts: list[list[int]],
    eos_id: int,
    pad_id: int,
    *,
    max_new_tokens: int,
    temperature: float,
    generator: Any = None,
) -> list[tuple[list[int], list[float], float]]:
    """[(ids, chosen log-probs, mean top-k entropy)] for each context; ``temperature <= 0`` is
    greedy. Log-probs and entropy are of the distribution sampled from (logits / T)."""
    import torch

    n = len(contexts)
    if n == 0:
        return []
    dev = model.device
    width = max(len(c) for c in contexts)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for i, c in enumerate(contexts):
        ids[i, width - len(c) :] = torch.tensor(c, dtype=torch.long)
        mask[i, width - len(c) :] = 1
    ids, mask = ids.to(dev), mask.to(dev)
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    out_ids: list[list[int]] = [[] for _ in range(n)]
    out_lp: list[list[float]] = [[] for _ in range(n)]
    out_h: list[list[float]] = [[] for _ in range(n)]
    done = torch.zeros(n, dtype=torch.bool, device=dev)
    past = None
    step_ids, step_pos = ids, pos
    with torch.no_grad():
        for _ in range(max_new_tokens):
            out = model(input_ids=step_ids, attention_mask=mask, position_ids=step_pos,
                        past_key_values=past, use_cache=True)  # fmt: skip
            past = out.past_key_values
            logits = out.logits[:, -1, :].float().cpu()
            if temperature > 0:
                logits = logits / temperature
            logp = torch.log_softmax(logits, dim=-1)
            if temperature > 0:
                nxt = torch.multinomial(logp.exp(), 1, generator=generator)[:, 0]
            else:
                nxt = logp.argmax(-1)
            chosen = logp.gather(1, nxt[:, None])[:, 0]
            top = torch.topk(logp, min(TOPK, logp.size(-1)), dim=-1).values.numpy()
            h = token_entropy(top, topk=TOPK)
            for i in torch.nonzero(~done)[:, 0].cpu().tolist():
                out_ids[i].append(int(nxt[i]))
                out_lp[i].append(float(chosen[i]))
                out_h[i].append(float(h[i]))
            done |= (nxt == eos_id).to(dev)
            if bool(done.all()):
                break
            step_ids = nxt[:, None].to(dev)
            step_pos = step_pos[:, -1:] + 1
            mask = torch.cat([mask, torch.ones((n, 1), dtype=torch.long, device=dev)], dim=1)
    return [(out_ids[i], out_lp[i], sum(out_h[i]) / len(out_h[i]) if out_h[i] else 0.0)
            for i in range(n)]  # fmt: skip


def rollouts(
    model: Any,
    tok: Any,
    envs: list[LabEnv],
    agent: str,
    *,
    max_turns: int,
    max_new_tokens: int,
    temperature: float = 1.0,
    generator: Any = None,
    prefixes: list[list[tuple[str, str]]] | None = None,
) -> list[tuple[Episode, MultiTurnSample]]:
    """One rollout per env, decoded together; each env is graded at the end. ``prefixes[i]``
    (SCVD's hand-off): the (command, observation) turns env ``i`` has already taken, by another
    policy; they are context (the prompt), and the episode holds only the continuation."""
    was = model.training
    model.eval()
    eps, samples = [], []
    for k, env in enumerate(envs):
        task = env.task
        eps.append(Episode(task.id, agent, task.instruction))
        prompt = tok.encode(TASK + task.instruction.strip() + CMD, add_special_tokens=False)
        for cmd, obs in prefixes[k] if prefixes else []:
            prompt += tok.encode(cmd, add_special_tokens=False) + [tok.eos_token_id]
            prompt += tok.encode(OBS + obs + CMD, add_special_tokens=False)
        samples.append(MultiTurnSample(prompt_ids=prompt))
        eps[-1].prompt_tokens = len(prompt)
    active = list(range(len(envs)))
    with ThreadPoolExecutor(max_workers=ENV_WORKERS) as pool:
        for _ in range(max_turns):
            if not active:
                break
            turns = sample_turns(model, [samples[i].prompt_ids + samples[i].completion_ids
                                         for i in active], tok.eos_token_id, tok.pad_token_id,
                                 max_new_tokens=max_new_tokens, temperature=temperature,
                                 generator=generator)  # fmt: skip
            texts = []
            for i, (ids, lps, h) in zip(active, turns, strict=True):
                samples[i].add_turn(ids, lps, h)
                eps[i].turn_tokens.append(len(ids))
                eps[i].turn_entropy.append(h)
                texts.append(tok.decode([t for t in ids if t != tok.eos_token_id],
                                        skip_special_tokens=True))  # fmt: skip
            steps = list(pool.map(lambda a: envs[a[0]].step(a[1]), zip(active, texts, strict=True)))
            still = []
            for i, text, (obs, done) in zip(active, texts, steps, strict=True):
                eps[i].commands.append(text.strip())
                eps[i].exits.append(envs[i].exits[-1])
                eps[i].observations.append(None if done else obs)
                if not done:
                    samples[i].add_observation(tok.encode(OBS + obs + CMD,
                                                          add_special_tokens=False))  # fmt: skip
                    still.append(i)
            active = still
        grades = list(pool.map(lambda e: e.resolved(), envs))
    for ep, s, g in zip(eps, samples, grades, strict=True):
        ep.resolved = s.resolved = g
        ep.cost_tokens = s.tokens
    model.train(was)
    return list(zip(eps, samples, strict=True))


def rollout(model: Any, tok: Any, env: LabEnv, agent: str, **kw: Any):
    """One rollout (``rollouts`` of one env)."""
    return rollouts(model, tok, [env], agent, **kw)[0]
