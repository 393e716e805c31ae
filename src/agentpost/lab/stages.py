"""The lab's shared stages: the task family, the scripted corpus, the SFT policy, evaluation.

Each stage writes its result under the experiment folder and is skipped when that result is
already there, so a killed experiment resumes where it stopped (the RL runs resume per variant
and seed: ``lab.hero_lab``). What each stage writes:

- ``tasks/``: the family (``lab.tasks.write_family``);
- ``corpus/trajectories.jsonl``: scripted episodes of every behaviour on the train split, as
  canonical trajectories (the SFT rows are rebuilt from them);
- ``sft/``: tokenizer and model after stage-1 SFT through ``train.trl_sft`` (the project's SFT
  path: ``sft.rows`` rows, labels only on the commands);
- ``eval/<name>.json``: a policy's held-out episodes and their summary.

Layer: edges (torch and transformers imported inside the functions).
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentpost.config_checks import at_least, check, positive
from agentpost.documents.write import write_json
from agentpost.lab.curriculum import copy_rows
from agentpost.lab.episodes import Episode, scripted_episode, to_row, to_trajectory
from agentpost.lab.policy import PolicySize, lab_llama, n_params, train_tokenizer
from agentpost.lab.tasks import write_family
from agentpost.lab.transcript import SPECIAL, TEMPLATE
from agentpost.sandbox.base import Backend
from agentpost.tasks.loader import load_suite
from agentpost.tasks.model import Task
from agentpost.trajectory.io import read_jsonl, write_jsonl

BEHAVIOURS = ("careful", "direct", "wasteful", "hasty", "wrong-then-repaired")


@dataclass
class PolicyConfig:
    """The tasks, corpus and stage-1 SFT every lab experiment starts from."""

    seed: int = 0
    n_train: int = 300
    n_heldout: int = 30
    vocab_size: int = 1024
    size: PolicySize = field(default_factory=PolicySize)
    sft_epochs: float = 2.0
    sft_lr: float = 2e-3
    sft_batch: int = 8
    # stage 0 (lab.curriculum): copy rows + the short "direct" episodes, before stage 1
    copy_rows: int = 1500
    copy_epochs: float = 3.0
    one_slot: bool = True  # lab.taskgen: one parameter per instance read from the instruction
    max_turns: int = 8
    max_new_tokens: int = 80

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
        })  # fmt: skip


def family(out: Path, cfg: PolicyConfig) -> tuple[list[Task], list[Task]]:
    root = out / "tasks"
    if not (root / "family.json").is_file():
        write_family(root, cfg.seed, cfg.n_train, cfg.n_heldout, one_slot=cfg.one_slot)
    return load_suite(root / "train"), load_suite(root / "heldout")


def corpus(out: Path, train: list[Task], backend: Backend, workers: int = 2) -> list[Episode]:
    """Scripted episodes of every behaviour on every train task (real sandboxes)."""
    path = out / "corpus" / "trajectories.jsonl"
    if not path.is_file():
        jobs = [(t, b) for t in train for b in BEHAVIOURS]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            eps = list(pool.map(lambda j: scripted_episode(j[0], j[1], backend), jobs))
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


def sft_policy(out: Path, eps: list[Episode], cfg: PolicyConfig) -> tuple[Any, Any, dict]:
    """Tokenizer + stage-1 SFT model (loaded from ``sft/`` when already trained)."""
    import torch
    import transformers

    d = out / "sft"
    if (d / "sft.json").is_file():
        tok = transformers.PreTrainedTokenizerFast.from_pretrained(str(d))
        model = transformers.AutoModelForCausalLM.from_pretrained(str(d))
        return model, tok, json.loads((d / "sft.json").read_text())
    rows = [to_row(e) for e in eps]
    texts = [" ".join(str(m["content"]) for m in r.messages) for r in rows]
    tok = train_tokenizer(texts, cfg.vocab_size)
    assert tok.chat_template == TEMPLATE
    model = lab_llama(tok, seed=cfg.seed, size=cfg.size)
    torch.manual_seed(cfg.seed)
    stages = {}
    if cfg.copy_rows:
        direct = [to_row(e) for e in eps if e.agent == "scripted/direct"]
        stage0 = copy_rows(cfg.copy_rows, cfg.seed) + direct
        random.Random(cfg.seed).shuffle(stage0)
        stages["stage0"] = _train(stage0, model, tok, d / "stage0", cfg, cfg.copy_epochs)
    stages["stage1"] = _train(rows, model, tok, d, cfg, cfg.sft_epochs)
    info = {"params": n_params(model), "vocab": len(tok), "rows": stages["stage1"]["rows"],
            "dropped": stages["stage1"]["dropped"],
            "supervised_tokens": stages["stage1"]["supervised_tokens"],
            "loss_first": stages["stage1"]["loss_first"],
            "loss_last": stages["stage1"]["loss_last"], "stages": stages,
            "config": asdict(cfg)}  # fmt: skip
    write_json(d / "sft.json", info)
    return model, tok, info


def _train(rows, model, tok, d: Path, cfg: PolicyConfig, epochs: float) -> dict:
    """One SFT stage through the project's SFT path (``train.trl_sft``)."""
    import time

    from agentpost.train.trl_sft import SFTDefaults, train_sft

    defaults = SFTDefaults(num_train_epochs=epochs, learning_rate=cfg.sft_lr,
                           warmup_ratio=0.05, max_length=cfg.size.max_positions,
                           per_device_train_batch_size=cfg.sft_batch,
                           gradient_accumulation_steps=1, gradient_checkpointing=False)  # fmt: skip
    t0 = time.monotonic()
    run = train_sft(rows, model, tok, d, defaults, use_cpu=True, seed=cfg.seed,
                    save=d.name != "stage0", disable_tqdm=True)  # fmt: skip
    return {"rows": run.rows, "dropped": run.dropped, "supervised_tokens": run.supervised_tokens,
            "loss_first": run.log[0]["loss"] if run.log else None,
            "loss_last": run.log[-1]["loss"] if run.log else None,
            "epochs": epochs, "train_s": round(time.monotonic() - t0, 1)}  # fmt: skip


def evaluate_policy(
    model: Any, tok: Any, tasks: list[Task], backend: Backend, cfg: PolicyConfig, *,
    agent: str, seed: int, temperature: float = 1.0,
) -> list[Episode]:  # fmt: skip
    """One sampled rollout per task (seeded), graded by each task's hidden evaluator."""
    import torch

    from agentpost.lab.env import LabEnv
    from agentpost.lab.sampling import rollout

    torch.manual_seed(seed)
    was = model.training
    model.eval()
    eps = []
    for t in tasks:
        with LabEnv(t, backend) as env:
            ep, _ = rollout(model, tok, env, agent, max_turns=cfg.max_turns,
                            max_new_tokens=cfg.max_new_tokens, temperature=temperature)  # fmt: skip
        eps.append(ep)
    model.train(was)
    return eps
