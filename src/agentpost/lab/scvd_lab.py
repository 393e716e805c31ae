"""SCVD vs FTD on the lab policy (spec SCVD.md b.7, b.8, (d)): the stage-1 SFT policy is the
student, a scripted verify-and-repair teacher is the teacher (labelled as such in the output).

``run_scvd_lab(out, cfg)``:

1. **D_SC** (b.7): the student samples ``rollouts_per_task`` rollouts on each train task; the
   lab's rule annotator (``lab.verify_rules``) finds t_c by candidate-state replay; from that
   replayed state and the student's own history the teacher continues: it runs the task's check,
   and if the check fails runs the task's solution and the check again, then submits. The hidden
   evaluator grades the final state (R*); kept only when R* = 1. Only the teacher's commands are
   targets (``make_row(train_from=hand-off)``); the student prefix and every observation are
   context. No g_ver text is given: a scripted teacher does not read instructions, so there is
   nothing to remove (the project's ``scvd collect`` does add and remove it for model teachers).
2. **D_FTD** (b.8): the same teacher from scratch on the same tasks (its careful path: look,
   read, solve, check, submit), every command a target; task- and size-matched to D_SC (one
   FTD row per D_SC row, same task).
3. From the same SFT checkpoint, with the same hyperparameters and seeds, fine-tune on each
   (``train.trl_sft`` through ``sft.rows``); evaluate base, FTD and SCVD on the held-out
   split, ``eval_samples`` sampled rollouts per task per seed; metrics PASS@1, ICA, EDR, VPR, RSR,
   W2R, R2W by ``scvd.metrics`` (per seed = run, models = the three policies, bootstrap
   CIs), plus turns and tokens per rollout.

Every stage writes its result and is skipped on a rerun (resumable). Micro scale: directions only.

Layer: edges (torch and transformers imported inside the functions).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentpost.config_checks import at_least, check, positive
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json, write_lines
from agentpost.intervals import RESAMPLES
from agentpost.lab.episodes import Episode, task_plans
from agentpost.lab.stages import PolicyConfig, corpus, family, sft_policy
from agentpost.lab.transcript import SUBMIT, messages
from agentpost.lab.verify_rules import record, replay_to_candidate
from agentpost.sandbox.base import Backend
from agentpost.sft.rows import SFTRow, make_row
from agentpost.tasks.model import Task

FORMAT = fmt("agentpost.lab-scvd")
CAVEAT = ("Micro scale: a ~1M-parameter student trained from scratch on procedural tasks and a "
          "scripted verify-and-repair teacher (not a model). Directions only; not the paper's "
          "numbers.")  # fmt: skip
VARIANTS = ("base", "ftd", "scvd")


@dataclass
class ScvdLabConfig:
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rollouts_per_task: int = 1
    seeds: tuple[int, ...] = (0, 1)
    eval_samples: int = 2
    epochs: float = 2.0
    lr: float = 5e-4
    batch: int = 8
    temperature: float = 1.0
    n_boot: int = RESAMPLES
    # also take prefixes from the scripted hasty and careful agents (other prefix generators,
    # spec b.9); off for the experiment, on for the smoke run so that D_SC is never empty
    scripted_prefixes: bool = False

    def __post_init__(self) -> None:
        check(self, {
            "rollouts_per_task": (at_least(self.rollouts_per_task, 1), "at least 1"),
            "seeds": (bool(self.seeds) and all(at_least(s, 0) for s in self.seeds),
                      "a non-empty tuple of seeds >= 0"),
            "eval_samples": (at_least(self.eval_samples, 1), "at least 1"),
            "epochs": (positive(self.epochs), "> 0"),
            "lr": (positive(self.lr), "> 0"),
            "batch": (at_least(self.batch, 1), "at least 1"),
            "temperature": (self.temperature >= 0, ">= 0 (0: greedy)"),
            "n_boot": (at_least(self.n_boot, 0), "at least 0"),
        })  # fmt: skip

    @classmethod
    def smoke(cls) -> ScvdLabConfig:
        from agentpost.lab.hero_lab import HeroLabConfig

        return cls(policy=HeroLabConfig.smoke().policy, rollouts_per_task=2, seeds=(0,),
                   eval_samples=1, epochs=1.0, n_boot=50, scripted_prefixes=True)  # fmt: skip


def outputs(out: Path) -> dict[str, str]:
    """task id → its output file name, from the family document."""
    doc = json.loads((out / "tasks" / "family.json").read_text())
    return {t["id"]: t["params"]["out"] for split in doc["splits"].values() for t in split}


def teacher_steps(task: Task, env) -> list[tuple[str, str | None]]:
    """The scripted teacher from a candidate state: check; on failure solve and check; submit."""
    plan = task_plans(task)
    check, solve = plan["careful"][3], plan["careful"][2]
    steps = []
    obs, _ = env.step(check)
    steps.append((check, obs))
    if env.exits[-1] != 0:
        for cmd in (solve, check):
            obs, _ = env.step(cmd)
            steps.append((cmd, obs))
    env.step(SUBMIT)
    steps.append((SUBMIT, None))
    return steps


def sc_row(task: Task, ep: Episode, out: str, backend: Backend) -> tuple[SFTRow | None, str]:
    """One D_SC row from one student rollout, or (None, why not)."""
    t_c, env, replayed = replay_to_candidate(task, ep.commands, out, backend, ep.exits)
    if env is None:
        return None, "no candidate"
    try:
        prefix = list(zip(ep.commands[: t_c + 1], replayed, strict=True))
        post = teacher_steps(task, env)
        if not env.resolved():
            return None, "R* = 0"
    finally:
        env.close()
    msgs = messages(task.instruction, prefix + post)
    hand_off = 1 + 2 * len(prefix)  # user, then (assistant, tool) per prefix step
    assert msgs[hand_off]["role"] == "assistant" and msgs[hand_off]["content"] == post[0][0]
    meta = {"task_id": task.id, "source": "lab/student→scripted-teacher", "recipe": "scvd",
            "t_c": t_c, "candidate_ok": len(post) == 2}  # fmt: skip
    return make_row(msgs, train_from=hand_off, meta=meta), "kept"


def ftd_row(task: Task, backend: Backend) -> SFTRow:
    from agentpost.lab.episodes import scripted_episode, to_row

    ep = scripted_episode(task, "careful", backend)
    if not ep.resolved:
        raise RuntimeError(f"{task.id}: the scripted teacher failed from scratch")
    row = to_row(ep)
    row.meta.update({"recipe": "ftd", "source": "lab/scripted-teacher"})
    return row


def collect(out: Path, cfg: ScvdLabConfig, train: list[Task], backend: Backend, progress):
    """D_SC and D_FTD (task- and size-matched), written under ``scvd/data/`` once (Parquet, ``sft.io``)."""
    from agentpost.lab.stages import evaluate_policy
    from agentpost.sft.io import read_rows, write_rows

    d = out / "scvd" / "data"
    if (d / "stats.json").is_file():
        return read_rows(d / "sc.parquet"), read_rows(d / "ftd.parquet"), json.loads(
            (d / "stats.json").read_text())  # fmt: skip
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(str(out / "sft"))
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(out / "sft"))
    outs = outputs(out)
    by_id = {t.id: t for t in train}
    sc: list[SFTRow] = []
    why: dict[str, int] = {}
    for k in range(cfg.rollouts_per_task):
        eps = evaluate_policy(model, tok, train, backend, cfg.policy, agent="lab/student",
                              seed=1000 + k, temperature=cfg.temperature)  # fmt: skip
        for ep in eps:
            row, reason = sc_row(by_id[ep.task_id], ep, outs[ep.task_id], backend)
            why[reason] = why.get(reason, 0) + 1
            if row is not None:
                sc.append(row)
        progress(f"scvd collect: pass {k + 1}/{cfg.rollouts_per_task}, kept {len(sc)}")
    if cfg.scripted_prefixes:
        from agentpost.lab.episodes import scripted_episode

        for t in train:
            for b in ("hasty", "careful"):
                row, reason = sc_row(t, scripted_episode(t, b, backend), outs[t.id], backend)
                why[f"scripted {b}: {reason}"] = why.get(f"scripted {b}: {reason}", 0) + 1
                if row is not None:
                    row.meta["source"] = f"scripted/{b}→scripted-teacher"
                    sc.append(row)
    ftd_by_task = {tid: ftd_row(by_id[tid], backend) for tid in {r.meta["task_id"] for r in sc}}
    ftd = [ftd_by_task[r.meta["task_id"]] for r in sc]
    if not sc:
        raise RuntimeError(
            "D_SC is empty: no student rollout formed a candidate the teacher "
            "could finish; train the student longer (PolicyConfig.sft_epochs)"
        )
    stats = {"student_rollouts": cfg.rollouts_per_task * len(train), "outcomes": why,
             "rows": len(sc), "tasks": len(ftd_by_task),
             "repaired": sum(not r.meta["candidate_ok"] for r in sc)}  # fmt: skip
    d.mkdir(parents=True, exist_ok=True)
    write_rows(sc, d / "sc.parquet")
    write_rows(ftd, d / "ftd.parquet")
    write_json(d / "stats.json", stats)
    return sc, ftd, stats


def finetune(out: Path, cfg: ScvdLabConfig, name: str, rows: list[SFTRow], seed: int) -> Path:
    """The student fine-tuned on ``rows`` (same hyperparameters for FTD and SCVD)."""
    import torch
    import transformers

    from agentpost.train.trl_sft import SFTDefaults, train_sft

    d = out / "scvd" / f"{name}-s{seed}"
    if (d / "done.json").is_file():
        return d
    model = transformers.AutoModelForCausalLM.from_pretrained(str(out / "sft"))
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(out / "sft"))
    torch.manual_seed(seed)
    defaults = SFTDefaults(num_train_epochs=cfg.epochs, learning_rate=cfg.lr, warmup_ratio=0.05,
                           max_length=cfg.policy.size.max_positions,
                           per_device_train_batch_size=cfg.batch, gradient_accumulation_steps=1,
                           gradient_checkpointing=False)  # fmt: skip
    t0 = time.monotonic()
    run = train_sft(rows, model, tok, d, defaults, use_cpu=True, seed=seed)
    info = {"rows": run.rows, "supervised_tokens": run.supervised_tokens,
            "loss_first": run.log[0]["loss"] if run.log else None,
            "loss_last": run.log[-1]["loss"] if run.log else None,
            "train_s": round(time.monotonic() - t0, 1)}  # fmt: skip
    write_json(d / "done.json", info)
    return d


def evaluate_variant(out: Path, cfg: ScvdLabConfig, name: str, path: Path, seed: int, held,
                     backend: Backend) -> list[dict]:  # fmt: skip
    """Held-out metric records of one policy (``eval_samples`` rollouts per task)."""
    import transformers

    from agentpost.lab.stages import evaluate_policy

    f = out / "scvd" / "eval" / f"{name}-s{seed}.jsonl"
    if f.is_file():
        return [json.loads(ln) for ln in f.read_text().splitlines() if ln]
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path))
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(path))
    outs = outputs(out)
    by_id = {t.id: t for t in held}
    recs = []
    for k in range(cfg.eval_samples):
        eps = evaluate_policy(model, tok, held, backend, cfg.policy, agent=f"lab/{name}",
                              seed=seed * 100 + k, temperature=cfg.temperature)  # fmt: skip
        for ep in eps:
            r = record(by_id[ep.task_id], ep, outs[ep.task_id], backend, model=name,
                       run=f"s{seed}")  # fmt: skip
            r.update(sample=k, tokens=ep.cost_tokens)
            recs.append(r)
    f.parent.mkdir(parents=True, exist_ok=True)
    write_lines(f, recs)
    return recs


def summarise(records: list[dict], n_boot: int) -> dict[str, Any]:
    """Per variant: the SCVD metrics with CIs (scvd.metrics), turns and tokens."""
    import numpy as np

    from agentpost.scvd.metrics import compute, from_dicts

    keys = ("model", "run", "task", "I_c", "I_v", "z", "y_c", "y_f")
    recs = from_dicts([{k: r[k] for k in keys} | {"task": f"{r['task']}#{r['sample']}"}
                       for r in records])  # fmt: skip
    m = compute(recs, n_boot=n_boot, ica_population="all_with_missing_as_0")
    out: dict[str, Any] = {}
    for v in sorted({r["model"] for r in records}, key=VARIANTS.index):
        mine = [r for r in records if r["model"] == v]
        ci = m.get("cis", {}).get("per_model", {}).get(v, {})
        row = {
            k: {"mean": m["per_model"][v][k], "ci95": ci.get(k)}
            for k in ("final_acc_all", "ICA", "VTR", "EDR", "VPR", "RSR", "W2R", "R2W")
        }
        row["turns"] = float(np.mean([r["turns"] for r in mine]))
        row["tokens"] = float(np.mean([r["tokens"] for r in mine]))
        row["n"] = len(mine)
        out[v] = row
    return out


def run_scvd_lab(out: str | Path, cfg: ScvdLabConfig, backend: Backend, progress=print) -> dict:
    out = Path(out)
    train, held = family(out, cfg.policy)
    eps = corpus(out, train, backend)
    _, _, sft_info = sft_policy(out, eps, cfg.policy)
    progress(f"student: stage-1 SFT, {sft_info['params']:,} parameters")
    sc, ftd, stats = collect(out, cfg, train, backend, progress)
    progress(f"D_SC {len(sc)} rows ({stats['repaired']} repairs), D_FTD {len(ftd)} rows")
    records: list[dict] = []
    runs: list[dict] = []
    for seed in cfg.seeds:
        for name in VARIANTS:
            path = out / "sft" if name == "base" else finetune(
                out, cfg, name, sc if name == "scvd" else ftd, seed)  # fmt: skip
            progress(f"eval: {name} seed {seed}")
            records += evaluate_variant(out, cfg, name, path, seed, held, backend)
            if name != "base":
                runs.append({"variant": name, "seed": seed,
                             **json.loads((path / "done.json").read_text())})  # fmt: skip
    doc = {
        "format": FORMAT,
        "producer": {**producer(run_scvd_lab, **asdict(cfg)), "caveat": CAVEAT,
                     "teacher": "scripted verify-and-repair (lab.scvd_lab.teacher_steps)",
                     "annotator": "written rules (lab.verify_rules), not an LLM panel"},
        "sft": sft_info,
        "data": stats,
        "table": summarise(records, cfg.n_boot),
        "runs": runs,
    }  # fmt: skip
    write_json(out / "scvd_lab.json", doc, default=str)
    return doc
