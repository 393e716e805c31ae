"""HERO through verl's v1 trainer on the lab (the last step of ``scripts/lab-gpu.sh``; needs a
CUDA machine and vLLM in verl's venv).

``write_dataset(out)`` writes ``out/verl/{train,val}.parquet`` in the form verl's
``RLHFDataset`` reads: one row per lab task, its instruction as the prompt, the agent loop
``agentpost_shell`` (``train.verl_agent_loop``) and, in ``extra_info``, the environment factory
``agentpost.lab.verl_env:lab_env`` with the task's directory and the experiment's memo.
``overrides(out, ...)`` are the hydra overrides for ``agentpost.train.verl_main``: estimator
``hero``, trainer mode ``agentpost_hero`` (``train.verl_trainer``), the lab's SFT policy as the
actor, groups of ``n``. ``python -m agentpost.lab.verl_run OUT`` runs both. The overrides are
checked against verl's own config schema on CPU (``tests/train/test_train_verl_v1.py``); the run
itself needs a GPU.

Layer: edges.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentpost.lab.transcript import MAX_TURNS

ENV = "agentpost.lab.verl_env:lab_env"


def rows(out: Path, split: str) -> list[dict]:
    from agentpost.tasks.loader import load_suite

    tasks = load_suite(out / "tasks" / split)
    return [{"data_source": "agentpost-lab", "agent_name": "agentpost_shell",
             "prompt": [{"role": "user", "content": t.instruction.strip()}],
             "reward_model": {"style": "rule", "ground_truth": ""},
             "extra_info": {"index": i, "env": ENV, "max_turns": MAX_TURNS,
                            "env_args": {"task_dir": str(t.path.resolve()),
                                         "memo": str((out / "memo.sqlite").resolve())}}}
            for i, t in enumerate(tasks)]  # fmt: skip


def write_dataset(out: Path) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = out / "verl"
    d.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, name in (("train", "train"), ("heldout", "val")):
        paths[name] = d / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows(out, split)), paths[name])
    return paths


def overrides(out: Path, *, steps: int = 20, n: int = 8, batch: int = 16) -> list[str]:
    paths = {k: (out / "verl" / f"{k}.parquet").resolve() for k in ("train", "val")}
    model = (out / "sft").resolve()
    return [
        "algorithm.adv_estimator=hero",
        "algorithm.use_kl_in_reward=false",
        "trainer.use_v1=true",
        "trainer.v1.trainer_mode=agentpost_hero",
        f"data.train_files={paths['train']}",
        f"data.val_files={paths['val']}",
        f"data.train_batch_size={batch}",
        "data.max_prompt_length=256",
        "data.max_response_length=1024",
        f"actor_rollout_ref.model.path={model}",
        "actor_rollout_ref.actor.optim.lr=1e-4",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16",
        "actor_rollout_ref.actor.use_kl_loss=false",
        "actor_rollout_ref.rollout.name=vllm",
        f"actor_rollout_ref.rollout.n={n}",
        "actor_rollout_ref.rollout.prompt_length=256",
        "actor_rollout_ref.rollout.response_length=1024",
        "actor_rollout_ref.rollout.calculate_log_probs=true",
        "actor_rollout_ref.rollout.gpu_memory_utilization=0.3",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16",
        "actor_rollout_ref.rollout.agent.default_agent_loop=agentpost_shell",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        f"trainer.total_training_steps={steps}",
        "trainer.val_before_train=false",
        "trainer.save_freq=-1",
        "trainer.test_freq=-1",
        "trainer.logger=[console]",
        f"trainer.default_local_dir={(out / 'verl' / 'ckpt').resolve()}",
    ]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "lab-gpu")
    write_dataset(out)
    from agentpost.train import verl_main

    sys.argv = ["verl_main", *overrides(out), *argv[1:]]
    verl_main.main()


if __name__ == "__main__":
    main()
