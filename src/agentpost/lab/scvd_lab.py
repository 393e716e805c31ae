"""SCVD vs FTD on the lab policy with a model teacher (spec SCVD.md b.7, b.8, (d)).

The student is the stage-1 SFT policy (``lab.stages``: its mixture forms a candidate in every
rollout and a wrong one in about half, of a kind the task's check exposes). The teacher is the
student's checkpoint trained further on the verified behaviours (``transcript.verified``: after
any candidate it checks, and after a failed check it repairs and checks again): a longer-trained
policy of the same family; it is a model that samples, not a script, and its continuations can
fail (then R* drops them).

``run_scvd_lab(out, cfg)``:

1. **D_SC** (b.7): the student samples ``rollouts_per_task`` rollouts on each train task; the
   lab's rule annotator (``lab.verify_rules``) finds t_c by candidate-state replay; from that
   replayed state and the student's own history the teacher continues (all hand-offs decoded in
   one batch); the hidden evaluator grades the final state (R*), kept when R* = 1. Only the
   teacher's commands are targets (``make_row(train_from=hand-off)``). No g_ver text: the lab
   teacher was trained to verify, so there is no collection-only instruction to remove (the
   project's ``scvd collect`` adds and removes it for instruction-following teachers).
2. **D_FTD** (b.8): the teacher from scratch on the same tasks (``ftd_samples`` per task, R* = 1
   kept, every command a target); then matched to D_SC row for row, same task, picking the
   candidate whose supervised token count is closest to the D_SC row's: same tasks, same rows,
   supervised tokens reported side by side (``data.supervised_tokens``).
3. From the same student checkpoint, with the same hyperparameters and seeds, fine-tune on each
   (``train.trl_sft``); evaluate base, FTD and SCVD on the held-out split, ``eval_samples``
   rollouts per task per seed; per rollout I_c, I_v, z, y_c, y_f (``verify_rules.record``), and
   the table with intervals over seeds and tasks (``lab.stats``); a verdict per pre-registered
   direction (``lab.directions.SCVD``).

Every stage writes its result and is skipped on a rerun (resumable). Micro scale: directions only.

Layer: edges (torch and transformers imported inside the functions).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentpost.config_checks import at_least, check, positive
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json, write_lines
from agentpost.lab import directions, stats
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.stages import (
    PolicyConfig,
    evaluate_policy,
    load_policy,
    outputs,
    sft_policy,
    student,
)
from agentpost.lab.transcript import messages
from agentpost.lab.verify_rules import record, replay_to_candidate
from agentpost.sandbox.base import Backend
from agentpost.sft.rows import SFTRow, make_row
from agentpost.tasks.model import Task

FORMAT = fmt("agentpost.lab-scvd")
CAVEAT = ("Micro scale: a ~1M-parameter student trained from scratch on procedural tasks whose "
          "parameters come from a closed vocabulary, and a teacher of the same family trained "
          "longer on verify-and-repair behaviour. Directions only; not the paper's numbers.")  # fmt: skip
VARIANTS = ("base", "ftd", "scvd")
RATES = (
    "pass1",
    "ICA",
    "VTR",
    "EDR",
    "VPR",
    "RSR",
    "W2R",
    "R2W",
)  # shares of rollouts: Wilson-floored intervals (``stats.estimate``)
METRICS = ("pass1", "ICA", "VTR", "EDR", "VPR", "RSR", "W2R", "R2W", "turns", "tokens",
           "turns_success")  # fmt: skip


@dataclass
class ScvdLabConfig:
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rollouts_per_task: int = 1
    ftd_samples: int = 3
    teacher_turns: int = 6
    seeds: tuple[int, ...] = (0, 1, 2)
    eval_samples: int = 4
    epochs: float = 2.0
    lr: float = 5e-4
    batch: int = 16
    temperature: float = 1.0
    n_boot: int = 2000
    # smoke only: a smoke-sized model finishes no hand-off, so D_SC/D_FTD would be empty and the
    # fine-tunes untested; then they are built from scripted prefixes and the scripted verified
    # continuation instead, and the document says so (``data.fallback``)
    scripted_fallback: bool = False

    def __post_init__(self) -> None:
        check(self, {
            "rollouts_per_task": (at_least(self.rollouts_per_task, 1), "at least 1"),
            "ftd_samples": (at_least(self.ftd_samples, 1), "at least 1"),
            "teacher_turns": (at_least(self.teacher_turns, 1), "at least 1"),
            "seeds": (bool(self.seeds) and all(at_least(s, 0) for s in self.seeds),
                      "a non-empty tuple of seeds >= 0"),
            "eval_samples": (at_least(self.eval_samples, 1), "at least 1"),
            "epochs": (positive(self.epochs), "> 0"),
            "lr": (positive(self.lr), "> 0"),
            "batch": (at_least(self.batch, 1), "at least 1"),
            "temperature": (self.temperature >= 0, ">= 0 (0: greedy)"),
            "n_boot": (at_least(self.n_boot, 1), "at least 1"),
        })  # fmt: skip


def _hand_offs(student, teacher, tok, tasks: list[Task], outs, backend, memo, cfg, seed):
    """Student rollouts on ``tasks``; the teacher continues each from its candidate state.
    Returns ([(task, prefix steps, teacher episode) kept], outcome counts)."""
    import torch

    from agentpost.lab.sampling import rollouts

    eps = evaluate_policy(student, tok, tasks, backend, cfg.policy, agent="lab/student",
                          seed=seed, temperature=cfg.temperature, memo=memo)  # fmt: skip
    by_id = {t.id: t for t in tasks}
    why: dict[str, int] = {}
    starts = []
    for ep in eps:
        task = by_id[ep.task_id]
        t_c, env, replayed = replay_to_candidate(task, ep.commands, outs[task.id], backend,
                                                 ep.exits, memo)  # fmt: skip
        if env is None:
            why["no candidate"] = why.get("no candidate", 0) + 1
            continue
        starts.append((task, list(zip(ep.commands[: t_c + 1], replayed, strict=True)), env))
    kept = []
    gen = torch.Generator().manual_seed(seed + 1)
    for i in range(0, len(starts), 48):
        chunk = starts[i : i + 48]
        try:
            done = rollouts(teacher, tok, [e for _, _, e in chunk], "lab/teacher",
                            max_turns=cfg.teacher_turns, max_new_tokens=cfg.policy.max_new_tokens,
                            temperature=cfg.temperature, generator=gen,
                            prefixes=[p for _, p, _ in chunk])  # fmt: skip
        finally:
            for _, _, e in chunk:
                e.close()
        for (task, prefix, _), (tep, _) in zip(chunk, done, strict=True):
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


def collect(out: Path, cfg: ScvdLabConfig, train: list[Task], backend: Backend, memo: Memo,
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
    sc, ftd = match(sc, pool, tok, cfg.policy.size.max_positions)
    fallback = not sc and cfg.scripted_fallback
    if fallback:
        sc, pool = _scripted_rows(train, outs, backend, memo)
        sc, ftd = match(sc, pool, tok, cfg.policy.size.max_positions)
    if not sc:
        raise RuntimeError("D_SC is empty after matching: no hand-off the teacher finished, or "
                           "no task the teacher solved from scratch; train longer")  # fmt: skip
    n_sc = supervised_tokens(sc, tok, cfg.policy.size.max_positions)
    n_ftd = supervised_tokens(ftd, tok, cfg.policy.size.max_positions)
    stats_ = {"student_rollouts": cfg.rollouts_per_task * len(train), "outcomes": why,
              "rows": len(sc), "tasks": len({r.meta["task_id"] for r in sc}),
              "repairs": sum(_repaired(r) for r in sc),
              "supervised_tokens": {"sc": sum(n_sc), "ftd": sum(n_ftd)},
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


def match(sc: list[SFTRow], pool: dict[str, list[SFTRow]], tok: Any, max_length: int):
    """Row-for-row matching: each D_SC row gets an FTD row of the same task (without
    replacement) whose supervised token count is closest to its own; D_SC rows of a task with
    no FTD row left are dropped (the intersection, as the paper's task- and size-matching)."""
    left = {t: list(zip(rows, supervised_tokens(rows, tok, max_length), strict=True))
            for t, rows in pool.items()}  # fmt: skip
    sc_n = supervised_tokens(sc, tok, max_length) if sc else []
    out_sc, out_ftd = [], []
    for row, n in zip(sc, sc_n, strict=True):
        cands = left.get(row.meta["task_id"]) or []
        if not cands:
            continue
        j = min(range(len(cands)), key=lambda i: abs(cands[i][1] - n))
        out_sc.append(row)
        out_ftd.append(cands.pop(j)[0])
    return out_sc, out_ftd


def finetune(out: Path, cfg: ScvdLabConfig, name: str, rows: list[SFTRow], seed: int) -> Path:
    """The student fine-tuned on ``rows`` (same hyperparameters for FTD and SCVD)."""
    import torch

    from agentpost.train.trl_sft import SFTDefaults, train_sft

    d = out / "scvd" / f"{name}-s{seed}"
    if (d / "done.json").is_file():
        return d
    model, tok = load_policy(out / "sft", cfg.policy.device)
    torch.manual_seed(seed)
    defaults = SFTDefaults(num_train_epochs=cfg.epochs, learning_rate=cfg.lr, warmup_ratio=0.05,
                           max_length=cfg.policy.size.max_positions,
                           per_device_train_batch_size=cfg.batch, gradient_accumulation_steps=1,
                           gradient_checkpointing=False)  # fmt: skip
    t0 = time.monotonic()
    run = train_sft(
        rows,
        model,
        tok,
        d,
        defaults,
        use_cpu=cfg.policy.device == "cpu",
        seed=seed,
        disable_tqdm=True,
    )
    info = {"rows": run.rows, "supervised_tokens": run.supervised_tokens,
            "steps": len(run.log),
            "loss_first": run.log[0]["loss"] if run.log else None,
            "loss_last": run.log[-1]["loss"] if run.log else None,
            "train_s": round(time.monotonic() - t0, 1)}  # fmt: skip
    write_json(d / "done.json", info)
    return d


def evaluate_variant(out: Path, cfg: ScvdLabConfig, name: str, path: Path, seed: int, held,
                     backend: Backend, memo: Memo) -> list[dict]:  # fmt: skip
    """Held-out metric records of one policy (``eval_samples`` rollouts per task)."""
    f = out / "scvd" / "eval" / f"{name}-s{seed}.jsonl"
    if f.is_file():
        return [json.loads(ln) for ln in f.read_text().splitlines() if ln]
    model, tok = load_policy(path, cfg.policy.device)
    outs = outputs(out)
    by_id = {t.id: t for t in held}
    eps = evaluate_policy(model, tok, held, backend, cfg.policy, agent=f"lab/{name}",
                          seed=20_000 + seed, temperature=cfg.temperature,
                          samples=cfg.eval_samples, memo=memo)  # fmt: skip
    recs = []
    for i, ep in enumerate(eps):
        r = record(by_id[ep.task_id], ep, outs[ep.task_id], backend, model=name, run=f"s{seed}",
                   memo=memo)  # fmt: skip
        r.update(sample=i // len(held), tokens=ep.cost_tokens)
        recs.append(r)
    f.parent.mkdir(parents=True, exist_ok=True)
    write_lines(f, recs)
    return recs


def _cell_values(r: dict) -> dict[str, tuple[float, float]]:
    """(numerator, denominator) of each metric for one rollout (spec b.6 eligible sets; ICA
    with missing y_c as 0, PASS@1 over all rollouts; W2R/R2W over the valid-y_c set)."""
    nan = float("nan")
    yc, yf, z = r["y_c"], float(r["y_f"]), r["z"]
    valid = r["I_c"] and r["I_v"] and yc is not None
    out = {"pass1": (yf, 1.0), "ICA": (float(yc == 1), 1.0),
           "VTR": (float(r["I_v"]), 1.0) if r["I_c"] else (nan, nan),
           "EDR": (float(z == "error"), 1.0) if valid and yc == 0 else (nan, nan),
           "VPR": (float(yc == 1), 1.0) if valid and z == "no-error" else (nan, nan),
           "RSR": (yf, 1.0) if valid and yc == 0 and z == "error" else (nan, nan),
           "W2R": (float(yc == 0 and yf == 1), 1.0) if valid else (nan, nan),
           "R2W": (float(yc == 1 and yf == 0), 1.0) if valid else (nan, nan),
           "turns": (float(r["turns"]), 1.0), "tokens": (float(r["tokens"]), 1.0),
           "turns_success": (float(r["turns"]) * yf, yf)}  # fmt: skip
    return out


def cells(runs: dict[int, list[dict]], tasks: list[str], k: int) -> dict[str, tuple]:
    seeds = sorted(runs)
    t_ix = {t: i for i, t in enumerate(tasks)}
    shape = (len(seeds), len(tasks), k)
    num = {m: np.full(shape, np.nan) for m in METRICS}
    den = {m: np.full(shape, np.nan) for m in METRICS}
    for s, seed in enumerate(seeds):
        for r in runs[seed]:
            i, j = t_ix[r["task"]], r["sample"]
            for m, (a, b) in _cell_values(r).items():
                num[m][s, i, j], den[m][s, i, j] = a, b
    return {m: (num[m], den[m]) for m in METRICS}


def table(arms: dict[str, dict[int, list[dict]]], tasks: list[str], k: int, n_boot: int,
          seed: int = 0) -> dict[str, Any]:  # fmt: skip
    c = {a: cells(runs, tasks, k) for a, runs in arms.items()}
    n_seeds = len(next(iter(arms.values())))
    d = stats.draws(n_seeds, len(tasks), n_boot, seed)
    rows: dict[str, Any] = {}
    for arm, cc in c.items():
        row: dict[str, Any] = {m: stats.estimate(*cc[m], d, m in RATES) for m in METRICS}
        if arm != "base" and "base" in c:
            for m in METRICS:
                row[m]["delta_vs_base"] = stats.difference(cc[m], c["base"][m], d)
        row["n"] = int(np.sum(~np.isnan(cc["pass1"][0])))
        rows[arm] = row
    verdicts = []
    for dr in directions.SCVD:
        if dr.b is None:
            est = stats.estimate(*c[dr.a][dr.metric], d, dr.metric in RATES)
        else:
            est = stats.difference(c[dr.a][dr.metric], c[dr.b][dr.metric], d)
        verdicts.append({**dr.to_json(), "estimate": est,
                         "verdict": directions.verdict(dr, est["ci95"])})  # fmt: skip
    return {"arms": rows, "directions": verdicts}


def run_scvd_lab(out: str | Path, cfg: ScvdLabConfig, backend: Backend,
                 progress: Callable[[str], None] = print) -> dict:  # fmt: skip
    from agentpost.lab.sampling import one_thread

    one_thread()
    out = Path(out)
    t_start = time.monotonic()
    train, held, memo, _, teps, _, tok, sft_info = student(out, cfg.policy, backend, progress)
    _, _, teacher_info = sft_policy(out, teps, tok, cfg.policy, name="teacher",
                                    epochs=cfg.policy.teacher_epochs, init=out / "sft")  # fmt: skip
    progress(f"teacher: the student + {cfg.policy.teacher_epochs} epochs on verified behaviour, "
             f"loss {teacher_info['loss_first']:.3f} → {teacher_info['loss_last']:.3f}")  # fmt: skip
    sc, ftd, data = collect(out, cfg, train, backend, memo, progress)
    progress(f"D_SC {len(sc)} rows ({data['repairs']} repairs), D_FTD {len(ftd)} rows; "
             f"supervised tokens {data['supervised_tokens']}")  # fmt: skip
    arms: dict[str, dict[int, list[dict]]] = {v: {} for v in VARIANTS}
    runs: list[dict] = []
    for seed in cfg.seeds:
        for name in VARIANTS:
            path = out / "sft" if name == "base" else finetune(
                out, cfg, name, sc if name == "scvd" else ftd, seed)  # fmt: skip
            progress(f"eval: {name} seed {seed}")
            arms[name][seed] = evaluate_variant(out, cfg, name, path, seed, held, backend, memo)
            if name != "base":
                runs.append({"variant": name, "seed": seed,
                             **json.loads((path / "done.json").read_text())})  # fmt: skip
    tab = table(arms, [t.id for t in held], cfg.eval_samples, cfg.n_boot)
    teacher_eval = _teacher_eval(out, cfg, held, backend, memo)
    doc = {
        "format": FORMAT,
        "producer": {**producer(run_scvd_lab, **asdict(cfg)), "caveat": CAVEAT,
                     "teacher": "the student's checkpoint trained further on verified "
                                "behaviour (lab.stages.sft_policy name='teacher')",
                     "annotator": "written rules (lab.verify_rules), not an LLM panel"},
        "sft": sft_info,
        "teacher": {**teacher_info, "heldout_pass1": teacher_eval},
        "data": data,
        "seeds": list(cfg.seeds),
        "table": tab["arms"],
        "directions": tab["directions"],
        "runs": runs,
        "wall_s": round(time.monotonic() - t_start, 1),
    }  # fmt: skip
    write_json(out / "scvd_lab.json", doc, default=str)
    return doc


def _teacher_eval(out: Path, cfg: ScvdLabConfig, held, backend, memo) -> float:
    """The teacher's own held-out PASS@1 (one sample per task), cached."""
    f = out / "teacher" / "heldout.json"
    if not f.is_file():
        model, tok = load_policy(out / "teacher", cfg.policy.device)
        eps = evaluate_policy(model, tok, held, backend, cfg.policy, agent="lab/teacher",
                              seed=30_000, temperature=cfg.temperature, memo=memo)  # fmt: skip
        write_json(f, {"pass1": float(np.mean([e.resolved for e in eps]))})
    return json.loads(f.read_text())["pass1"]
