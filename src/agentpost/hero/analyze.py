"""Assemble the HERO efficiency analyses over canonical trajectories into one JSON document.

Format ``agentpost.efficiency/1`` (keys are stable; a report renderer may rely on them):

- ``format``, ``producer`` {name, version, args} (args include ``classifiers_version``),
  ``classifiers`` (the full versioned lists used).
- ``trajectories[]``: one row per trajectory: ``id, task_id, model, run_id, resolved``
  (bool|null), ``turns``, ``tokens`` (C_i, null if unknown), ``tokens_m``, ``prompt_tokens``,
  ``cached_tokens``, ``completion_tokens``, ``cache_hit_rate``, ``cost`` (at ``prices``),
  ``read_only_turns``, ``repeated_call_turns``, ``over_exploration_turns``, ``tool_error_turns``,
  ``check_run_turns`` (a failed run of a script the agent wrote: not a tool error, not
  unproductive; ``behaviours``' rule), ``unproductive_turns``, ``unproductive_turn_rate``,
  ``mean_entropy`` (null without logprobs), and per turn ``turn_entropy[]`` (float|null) and
  ``turn_flags[]`` (each a string of letters: r=read-only, R=repeated call, O=over-exploration,
  E=tool error, C=check run).
- ``models[]``: one row per model: ``model, trajectories, resolved_known, resolution_rate``
  (fraction 0..1), ``mean_tokens_m``, ``trs`` (R in percent / sqrt(1 + C in M)),
  ``cache_hit_rate``, ``turns``, ``mean_turns``, ``read_only_share``, ``unproductive_turn_rate``,
  ``behaviour_counts`` {read_only, repeated_call, over_exploration, tool_error, check_run,
  unproductive}
  (turn counts), ``effective_token_price`` (per million tokens),
  ``relative_inference_cost`` (vs ``baseline``), ``cost_per_task``, ``variation_histogram``
  {edges, counts} of C_max/C_min across tasks, ``association`` (see
  ``association.association``; null without entropies).
- ``runs[]``: one row per (model, run_id): ``model, run_id, trajectories, resolution_rate,
  mean_tokens_m, trs`` and the b.9.4 tool-use mix ``turns, read_only_share`` (a run = a
  training stage or checkpoint; the rest of the turns change state: edits, tests, builds).
- ``groups[]``: one row per (model, task_id): ``model, task_id, rollouts, resolution_rate,
  mean_tokens_m, trs`` and the b.9.1 ``variation`` {n_resolved, cmax_cmin, p90_p10, cv,
  min_tokens, max_tokens}.

Every unknown number is ``null``, never 0.

Layer: pure.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentpost.documents.formats import fmt, producer
from agentpost.hero import cost as C
from agentpost.hero.association import association
from agentpost.hero.behaviours import CLASSIFIERS, TurnFlags, detect
from agentpost.hero.entropy import turn_entropy
from agentpost.hero.variation import histogram, task_variation
from agentpost.intervals import RESAMPLES
from agentpost.prices import PER, Prices
from agentpost.trajectory.model import Trajectory

FORMAT = fmt("agentpost.efficiency")


def _flag_letters(f: TurnFlags) -> str:
    # interned: a run's rows hold millions of these, of a dozen distinct values
    return sys.intern(
        "".join(
            c
            for c, on in (
                ("r", f.read_only),
                ("R", f.repeated_call),
                ("O", f.over_exploration),
                ("E", f.tool_error),
                ("C", f.check_run),
            )
            if on
        )
    )


def trajectory_row(
    t: Trajectory, flags: list[TurnFlags], ent: list[float | None], prices: Prices
) -> dict[str, Any]:
    prompt, cached, completion = C.usage_sums(t)
    # C.trajectory_tokens and C.trajectory_cost, from the one sum
    tokens = None if prompt is None or completion is None else prompt + completion
    n = len(t.turns)
    unprod = sum(f.unproductive for f in flags)
    known = [h for h in ent if h is not None]
    return {
        "id": t.id,
        "task_id": t.task_id,
        "model": t.model,
        "run_id": t.run_id,
        "resolved": t.outcome.resolved,
        "turns": n,
        "tokens": tokens,
        "tokens_m": tokens / 1e6 if tokens is not None else None,
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": completion,
        "cache_hit_rate": C.cache_hit_rate([t]),
        "cost": prices.cost(prompt, cached, completion),
        "read_only_turns": sum(f.read_only for f in flags),
        "repeated_call_turns": sum(f.repeated_call for f in flags),
        "over_exploration_turns": sum(f.over_exploration for f in flags),
        "tool_error_turns": sum(f.tool_error for f in flags),
        "check_run_turns": sum(f.check_run for f in flags),
        "unproductive_turns": unprod,
        "unproductive_turn_rate": unprod / n if n else None,
        "mean_entropy": float(np.mean(known)) if known else None,
        "turn_entropy": ent,
        "turn_flags": [_flag_letters(f) for f in flags],
    }


def _mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _stats(rows: list[dict]) -> dict[str, Any]:
    outcomes = [r["resolved"] for r in rows if r["resolved"] is not None]
    rate = sum(outcomes) / len(outcomes) if outcomes else None
    tok = _mean([r["tokens_m"] for r in rows])
    return {
        "resolution_rate": rate,
        "mean_tokens_m": tok,
        "trs": C.trs(rate * 100 if rate is not None else None, tok),
    }


def _tool_use(rows: list[dict]) -> dict[str, Any]:
    turns = sum(r["turns"] for r in rows)
    ro = sum(r["read_only_turns"] for r in rows)
    return {"turns": turns, "read_only_share": ro / turns if turns else None}


@dataclass
class ModelSums:
    """What a model row needs beyond the trajectory rows, summed while trajectories stream past
    (``cost.cache_hit_rate`` and ``cost.effective_token_price`` over the model's trajectories,
    in the same order, so the floats are the same)."""

    cached: int = 0
    prompt: int = 0
    cost: float = 0.0
    tokens: float = 0.0

    def add(self, t: Trajectory, row: dict[str, Any]) -> None:
        sums = C.cache_sums(t)
        if sums is not None:
            self.cached, self.prompt = self.cached + sums[0], self.prompt + sums[1]
        c, n = row["cost"], row["tokens"]
        if c is not None and n:
            self.cost, self.tokens = self.cost + c, self.tokens + n

    def cache_hit_rate(self) -> float | None:
        return self.cached / self.prompt if self.prompt else None

    def effective_token_price(self) -> float | None:
        return self.cost / self.tokens * PER if self.tokens else None


def model_row(
    model: str | None,
    rows: list[dict],
    prices: Prices,
    assoc: dict | None,
    var_hist: dict,
    sums: ModelSums,
) -> dict[str, Any]:
    """One model's row from its trajectory rows and the sums ``ModelSums`` gathered while its
    trajectories streamed past (cache and cost need the per-call usage, not in the rows)."""
    turns = sum(r["turns"] for r in rows)
    counts = {
        k: sum(r.get(f"{k}_turns") or 0 for r in rows)
        for k in (
            "read_only",
            "repeated_call",
            "over_exploration",
            "tool_error",
            "check_run",
            "unproductive",
        )  # fmt: skip
    }
    costs = [r["cost"] for r in rows if r["cost"] is not None]
    return {
        "model": model,
        "trajectories": len(rows),
        "resolved_known": sum(r["resolved"] is not None for r in rows),
        **_stats(rows),
        "cache_hit_rate": sums.cache_hit_rate(),
        "turns": turns,
        "mean_turns": turns / len(rows) if rows else None,
        "read_only_share": counts["read_only"] / turns if turns else None,
        "unproductive_turn_rate": counts["unproductive"] / turns if turns else None,
        "behaviour_counts": counts,
        "effective_token_price": sums.effective_token_price(),
        "relative_inference_cost": None,
        "cost_per_task": float(np.mean(costs)) if costs else None,
        "variation_histogram": var_hist,
        "association": assoc,
    }


def _association(rows: list[dict], percentile: float, n_boot: int, seed: int) -> dict | None:
    tasks: dict[Any, int] = {}
    g, tr, h, fl = [], [], [], defaultdict(list)
    for i, r in enumerate(rows):
        gid = tasks.setdefault(r["task_id"], len(tasks))
        for ent, letters in zip(r["turn_entropy"], r["turn_flags"], strict=True):
            if ent is None:
                continue
            g.append(gid), tr.append(i), h.append(ent)
            fl["repeated_call"].append("R" in letters)
            fl["over_exploration"].append("O" in letters)
            fl["tool_error"].append("E" in letters)
            fl["unproductive"].append(bool(set(letters) & set("ROE")))
    if not h:
        return None
    flags = {k: np.asarray(v, dtype=bool) for k, v in fl.items()}
    return association(
        np.asarray(g),
        np.asarray(tr),
        np.asarray(h, dtype=np.float64),
        flags,
        percentile=percentile,
        n_boot=n_boot,
        seed=seed,
    )


class Analysis:
    """The document of ``analyze`` built one trajectory at a time, so that a run of any size is
    analysed without holding its trajectories: ``add(t)`` keeps the trajectory's row (its
    summary: counts, tokens, per-turn flags and entropy) and its model's usage sums, and
    ``document()`` assembles models, runs and groups from those. The numbers equal
    ``analyze(trajs)``'s (the same sums, in the same order). Arguments as ``analyze``."""

    def __init__(
        self,
        *,
        repeat_window: str | int = "since_last_write",
        entropy_topk: int = 10,
        entropy_renorm: bool = True,
        entropy_tokens: str = "all",
        percentile: float = 20.0,
        prices: Prices | None = None,
        baseline: str | None = None,
        n_boot: int = RESAMPLES,
        seed: int = 0,
        inputs: list[str] | None = None,
    ) -> None:
        self.prices = prices or Prices()
        self.args = {
            "inputs": inputs or [],
            "repeat_window": repeat_window,
            "entropy_topk": entropy_topk,
            "entropy_renorm": entropy_renorm,
            "entropy_tokens": entropy_tokens,
            "percentile": percentile,
            "prices": self.prices.to_json(),
            "baseline": baseline,
            "n_boot": n_boot,
            "seed": seed,
            "classifiers_version": CLASSIFIERS["version"],
        }
        self.rows: list[dict[str, Any]] = []
        self.sums: dict[Any, ModelSums] = {}

    def row(self, t: Trajectory) -> dict[str, Any]:
        """The trajectory's row (``trajectory_row``), not added."""
        a = self.args
        flags = detect(t, repeat_window=a["repeat_window"])
        ent = [
            turn_entropy(u, topk=a["entropy_topk"], renorm=a["entropy_renorm"],
                         tokens=a["entropy_tokens"])
            for u in t.turns
        ]  # fmt: skip
        return trajectory_row(t, flags, ent, self.prices)

    def add(self, t: Trajectory, row: dict[str, Any] | None = None) -> dict[str, Any]:
        """Count ``t`` (its ``row`` when already computed); returns the row."""
        row = self.row(t) if row is None else row
        self.rows.append(row)
        self.sums.setdefault(t.model, ModelSums()).add(t, row)
        return row

    def document(self) -> dict[str, Any]:
        """The full document described in the module docstring."""
        a, rows = self.args, self.rows
        by_model: dict[Any, list[dict]] = defaultdict(list)
        for r in rows:
            by_model[r["model"]].append(r)
        models, groups = [], []
        for model, mrows in by_model.items():
            by_task: dict[Any, list[dict]] = defaultdict(list)
            for r in mrows:
                by_task[r["task_id"]].append(r)
            ratios = []
            for task, trows in by_task.items():
                var = task_variation(
                    [r["tokens"] for r in trows if r["resolved"] and r["tokens"] is not None]
                )
                ratios.append(var["cmax_cmin"])
                groups.append({"model": model, "task_id": task, "rollouts": len(trows),
                               **_stats(trows), "variation": var})  # fmt: skip
            assoc = _association(mrows, a["percentile"], a["n_boot"], a["seed"])
            models.append(model_row(model, mrows, self.prices, assoc, histogram(ratios),
                                    self.sums[model]))  # fmt: skip
        by_run: dict[Any, list[dict]] = defaultdict(list)
        for r in rows:
            by_run[(r["model"], r["run_id"])].append(r)
        runs = [
            {"model": m, "run_id": run, "trajectories": len(rr), **_stats(rr), **_tool_use(rr)}
            for (m, run), rr in by_run.items()
        ]
        base = next((m for m in models if a["baseline"] is not None
                     and m["model"] == a["baseline"]), None)  # fmt: skip
        for m in models:
            m["relative_inference_cost"] = C.relative_cost(
                m["effective_token_price"], base["effective_token_price"] if base else None
            )
        return {
            "format": FORMAT,
            "producer": producer(analyze, **a),
            "classifiers": CLASSIFIERS,
            "trajectories": rows,
            "models": models,
            "runs": runs,
            "groups": groups,
        }


def analyze(trajs: Iterable[Trajectory], **kw: Any) -> dict[str, Any]:
    """The full document described in the module docstring, over ``trajs`` (any iterable: a
    stream is never held). Keywords: ``repeat_window`` ('since_last_write', 'anywhere' or a
    number of turns), ``entropy_topk``, ``entropy_renorm``, ``entropy_tokens`` ('all' or
    'action_only'), ``percentile`` (of the low-entropy bucket), ``prices``, ``baseline``
    (model whose per-token cost is 1), ``n_boot``, ``seed``, ``inputs`` (recorded)."""
    acc = Analysis(**kw)
    for t in trajs:
        acc.add(t)
    return acc.document()
