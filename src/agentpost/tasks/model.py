"""One task model for Harbor and Terminal-Bench 1 task directories and SWE-bench instances
(``tasks.swebench``: ``metadata`` holds the instance, its harness spec and its deviations).

A task says what the agent is asked (``instruction``), where it works inside the sandbox
(``workdir``), which files start there (``environment_dir``), how it is graded (``tests_dir``
with ``test.sh`` for Harbor, ``run-tests.sh`` for Terminal-Bench 1), and, where the task ships
them, an oracle solution and plausible wrong solutions. ``agentpost`` holds the optional
``[agentpost]`` table (``explore`` commands and a ``check`` command for scripted policies).

Layer: model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True)
class Step:
    """One step of a Harbor multi-step task (``steps/<name>/``): its own instruction, tests and
    solution, run in order in the same sandbox."""

    name: str
    instruction: str
    tests_dir: Path
    solution_script: Path | None = None
    agent_timeout_s: float = 600.0
    verifier_timeout_s: float = 120.0


TaskFormat = Literal["harbor", "terminal-bench-1", "swebench"]
EvalStatus = Literal["ok", "evaluator_invalid", "timeout", "infra_error"]

REWARD_TXT = "/logs/verifier/reward.txt"
REWARD_JSON = "/logs/verifier/reward.json"


@dataclass(frozen=True)
class Task:
    """A loaded task. Host paths are absolute; ``workdir`` is a sandbox path."""

    id: str
    path: Path
    format: TaskFormat
    instruction: str
    workdir: str = "/app"
    evaluator_network: bool = False
    agent_timeout_s: float = 600.0
    verifier_timeout_s: float = 120.0
    environment_dir: Path | None = None
    tests_dir: Path | None = None
    solution_script: Path | None = None
    wrong_solutions: tuple[Path, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    agentpost: dict[str, Any] = field(default_factory=dict)
    # Terminal-Bench 1 only: the host path of run-tests.sh, None for the default runner
    # (evaluate.DEFAULT_TB1_RUNNER). Harbor uses tests_dir/test.sh.
    run_tests_script: Path | None = None
    # Containers: the Dockerfile and its build context (Harbor: environment/; TB1: the task
    # root), [environment] resources and build timeout, and the users of [agent] / [verifier].
    dockerfile: Path | None = None
    agent_user: str | None = None
    verifier_user: str | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    # whether the task names its work directory ([environment].workdir, [agentpost].workdir,
    # TB1 ``workdir``); if not, a task image's WORKDIR is used, as Harbor does (docker)
    workdir_given: bool = False
    build_timeout_s: float = 1800.0
    healthcheck: str | None = None
    agent_env: dict[str, str] = field(default_factory=dict)
    verifier_env: dict[str, str] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    # sandbox directories writable besides the work directory (SWE-bench: /workspace, where
    # OpenHands links the repository and writes its scratch files)
    extra_writable_dirs: tuple[str, ...] = ()

    @property
    def explore(self) -> list[str]:
        """Read-only commands a scripted agent runs first (``[agentpost].explore``)."""
        return list(self.agentpost.get("explore", []))

    @property
    def writable_root(self) -> bool:
        """Whether the task's container root is writable on docker, as Harbor gives it:
        ``[agentpost].writable_root``; by default yes for a task as its authors wrote it (no
        ``[agentpost]`` table) and no for agentpost's own tasks (bundled suite, lab), whose
        verifiers keep the read-only root's guarantees."""
        return bool(self.agentpost.get("writable_root", not self.agentpost))

    @property
    def check(self) -> str | None:
        """A self-verification command (``[agentpost].check``): fails on a wrong candidate."""
        return self.agentpost.get("check")


@dataclass(frozen=True)
class EvalResult:
    """What the task's evaluator said about a sandbox's state.

    ``status`` is ``ok`` only when a reward was read; a missing or unparsable reward is
    ``evaluator_invalid`` (never a silent 0), a verifier past its timeout is ``timeout``, a
    sandbox failure is ``infra_error``.
    """

    status: EvalStatus
    reward: float | None
    resolved: bool | None
    output: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reward": self.reward,
            "resolved": self.resolved,
            "output": self.output,
            "details": self.details,
        }
