"""A lab task as an environment of verl's ``agentpost_shell`` agent loop
(``train.verl_agent_loop``): ``extra_info = {"env": "agentpost.lab.verl_env:lab_env",
"env_args": {"task_dir": ..., "backend": "bwrap"}}``.

``lab_env`` loads the task, opens a ``LabEnv`` (a real sandbox per rollout; the memo when
``memo`` names a store) and returns it with the lab transcript's framing (``lab.transcript``):
the prompt ``<|task|>INSTRUCTION<|cmd|>`` and each observation as ``<|obs|>TEXT<|cmd|>``, the
same tokens the lab's own rollouts and SFT rows use.

Layer: io.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentpost.lab.env import LabEnv, Memo
from agentpost.lab.transcript import CMD, OBS, TASK


@dataclass(frozen=True)
class Transcript:
    prompt: str

    @staticmethod
    def observation(text: str) -> str:
        return OBS + text + CMD


def lab_env(task_dir: str, backend: str = "bwrap", memo: str | None = None):
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.loader import load_task

    task = load_task(Path(task_dir))
    env = LabEnv(task, get_backend(backend), Memo(memo) if memo else None)
    return env, Transcript(TASK + task.instruction.strip() + CMD)
