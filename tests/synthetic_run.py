"""A synthetic RL-scale run (thousands of rollouts) built from real-shaped trajectories.

``write_run(path, n, templates)`` writes ``n`` canonical trajectories to one JSONL file. Each is a
template (a canonical trajectory as a dict: the real samples imported from ../shared/data for the
bench, the small hand-made ones of ``small_templates`` for tests) with its own id, task (each
model makes ``rollouts`` attempts at a task: a GRPO group), model (``models`` names, each with
its own resolve rate), run id, outcome
and token counts (every usage figure of the template scaled by one factor per rollout, so token
counts spread as a policy's rollouts do). Texts are the template's. Deterministic for a seed.

Used by tests (a 10k-trajectory run renders and is driven in Chromium in seconds) and by
``bench/analysis.py`` (100k trajectories from the real samples).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

FORMAT = "agentpost.trajectory/1"
USAGE = ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")


def model_names(k: int) -> list[str]:
    """``k`` model names as real runs spell them: providers and versions, some of which share
    their last ``/`` part (``a/gpt-4o`` and ``b/gpt-4o``) to try the charts' labels."""
    base = ["openai/gpt-4o", "azure/gpt-4o", "anthropic/claude-sonnet-4-5", "claude-opus-4-6",
            "google/gemini-2.5-flash", "gemini-2.5-pro", "deepseek/deepseek-chat",
            "litellm_proxy/deepseek-chat", "qwen/qwen3-coder-480b", "meta/llama-4-maverick",
            "mistral/devstral-medium", "moonshot/kimi-k2", "zai/glm-4.6", "xai/grok-code-fast"]  # fmt: skip
    return [base[i] if i < len(base) else f"org{i}/policy-step-{i * 100}" for i in range(k)]


def _scaled(v: Any, f: float) -> Any:
    return int(round(v * f)) if isinstance(v, int | float) and not isinstance(v, bool) else v


def _rollout(
    tpl: dict, tid: str, task: str, model: str, run: str, resolved: bool, f: float
) -> dict:
    t = dict(tpl, id=tid, task_id=task, model=model, run_id=run)
    t["outcome"] = dict(tpl.get("outcome") or {}, resolved=resolved)
    turns = []
    for u in tpl.get("turns") or []:
        usage = u.get("usage")
        if usage:
            u = dict(u, usage={k: _scaled(v, f) if k in USAGE else v for k, v in usage.items()})
        turns.append(u)
    t["turns"] = turns
    totals = tpl.get("totals") or {}
    t["totals"] = {k: _scaled(v, f) if k in USAGE else v for k, v in totals.items()}
    return t


def write_run(
    path: Path, n: int, templates: list[dict], *, models: int = 13, rollouts: int = 8, seed: int = 0
) -> Path:
    """Write ``n`` trajectories (``rollouts`` per model and task, round-robin over ``models``)
    to ``path``."""
    rng = random.Random(seed)
    names = model_names(models)
    rate = {m: 0.2 + 0.6 * k / max(models - 1, 1) for k, m in enumerate(names)}
    with open(path, "wb") as out:
        for i in range(n):  # each model makes ``rollouts`` attempts at a task, then the next
            model = names[i % models]
            task = f"task-{i // (models * rollouts):05d}"
            tpl = templates[rng.randrange(len(templates))]
            resolved = rng.random() < rate[model]
            factor = rng.lognormvariate(0.0, 0.5)
            t = _rollout(tpl, f"{task}::{model}::{i}", task, model, f"run-{i % models}",
                         resolved, factor)  # fmt: skip
            out.write(orjson.dumps(t) + b"\n")
    return path


def templates_from(path: Path) -> list[dict]:
    """The canonical trajectories of a JSONL file, as dicts."""
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def small_templates() -> list[dict]:
    """Three short hand-made trajectories: one that repeats a read and fails a command (R, E),
    one that edits and passes, one without usage on a turn."""

    def turn(i: int, cmd: str, out: str, code: int, inp: int | None, o: int = 40) -> dict:
        usage = None if inp is None else {"input_tokens": inp, "cached_tokens": inp // 2,
                                          "output_tokens": o}  # fmt: skip
        return {"index": i, "text": f"step {i}: run {cmd}",
                "tool_calls": [{"id": f"c{i}", "name": "bash", "command": cmd, "kind": "shell"}],
                "observations": [{"call_id": f"c{i}", "text": out, "exit_code": code}],
                "usage": usage}  # fmt: skip

    def traj(turns: list[dict]) -> dict:
        known = [u["usage"] for u in turns if u["usage"]]
        totals = {"turns": len(turns), "tool_calls": len(turns),
                  **{k: sum(u[k] for u in known) for k in USAGE[:3]}}  # fmt: skip
        return {"format": FORMAT, "id": "x", "instruction": "Fix the failing test in app.py.",
                "turns": turns, "totals": totals, "outcome": {},
                "producer": {"name": "tests.synthetic_run", "version": "1"}}  # fmt: skip

    return [
        traj([turn(0, "cat app.py", "def f(): return 1", 0, 900),
              turn(1, "cat app.py", "def f(): return 1", 0, 1300),
              turn(2, "python -m pytest -q", "1 failed", 1, 1700),
              turn(3, "sed -i 's/1/2/' app.py", "", 0, 2100)]),
        traj([turn(0, "ls", "app.py test_app.py", 0, 800),
              turn(1, "sed -i 's/1/2/' app.py", "", 0, 1000),
              turn(2, "python -m pytest -q", "1 passed", 0, 1200)]),
        traj([turn(0, "grep -n f app.py", "1:def f()", 0, None),
              turn(1, "python app.py", "Traceback: boom", 1, 700, 90)]),
    ]  # fmt: skip
