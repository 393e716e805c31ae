"""`agentpost security rl | hg | hint`: GRPO with the five-level reward (spec b.6), hint-guided
self-distillation (spec b.7), and the teacher-only hint text it uses.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend, suite_dir
from agentpost.commands.security._output import echo
from agentpost.commands.security.data import SIDE_OPTION, choose_datasets
from agentpost.errors import InputError


def hint_command(
    task: str = typer.Argument(..., help="Task directory or task id in --suite."),
    level: str = typer.Option("L4", "--level", help="L1, L2, L3 or L4."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name, for a task id."
    ),
) -> None:
    """Print a task's teacher-only hint at LEVEL (SecureVibe spec b.7: the hint levels L1-L4, from the CWE name alone up to the fix)."""
    from agentpost.security.cwe import load_names
    from agentpost.security.hints import hint
    from agentpost.security.suite import find_task

    t = find_task(task, suite_dir(suite) if suite else None)
    try:
        typer.echo(hint(level.upper(), t.cwes, t.hints, load_names()))
    except ValueError as e:
        raise InputError(None, "--level", str(e)) from None


# SecureVibeTrainConfig field -> its flag, where the names differ
TRAIN_FLAGS = {"reward_mode": "--reward", "lam": "--lambda", "learning_rate": "--lr",
               "command_timeout_s": "--command-timeout", "backoff_s": "--backoff",
               "backoff_cap_s": "--backoff-cap"}  # fmt: skip


def _train(method: str, **kw) -> None:
    from agentpost.commands._options import config
    from agentpost.train.securevibe_rl import AbortedGroupsLimit, DynamicSamplingStalled
    from agentpost.train.securevibe_train import SecureVibeTrainConfig, run_security_training

    run = {k: kw.pop(k) for k in ("out", "suites", "tasks", "side", "backend", "resume")}
    flags = {f: TRAIN_FLAGS.get(f, "--" + f.replace("_", "-")) for f in kw}
    cfg = config(SecureVibeTrainConfig, flags, **kw)  # before any suite is read
    datasets = choose_datasets(run["suites"], run["tasks"], run["side"])
    try:
        summary = run_security_training(method, datasets, run["out"], cfg,  # type: ignore[arg-type]
                                        backend=sandbox_backend(run["backend"]),
                                        resume=run["resume"])  # fmt: skip
    except AbortedGroupsLimit as e:
        typer.echo(f"error: too many aborted groups in a row: {e} (the sandbox or the grader keeps "
                   "failing; --max-consecutive-aborted 0 keeps retrying with back-off)", err=True)  # fmt: skip
        raise typer.Exit(1) from None
    except DynamicSamplingStalled as e:
        typer.echo(f"error: dynamic sampling stalled: {e} (rl needs positive rewards; "
                   "`agentpost security route` measures them, hg learns without)", err=True)  # fmt: skip
        raise typer.Exit(1) from None
    tried = [g for s in summary["steps"] for g in s["groups"]]
    echo({"out": str(run["out"]), "steps": len(summary["steps"]), "groups_tried": len(tried),
           "groups_kept": sum(g["kept"] for g in tried), "mix": summary["mix"]})  # fmt: skip


_SUITES = typer.Option(
    None,
    "--suite",
    help="Suite directory or bundled suite name, one per dataset (default: secure).",
)
_TASKS = typer.Option(None, "--task", help="Only these task ids.")
_MODEL = typer.Option("tiny", "--model", help="A local model directory, or 'tiny' (built here).")
# options rl and hg share
_PROMPTS = typer.Option(4, "--prompts-per-step", min=1, help="Groups per batch.")
_MAX_NEW_TOKENS = typer.Option(64, "--max-new-tokens", min=1, help="Tokens per turn.")
_MAX_TURNS = typer.Option(2, "--max-turns", min=1, help="Turns per rollout.")
_COMMAND_TIMEOUT = typer.Option(30.0, "--command-timeout", help="Seconds per shell turn.")
_SEED = typer.Option(0, "--seed", help="Training seed.")
_SAVE_STEPS = typer.Option(0, "--save-steps", min=0, help="Checkpoint every N steps (0: never).")
_RESUME = typer.Option(False, "--resume", help="Continue from OUT's latest checkpoint.")
_BACKEND = typer.Option("bwrap", "--backend", help="Sandbox backend.")
_REFILL = typer.Option(
    "count", "--refill",
    help="count: an aborted group counts against --max-refills; backoff: the release's rule, "
    "wait min(BACKOFF * 2^k, BACKOFF_CAP) s before replacing it.",
)  # fmt: skip
_BACKOFF = typer.Option(30.0, "--backoff", help="Seconds before the first aborted group's refill.")
_BACKOFF_CAP = typer.Option(300.0, "--backoff-cap", help="Longest back-off, seconds.")
_MAX_ABORTED = typer.Option(
    0, "--max-consecutive-aborted", min=0, help="Stop after N aborted groups in a row (0: never)."
)
_ON_GRADING_FAILURE = typer.Option(
    "drop", "--on-grading-failure",
    help="drop: a grading failure aborts its group (default); zero: keep the sample with reward 0 "
    "(the release).",
)  # fmt: skip
_MAX_REFILLS = typer.Option(8, "--max-refills", min=0, help="Further groups drawn per slot.")


def rl_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suites: list[Path] | None = _SUITES,
    tasks: list[str] | None = _TASKS,
    side: str = SIDE_OPTION,
    model: str = _MODEL,
    steps: int = typer.Option(2, "--steps", min=1, help="Optimiser steps (paper: 100)."),
    group_size: int = typer.Option(4, "--group-size", "-G", min=2, help="Rollouts per prompt."),
    prompts_per_step: int = _PROMPTS,
    reward_mode: str = typer.Option(
        "five_level", "--reward", help="five_level, binary or strict_binary."
    ),
    max_refills: int = _MAX_REFILLS,
    refill: str = _REFILL,
    backoff: float = _BACKOFF,
    backoff_cap: float = _BACKOFF_CAP,
    max_consecutive_aborted: int = _MAX_ABORTED,
    on_grading_failure: str = _ON_GRADING_FAILURE,
    learning_rate: float = typer.Option(1e-6, "--lr", help="Learning rate (cosine)."),
    max_new_tokens: int = _MAX_NEW_TOKENS,
    max_turns: int = _MAX_TURNS,
    command_timeout: float = _COMMAND_TIMEOUT,
    seed: int = _SEED,
    save_steps: int = _SAVE_STEPS,
    resume: bool = _RESUME,
    backend: str = _BACKEND,
) -> None:
    """GRPO with the five-level reward and dynamic sampling with refill (SecureVibe spec b.6: groups whose rewards all agree teach nothing and are redrawn) on security tasks.

    Writes OUT/summary.json (every group tried, its rewards and decision, the dataset mix) and OUT/model.
    """
    _train("rl", out=out, suites=suites, tasks=tasks, side=side, model=model, steps=steps,
           group_size=group_size, prompts_per_step=prompts_per_step, reward_mode=reward_mode,
           max_refills=max_refills, learning_rate=learning_rate, max_new_tokens=max_new_tokens,
           refill=refill, backoff_s=backoff, backoff_cap_s=backoff_cap,
           max_consecutive_aborted=max_consecutive_aborted, on_grading_failure=on_grading_failure,
           max_turns=max_turns, seed=seed, backend=backend,
           command_timeout_s=command_timeout, save_steps=save_steps, resume=resume)  # fmt: skip


def hg_command(
    out: Path = typer.Option(..., "--out", "-o", help="Output directory."),
    suites: list[Path] | None = _SUITES,
    tasks: list[str] | None = _TASKS,
    side: str = SIDE_OPTION,
    model: str = _MODEL,
    steps: int = typer.Option(2, "--steps", min=1, help="Optimiser steps (paper: 300)."),
    group_size: int = typer.Option(
        4, "--group-size", "-G", min=2, help="Rollouts per prompt (paper: 8)."
    ),
    prompts_per_step: int = _PROMPTS,
    hint_level: str = typer.Option("L4", "--hint-level", help="L1..L4 (teacher only)."),
    hint_template: str = typer.Option(
        "release", "--hint-template", help="Teacher block: release, paraphrase, library, or a file."
    ),
    teacher: str = typer.Option(
        "frozen_sft",
        "--teacher-weights",
        help="Whose weights the hinted teacher uses: frozen_sft (the starting checkpoint, frozen) "
        "or live_policy (the policy being trained).",
    ),
    divergence: str = typer.Option(
        "js_skew", "--divergence", help="js_skew (release default), k1, k2, k3 or js_sym."
    ),
    lam: float = typer.Option(0.5, "--lambda", help="js_skew lambda in (0, 1]."),
    beta: float = typer.Option(1.0, "--beta", help="Weight of the distillation term."),
    opd_only: bool = typer.Option(False, "--opd-only", help="Zero the GRPO advantage."),
    max_refills: int = _MAX_REFILLS,
    refill: str = _REFILL,
    backoff: float = _BACKOFF,
    backoff_cap: float = _BACKOFF_CAP,
    max_consecutive_aborted: int = _MAX_ABORTED,
    on_grading_failure: str = _ON_GRADING_FAILURE,
    learning_rate: float = typer.Option(1e-6, "--lr", help="Learning rate (constant)."),
    max_new_tokens: int = _MAX_NEW_TOKENS,
    max_turns: int = _MAX_TURNS,
    command_timeout: float = _COMMAND_TIMEOUT,
    seed: int = _SEED,
    save_steps: int = _SAVE_STEPS,
    resume: bool = _RESUME,
    backend: str = _BACKEND,
) -> None:
    """Hint-guided on-policy self-distillation: L_GRPO + beta * D against a hinted teacher (SecureVibe spec b.7: a teacher that sees a hint about the vulnerability guides the policy token by token).

    Writes OUT/summary.json and OUT/model.
    """
    _train("hg", out=out, suites=suites, tasks=tasks, side=side, model=model, steps=steps,
           group_size=group_size, prompts_per_step=prompts_per_step, hint_level=hint_level.upper(),
           hint_template=hint_template,
           teacher=teacher, divergence=divergence, lam=lam, beta=beta, opd_only=opd_only,
           max_refills=max_refills, refill=refill, backoff_s=backoff, backoff_cap_s=backoff_cap,
           max_consecutive_aborted=max_consecutive_aborted, on_grading_failure=on_grading_failure,
           learning_rate=learning_rate, max_new_tokens=max_new_tokens, max_turns=max_turns,
           seed=seed, backend=backend, command_timeout_s=command_timeout, save_steps=save_steps,
           resume=resume)  # fmt: skip
