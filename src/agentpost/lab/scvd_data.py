"""SCVD data for the lab (spec SCVD.md b.7, b.8): D_SC from the student's hand-offs to the model
teacher, D_FTD from the teacher on its own, matched row for row.

``collect`` (used by ``lab.scvd_lab``): the student samples on each train task; the lab's rule
annotator finds t_c by candidate-state replay; from that replayed state and the student's own
history the teacher continues (all hand-offs decoded in one batch); R* = 1 kept; only the
teacher's commands are targets. D_FTD: the teacher from scratch on the same tasks, R* = 1 kept,
every command a target; ``match`` pairs each D_SC row with an FTD row of the same task so that
both sets also hold the same number of supervised tokens (``lab.matching``).
``ScvdLabConfig.scripted_fallback`` (smoke only) builds both
from scripted parts when a smoke-sized model finishes no hand-off.

Layer: edges (torch and transformers imported inside the functions).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentpost.documents.write import write_json
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.stages import evaluate_policy, load_policy, outputs
from agentpost.lab.transcript import messages
from agentpost.lab.verify_rules import replay_to_candidate
from agentpost.sandbox.base import Backend
from agentpost.sft.rows import SFTRow, make_row
from agentpost.tasks.model import Task

HAND_OFF_BATCH = 48  # hand-off states open at once (each may hold a live sandbox's pipes)


def _hand_offs(student, teacher, tok, tasks: list[Task], outs, backend, memo, cfg, seed):
    """Student rollouts on ``tasks``; the teacher continues each from its candidate state,
    ``HAND_OFF_BATCH`` states at a time (replayed, continued in one batch, closed).
    Returns ([(task, prefix steps, teacher episode) kept], outcome counts)."""
    import torch

    from agentpost.lab.sampling import rollouts

    eps = evaluate_policy(student, tok, tasks, backend, cfg.policy, agent="lab/student",
                          seed=seed, temperature=cfg.temperature, memo=memo)  # fmt: skip
    by_id = {t.id: t for t in tasks}
    why: dict[str, int] = {}
    kept = []
    gen = torch.Generator().manual_seed(seed + 1)
    for i in range(0, len(eps), HAND_OFF_BATCH):
        starts = []
        try:
            for ep in eps[i : i + HAND_OFF_BATCH]:
                task = by_id[ep.task_id]
                t_c, env, replayed = replay_to_candidate(task, ep.commands, outs[task.id],
                                                         backend, ep.exits, memo)  # fmt: skip
                if env is None:
                    why["no candidate"] = why.get("no candidate", 0) + 1
                    continue
                prefix = list(zip(ep.commands[: t_c + 1], replayed, strict=True))
                starts.append((task, prefix, env))
            done = rollouts(teacher, tok, [e for _, _, e in starts], "lab/teacher",
                            max_turns=cfg.teacher_turns, max_new_tokens=cfg.policy.max_new_tokens,
                            temperature=cfg.temperature, generator=gen,
                            prefixes=[p for _, p, _ in starts])  # fmt: skip
        finally:
            for _, _, e in starts:
                e.close()
        for (task, prefix, _), (tep, _) in zip(starts, done, strict=True):
            reason = "kept" if tep.resolved else "R* = 0"
            why[reason] = why.get(reason, 0) + 1
            if tep.resolved:
                kept.append((task, prefix, tep))
    return kept, why


def _row(task: Task, prefix, tep, recipe: str, source: str, out: str) -> SFTRow:
    post = list(zip(tep.commands, tep.observations, strict=True))
    msgs = messages(task.instruction, prefix + post)
    hand_off = 1 + 2 * len(prefix)  # user, then (assistant, tool) per prefix step
    assert not post or msgs[hand_off]["role"] == "assistant"
    meta = {"task_id": task.id, "source": source, "recipe": recipe, "t_c": len(prefix) - 1,
            "out": out}  # fmt: skip
    return make_row(msgs, train_from=hand_off, meta=meta)


def supervised_tokens(rows: list[SFTRow], tok: Any, max_length: int) -> list[int]:
    from agentpost.sft.rows import tokenize_rows

    items, dropped = tokenize_rows(rows, tok, max_length=max_length)
    if dropped:
        raise ValueError(f"rows too long for the policy: {dropped}")
    return [sum(1 for x in t.labels if x != -100) for t in items]


def collect(out: Path, cfg: Any, train: list[Task], backend: Backend, memo: Memo,
            progress: Callable[[str], None]):  # fmt: skip
    """D_SC and D_FTD (matched), written under ``scvd/data/`` once (Parquet)."""
    import torch

    from agentpost.lab.sampling import rollouts
    from agentpost.sft.io import read_rows, write_rows

    d = out / "scvd" / "data"
    if (d / "stats.json").is_file():
        return read_rows(d / "sc.parquet"), read_rows(d / "ftd.parquet"), json.loads(
            (d / "stats.json").read_text())  # fmt: skip
    student, tok = load_policy(out / "sft", cfg.policy.device)
    teacher, _ = load_policy(out / "teacher", cfg.policy.device)
    outs = outputs(out)
    sc: list[SFTRow] = []
    why: dict[str, int] = {}
    for k in range(cfg.rollouts_per_task):
        kept, w = _hand_offs(student, teacher, tok, train, outs, backend, memo, cfg, 1000 + k)
        for key, v in w.items():
            why[key] = why.get(key, 0) + v
        sc += [_row(t, p, e, "scvd", "lab/student→lab/teacher", outs[t.id]) for t, p, e in kept]
        progress(f"scvd collect: pass {k + 1}/{cfg.rollouts_per_task}, kept {len(sc)}")
    tasks = sorted({r.meta["task_id"] for r in sc})
    by_id = {t.id: t for t in train}
    jobs = [by_id[t] for _ in range(cfg.ftd_samples) for t in tasks]
    pool: dict[str, list[SFTRow]] = {}
    gen = torch.Generator().manual_seed(7)
    for i in range(0, len(jobs), 48):
        envs = [LabEnv(t, backend, memo) for t in jobs[i : i + 48]]
        try:
            done = rollouts(teacher, tok, envs, "lab/teacher", max_turns=cfg.policy.max_turns,
                            max_new_tokens=cfg.policy.max_new_tokens,
                            temperature=cfg.temperature, generator=gen)  # fmt: skip
        finally:
            for e in envs:
                e.close()
        for env, (ep, _) in zip(envs, done, strict=True):
            if ep.resolved:
                pool.setdefault(ep.task_id, []).append(
                    _row(env.task, [], ep, "ftd", "lab/teacher (from scratch)", outs[ep.task_id]))  # fmt: skip
    hand_offs = len(sc)
    sc, ftd = match(sc, pool, tok, cfg.policy.size.max_positions, cfg.token_tol)
    fallback = not sc and cfg.scripted_fallback
    if fallback:
        sc, pool = _scripted_rows(train, outs, backend, memo)
        sc, ftd = match(sc, pool, tok, cfg.policy.size.max_positions, cfg.token_tol)
    if not sc:
        raise RuntimeError("D_SC is empty after matching: no hand-off the teacher finished, or "
                           "no task the teacher solved from scratch; train longer")  # fmt: skip
    n_sc = supervised_tokens(sc, tok, cfg.policy.size.max_positions)
    n_ftd = supervised_tokens(ftd, tok, cfg.policy.size.max_positions)
    stats_ = {"student_rollouts": cfg.rollouts_per_task * len(train), "outcomes": why,
              "hand_offs_kept": hand_offs, "rows": len(sc),
              "tasks": len({r.meta["task_id"] for r in sc}),
              "repairs": sum(_repaired(r) for r in sc),
              "supervised_tokens": {"sc": sum(n_sc), "ftd": sum(n_ftd)},
              "token_tol": cfg.token_tol,
              "ftd_pool": {"tasks": len(pool), "rows": sum(map(len, pool.values())),
                           "attempts": len(jobs)},
              "fallback": "scripted prefixes and continuations (smoke)" if fallback else None}  # fmt: skip
    d.mkdir(parents=True, exist_ok=True)
    write_rows(sc, d / "sc.parquet")
    write_rows(ftd, d / "ftd.parquet")
    write_json(d / "stats.json", stats_)
    return sc, ftd, stats_


def _scripted_rows(train: list[Task], outs: dict[str, str], backend: Backend, memo: Memo):
    """The smoke fallback: D_SC from the scripted ``hasty-look`` prefix and the scripted verified
    continuation (check, repair, check, submit); the FTD pool from the verified ``careful``."""
    from agentpost.lab.episodes import Episode, scripted_episode

    sc, pool = [], {}
    for t in train:
        plan = scripted_episode(t, "hasty-look", backend, memo, teacher=True)
        at = 3  # ls, read, wrong: the candidate is the third command
        prefix = list(zip(plan.commands[:at], plan.observations[:at], strict=True))
        post = Episode(t.id, "scripted", t.instruction, plan.commands[at:],
                       plan.observations[at:], plan.exits[at:], plan.resolved)  # fmt: skip
        sc.append(_row(t, prefix, post, "scvd", "scripted fallback (smoke)", outs[t.id]))
        ftd = scripted_episode(t, "careful", backend, memo, teacher=True)
        pool[t.id] = [_row(t, [], ftd, "ftd", "scripted fallback (smoke)", outs[t.id])]
    return sc, pool


def _repaired(row: SFTRow) -> bool:
    """Did the teacher rewrite the student's candidate (a repair) after the hand-off?"""
    from agentpost.lab.verify_rules import writes

    post = [m["content"] for m in row.messages[1:] if m["role"] == "assistant" and m["train"]]
    return any(writes(c, row.meta["out"]) for c in post)


def match(sc: list[SFTRow], pool: dict[str, list[SFTRow]], tok: Any, max_length: int,
          tol: float = 0.01):  # fmt: skip
    """D_SC and D_FTD matched in tasks, rows and supervised tokens (``lab.matching.assign``):
    each kept D_SC row gets one FTD row of the same task (without replacement), and the two
    totals of supervised tokens differ by at most ``tol`` of the larger where the pool allows;
    D_SC rows of a task with no FTD row left, or dropped to balance the totals, are left out
    (the intersection, as the paper's task- and size-matching)."""
    from agentpost.lab.matching import assign

    counts = {t: supervised_tokens(rows, tok, max_length) for t, rows in pool.items()}
    sc_n = supervised_tokens(sc, tok, max_length) if sc else []
    keys = [(r.meta["task_id"], n) for r, n in zip(sc, sc_n, strict=True)]
    pick = assign(keys, counts, tol)
    out_sc = [r for r, j in zip(sc, pick, strict=True) if j is not None]
    out_ftd = [pool[r.meta["task_id"]][j] for r, j in zip(sc, pick, strict=True) if j is not None]
    return out_sc, out_ftd
