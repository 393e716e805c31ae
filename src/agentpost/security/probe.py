"""Probe rollouts for the ``rl``/``hg`` routing rule (spec b.8): G agent rollouts per task, each in
a fresh sandbox through the agent loop, graded by ``security.grade`` → ``route.ProbeGroup``.

Policies (a function ``(task, k) -> Model`` giving the model of rollout k):

- ``scripted_policy(agents, seed)``: the scripted security agents of ``security.scripted``
  (oracles, not models), one drawn per rollout with a seeded ``random.Random`` keyed by
  (seed, task, k), so groups mix secure and insecure behaviour the way sampling would;
- ``endpoint_policy(url, model)``: any OpenAI-compatible endpoint; a checkpoint is probed by
  serving it there (vLLM, SGLang, llama.cpp's server), since the probe runs the same agent loop
  the evaluation does.

Infrastructure failures (a sandbox that does not start, a model that stays unavailable after the
transport's retries) are retried ``retries`` times, then recorded as aborted (left out of ρ,
the group does not survive), never as agent behaviour. With a ``Store`` each (policy, task, k)
result is kept, so a rerun skips finished rollouts.

Layer: io.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentpost.agent.llm import Model, ModelUnavailable
from agentpost.agent.loop import AgentLoop, LoopConfig
from agentpost.errors import AgentpostError, BudgetExceeded, InfraError
from agentpost.ingress.keys import Refused
from agentpost.sandbox.base import Backend, SandboxSpec
from agentpost.security.grade import default_backend, grade_candidate, uncarried
from agentpost.security.model import SecurityTask
from agentpost.security.route import ProbeGroup
from agentpost.security.scripted import AGENTS, SPEC_ENV, final_files, materialise, script
from agentpost.store import Store

Policy = Callable[[SecurityTask, int], Model]


def scripted_policy(agents: Sequence[str] = AGENTS, seed: int = 0) -> Policy:
    from agentpost.agent.scripted import ScriptedModel
    from agentpost.security.cwe import load_names

    names = load_names()

    def make(task: SecurityTask, k: int) -> Model:
        agent = random.Random(f"{seed}:{task.id}:{k}").choice(list(agents))
        return ScriptedModel(script(task, agent, names), name=f"scripted-{agent}",
                             estimate_usage=False)  # fmt: skip

    return make


def endpoint_policy(url: str, model: str, temperature: float = 1.0) -> Policy:
    from agentpost.agent.transport import OpenAITransport, TransportConfig

    shared = OpenAITransport(TransportConfig(model=model, base_url=url, temperature=temperature))
    return lambda task, k: shared


def rollout_reward(
    task: SecurityTask, model: Model, backend: Backend, step_limit: int = 20
) -> dict[str, Any]:
    """One rollout and its grade: {reward, aborted, status}."""
    try:
        with backend.create(SandboxSpec(env=SPEC_ENV)) as sb:
            sb.put_dir(str(task.environment_dir), "/app")
            loop = AgentLoop(model, sb, LoopConfig(step_limit=step_limit, command_timeout_s=60))
            loop.run(task.instruction, task_id=task.id, traj_id=f"{task.id}--probe")
            files = final_files(sb)
    except Refused as e:  # the policy's own /app (over the bound): its result, not a fault
        g = uncarried(task, e)
        return {"reward": g.reward, "aborted": False, "status": g.status, "detail": g.detail}
    except (InfraError, ModelUnavailable, OSError) as e:
        return {"reward": 0.0, "aborted": True, "status": "aborted", "detail": str(e)[:300]}
    d = materialise(files)
    try:
        g = grade_candidate(task, candidate_dir=d, backend=backend)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return {"reward": g.reward, "aborted": g.aborted, "status": g.status, "detail": ""}


def probe_groups(
    datasets: Mapping[str, Sequence[SecurityTask]],
    policy: Policy,
    label: str,
    *,
    group_size: int = 4,
    backend: Backend | None = None,
    workers: int = 2,
    retries: int = 1,
    store: Store | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ProbeGroup]:
    """G probe rollouts for every task of every dataset, grouped per task."""
    backend = backend or default_backend()
    jobs = [(ds, t, k) for ds, tasks in datasets.items() for t in tasks for k in range(group_size)]

    def run(job: tuple[str, SecurityTask, int]) -> dict[str, Any]:
        ds, task, k = job

        def compute() -> dict[str, Any]:
            for _ in range(retries + 1):
                try:
                    res = rollout_reward(task, policy(task, k), backend)
                except BudgetExceeded:
                    raise
                except AgentpostError as e:  # an evaluator/transport error of this rollout
                    res = {"reward": 0.0, "aborted": True, "status": "aborted", "detail": str(e)}
                if not res["aborted"]:
                    break
            return res

        inputs = {"policy": label, "dataset": ds, "task": task.id, "k": k}
        res = store.get_or_compute("probe-rollout", inputs, compute) if store else compute()
        if progress:
            progress(f"{ds}/{task.id} #{k}: {res['status']} reward={res['reward']}")
        return res

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(run, jobs))
    groups, i = [], 0
    for ds, tasks in datasets.items():
        for t in tasks:
            part = results[i : i + group_size]
            i += group_size
            groups.append(ProbeGroup(t.id, ds, tuple(t.cwes), tuple(r["reward"] for r in part),
                                     tuple(bool(r["aborted"]) for r in part)))  # fmt: skip
    return groups
