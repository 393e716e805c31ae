"""The lab's shared stages: the task family, the scripted corpora, the policies, evaluation.

Each stage writes its result under the experiment folder and is skipped when that result is
already there, so a killed experiment resumes where it stopped (the RL runs resume per variant
and seed: ``lab.hero_lab``). What each stage writes:

- ``tasks/``: the family (``lab.tasks.write_family``);
- ``memo.sqlite``: the sandbox answers of all-scripted histories (``lab.env.Memo``);
- ``corpus/student.jsonl``, ``corpus/teacher.jsonl``: scripted episodes on the train split as
  canonical trajectories: the student's mixture (``transcript.STUDENT``) and its verified forms
  (``transcript.verified``), from which the SFT rows are rebuilt;
- ``tokenizer/``: one BPE tokenizer for both policies (the teacher continues the student's
  transcripts token for token);
- ``sft/``: the student after stage-0 (copy rows, optional) and stage-1 SFT on its mixture;
  ``teacher/``: the teacher, the student's checkpoint trained further on the verified
  behaviours (a longer-trained policy of the same family that always verifies); both
  through ``train.trl_sft`` (the project's SFT path: ``sft.rows`` rows, labels only on
  the commands).

Layer: edges (torch and transformers imported inside the functions).
"""

from __future__ import annotations

import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentpost.config_checks import at_least, check, positive
from agentpost.documents.write import refuse_links_below, write_json
from agentpost.lab.curriculum import copy_rows
from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.episodes import Episode, scripted_episode, to_row, to_trajectory
from agentpost.lab.policy import PolicySize, lab_llama, n_params, train_tokenizer
from agentpost.lab.tasks import write_family
from agentpost.lab.transcript import MAX_TURNS, SPECIAL, STUDENT, TEMPLATE
from agentpost.sandbox.base import Backend
from agentpost.tasks.loader import load_suite
from agentpost.tasks.model import Task
from agentpost.trajectory.io import read_jsonl, write_jsonl

EVAL_BATCH = 48  # rollouts decoded together


@dataclass
class PolicyConfig:
    """The tasks, corpora and SFT every lab experiment starts from."""

    seed: int = 0
    n_train: int = 300
    n_heldout: int = 30
    vocab_size: int = 1024
    size: PolicySize = field(default_factory=PolicySize)
    # stage 1: 3 epochs (2 left the SFT policy at 0.52 held-out resolution, half the tasks'
    # groups of 8 below 0.4: more training moves it toward the mixture's design point, 4/6)
    sft_epochs: float = 3.0
    sft_lr: float = 2e-3
    sft_batch: int = 16
    # stage 0: the short "direct" episodes (+ ``copy_rows`` rows of lab.curriculum) for
    # ``copy_epochs`` at a constant rate, before stage 1: measured, the parameter tokens of the
    # commands stay at chance (loss ln 6) after 3 epochs of the whole mixture, and reach 100% on
    # the direct rows after 20 epochs of them alone (the copy forms on short rows first)
    copy_rows: int = 0
    copy_epochs: float = 20.0
    one_slot: bool = True  # lab.taskgen: one parameter per instance read from the instruction
    max_turns: int = MAX_TURNS
    max_new_tokens: int = 96
    # the SCVD teacher: the student's checkpoint trained further on the verified behaviours
    teacher_epochs: float = 1.0
    device: str = "cpu"  # "cuda" for scripts/lab-gpu.sh

    def __post_init__(self) -> None:
        check(self, {
            "n_train": (at_least(self.n_train, 1), "at least 1"),
            "n_heldout": (at_least(self.n_heldout, 1), "at least 1"),
            "vocab_size": (at_least(self.vocab_size, len(SPECIAL) + 1),
                           f"at least {len(SPECIAL) + 1} (the special tokens and one more)"),
            "sft_epochs": (positive(self.sft_epochs), "> 0"),
            "sft_lr": (positive(self.sft_lr), "> 0"),
            "sft_batch": (at_least(self.sft_batch, 1), "at least 1"),
            "copy_rows": (at_least(self.copy_rows, 0), "at least 0"),
            "copy_epochs": (positive(self.copy_epochs), "> 0"),
            "max_turns": (at_least(self.max_turns, 1), "at least 1"),
            "max_new_tokens": (at_least(self.max_new_tokens, 1), "at least 1"),
            "teacher_epochs": (positive(self.teacher_epochs), "> 0"),
            "device": (self.device in ("cpu", "cuda"), "cpu or cuda"),
        })  # fmt: skip


def family(out: Path, cfg: PolicyConfig) -> tuple[list[Task], list[Task]]:
    root = out / "tasks"
    if not (root / "family.json").is_file():
        write_family(root, cfg.seed, cfg.n_train, cfg.n_heldout, one_slot=cfg.one_slot)
    return load_suite(root / "train"), load_suite(root / "heldout")


def memo_for(out: Path) -> Memo:
    return Memo(out / "memo.sqlite")


def corpus(
    out: Path, train: list[Task], backend: Backend, memo: Memo | None = None, *,
    teacher: bool = False, workers: int = 2,
) -> list[Episode]:  # fmt: skip
    """Scripted episodes of every behaviour on every train task (real sandboxes; ``teacher``:
    the verified forms)."""
    path = out / "corpus" / ("teacher.jsonl" if teacher else "student.jsonl")
    if not path.is_file():
        jobs = [(t, b) for t in train for b in STUDENT]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            eps = list(pool.map(lambda j: scripted_episode(j[0], j[1], backend, memo, teacher),
                                jobs))  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, [to_trajectory(e, run_id="lab-corpus") for e in eps])
    return [from_trajectory(t) for t in read_jsonl(path)]


def from_trajectory(traj) -> Episode:
    ep = Episode(traj.task_id or "", traj.agent or "", traj.instruction or "")
    for turn in traj.turns:
        call = turn.tool_calls[0]
        ep.commands.append(call.command or "submit")
        obs = turn.observations[0] if turn.observations else None
        ep.observations.append(obs.text if obs else None)
        ep.exits.append(obs.exit_code if obs else None)
    ep.resolved = bool(traj.outcome.resolved)
    return ep


def tokenizer(out: Path, eps: list[Episode], cfg: PolicyConfig) -> Any:
    """The shared tokenizer (trained once on every corpus row's text, then loaded)."""
    import transformers

    d = out / "tokenizer"
    if (d / "tokenizer.json").is_file():
        return transformers.PreTrainedTokenizerFast.from_pretrained(str(d))
    texts = [" ".join(str(m["content"]) for m in to_row(e).messages) for e in eps]
    tok = train_tokenizer(texts, cfg.vocab_size)
    assert tok.chat_template == TEMPLATE
    tok.save_pretrained(str(d))
    return tok


def load_policy(path: Path, device: str = "cpu") -> tuple[Any, Any]:
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(str(path)).to(device)
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(path))
    return model, tok


def sft_policy(
    out: Path, eps: list[Episode], tok: Any, cfg: PolicyConfig, *, name: str = "sft",
    size: PolicySize | None = None, epochs: float | None = None, stage0: bool = True,
    init: Path | None = None,
) -> tuple[Any, Any, dict]:  # fmt: skip
    """A policy trained on ``eps``, from scratch (stage 0 first when ``stage0`` and
    ``cfg.copy_rows``) or from the checkpoint ``init`` (the teacher: the student trained
    further), saved under ``out/name`` (loaded when already trained)."""
    import torch

    d = out / name
    if (d / "sft.json").is_file():
        model, tok = load_policy(d, cfg.device)
        return model, tok, json.loads((d / "sft.json").read_text())
    rows = [to_row(e) for e in eps]
    if init is not None:
        model, _ = load_policy(init, cfg.device)
    else:
        model = lab_llama(tok, seed=cfg.seed, size=size or cfg.size).to(cfg.device)
    torch.manual_seed(cfg.seed)
    stages = {}
    if stage0 and init is None:
        direct = [to_row(e) for e in eps if e.agent.endswith("/direct")]
        rows0 = copy_rows(cfg.copy_rows, cfg.seed) + direct
        random.Random(cfg.seed).shuffle(rows0)
        stages["stage0"] = _train(rows0, model, tok, d / "stage0", cfg, cfg.copy_epochs,
                                  schedule="constant")  # fmt: skip
    stages["stage1"] = _train(rows, model, tok, d, cfg, epochs or cfg.sft_epochs)
    info = {"params": n_params(model), "vocab": len(tok), **{k: stages["stage1"][k] for k in
            ("rows", "dropped", "supervised_tokens", "loss_first", "loss_last")},
            "stages": stages, "init": str(init) if init else None,
            "config": asdict(cfg)}  # fmt: skip
    write_json(d / "sft.json", info)
    return model, tok, info


def _train(rows, model, tok, d: Path, cfg: PolicyConfig, epochs: float,
           schedule: str = "cosine") -> dict:  # fmt: skip
    """One SFT stage through the project's SFT path (``train.trl_sft``)."""
    from agentpost.train.trl_sft import SFTDefaults, train_sft

    defaults = SFTDefaults(num_train_epochs=epochs, learning_rate=cfg.sft_lr,
                           lr_scheduler_type=schedule,
                           warmup_ratio=0.0 if schedule == "constant" else 0.05,
                           max_length=cfg.size.max_positions,
                           per_device_train_batch_size=cfg.sft_batch,
                           gradient_accumulation_steps=1, gradient_checkpointing=False)  # fmt: skip
    t0 = time.monotonic()
    run = train_sft(rows, model, tok, d, defaults, use_cpu=cfg.device == "cpu", seed=cfg.seed,
                    save=d.name != "stage0", disable_tqdm=True)  # fmt: skip
    return {"rows": run.rows, "dropped": run.dropped, "supervised_tokens": run.supervised_tokens,
            "loss_first": run.log[0]["loss"] if run.log else None,
            "loss_last": run.log[-1]["loss"] if run.log else None,
            "epochs": epochs, "train_s": round(time.monotonic() - t0, 1)}  # fmt: skip


def evaluate_policy(
    model: Any, tok: Any, tasks: list[Task], backend: Backend, cfg: PolicyConfig, *,
    agent: str, seed: int, temperature: float = 1.0, samples: int = 1,
    memo: Memo | None = None,
) -> list[Episode]:  # fmt: skip
    """``samples`` sampled rollouts per task (seeded; sample-major order), graded by each
    task's hidden evaluator; decoded ``EVAL_BATCH`` at a time."""
    import torch

    from agentpost.lab.sampling import rollouts

    gen = torch.Generator().manual_seed(seed)
    jobs = [t for _ in range(samples) for t in tasks]
    eps: list[Episode] = []
    for i in range(0, len(jobs), EVAL_BATCH):
        envs = [LabEnv(t, backend, memo) for t in jobs[i : i + EVAL_BATCH]]
        try:
            done = rollouts(model, tok, envs, agent, max_turns=cfg.max_turns,
                            max_new_tokens=cfg.max_new_tokens, temperature=temperature,
                            generator=gen)  # fmt: skip
        finally:
            for e in envs:
                e.close()
        eps += [ep for ep, _ in done]
    return eps


def outputs(out: Path) -> dict[str, str]:
    """task id → its output file name, from the family document."""
    doc = json.loads((out / "tasks" / "family.json").read_text())
    return {t["id"]: t["params"]["out"] for split in doc["splits"].values() for t in split}


def student(out: Path, cfg: PolicyConfig, backend: Backend, progress=print):
    """Tasks, memo, both corpora, the shared tokenizer and the SFT student (each made once):
    ``(train, held, memo, student episodes, teacher episodes, model, tok, sft info)``. The
    experiment folder may hold no link below it (its stages write by path)."""
    refuse_links_below(out)
    train, held = family(out, cfg)
    progress(f"tasks: {len(train)} train, {len(held)} held-out")
    memo = memo_for(out)
    eps = corpus(out, train, backend, memo)
    teps = corpus(out, train, backend, memo, teacher=True)
    progress(f"corpus: {len(eps)} student and {len(teps)} teacher episodes")
    tok = tokenizer(out, eps + teps, cfg)
    model, tok, info = sft_policy(out, eps, tok, cfg)
    progress(f"sft: {info['params']:,} parameters, loss {info['loss_first']:.3f} → "
             f"{info['loss_last']:.3f}")  # fmt: skip
    return train, held, memo, eps, teps, model, tok, info
