"""`agentpost run`: G rollouts per task with a model or the scripted reference policies.

With ``--model`` it first checks the endpoint (``agent.preflight``: one ``GET /models``), so a
wrong URL or key fails in seconds naming the URL. SIGTERM and SIGHUP stop the run as Ctrl-C
does (rollouts in flight stop and clean up, finished ones are kept); the exit code is 128 plus
the signal's number (130 for Ctrl-C). Exit 1 when rollouts failed on errors or the run halted.

Layer: edges.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import typer

from agentpost.commands._options import config, price_option, prices, sandbox_backend, suite_dir
from agentpost.commands._signals import interrupted_code, signals_as_interrupt
from agentpost.errors import InputError
from agentpost.intervals import UNKNOWN

# config field -> the flag that sets it (a config's own error then names both)
LOOP_FLAGS = {"mode": "--mode", "step_limit": "--step-limit", "timeout_s": "--timeout",
              "command_timeout_s": "--command-timeout"}  # fmt: skip
TRANSPORT_FLAGS = {"model": "--model", "timeout_s": "--request-timeout",
                   "temperature": "--temperature", "max_tokens": "--max-tokens",
                   "top_logprobs": "--top-logprobs", "concurrency": "--workers",
                   "max_total_tokens": "--token-budget", "max_cost_usd": "--max-cost"}  # fmt: skip


def _tasks(tasks_dir: str, only: list[str] | None):
    from agentpost.tasks.loader import load_suite

    path = suite_dir(tasks_dir)
    tasks = load_suite(path)
    if only:
        missing = sorted(set(only) - {t.id for t in tasks})
        if missing:
            raise InputError(path, "--task", f"no task named {', '.join(missing)}")
        tasks = [t for t in tasks if t.id in only]
    return tasks


def _agents(model: str | None, base_url: str | None, policies: list[str] | None, kw: dict):
    from agentpost.agent.run import Agent

    if bool(model) == bool(policies):
        raise InputError(
            None, "--model/--policy", "give either --model (with --base-url) or --policy"
        )
    if model and not base_url:
        raise InputError(
            None, "--base-url", "--model needs --base-url (e.g. http://127.0.0.1:8000/v1)"
        )
    if policies:
        from agentpost.agent.policies import policy_agents

        return policy_agents(policies, kw["mode"]), None
    from agentpost.agent.preflight import api_key_from_env, check_base_url, preflight
    from agentpost.agent.transport import OpenAITransport, TransportConfig

    check_base_url(base_url)
    api_key = api_key_from_env(kw["api_key_env"])

    # unknown prices: cost stays null, never 0
    priced = prices(kw["price_in"], kw["price_cached"], kw["price_out"], "USD")
    transport = OpenAITransport(config(
        TransportConfig, TRANSPORT_FLAGS,
        model=model, base_url=base_url, api_key_env=kw["api_key_env"], api_key=api_key,
        timeout_s=kw["request_timeout"], temperature=kw["temperature"], max_tokens=kw["max_tokens"],
        top_logprobs=kw["top_logprobs"], concurrency=kw["concurrency"],
        max_total_tokens=kw["token_budget"], max_cost_usd=kw["max_cost"], prices=priced,
    ))  # fmt: skip
    for warning in preflight(base_url, model, api_key):
        print(f"warning: {warning}", file=sys.stderr)
    return [Agent(model, lambda t: transport)], transport


def run(
    out: str = typer.Option(..., "-o", "--out", help="Output directory (reused to resume)."),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary (run.json) as JSON."),
    tasks: str = typer.Option(
        "terminal", "--suite", help="Suite directory, or a bundled suite name."
    ),
    model: str = typer.Option(None, "--model", help="Model name at --base-url."),
    base_url: str = typer.Option(
        None,
        "--base-url",
        help="The model's OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.",
    ),
    api_key_env: str = typer.Option("OPENAI_API_KEY", help="Environment variable holding the key."),
    policy: list[str] = typer.Option(
        None,
        "--policy",
        help="Scripted reference policy instead of a model (repeatable, or 'all').",
    ),
    task: list[str] = typer.Option(None, "--task", help="Only these task ids (repeatable)."),
    attempts: int = typer.Option(
        1, "--group-size", "-G", min=1, max=100_000, help="Rollouts per task and agent (G)."
    ),
    concurrency: int = typer.Option(
        2, "--workers", min=1, max=1024, help="Rollouts (and model calls) at once."
    ),
    mode: str = typer.Option(
        "tools",
        "--mode",
        help="Action format: tools | text (```bash blocks) | package.module:Class.",
    ),
    step_limit: int = typer.Option(
        50, "--step-limit", min=1, max=1_000_000, help="Model calls per rollout at most."
    ),
    timeout: float = typer.Option(
        None, "--timeout", help="Wall-clock seconds per rollout (default: the task's own)."
    ),
    request_timeout: float = typer.Option(
        120.0, "--request-timeout", help="Seconds one model request may take before a retry."
    ),
    command_timeout: float = typer.Option(
        60.0, "--command-timeout", help="Seconds one shell command of the agent may take."
    ),
    temperature: float = typer.Option(
        None, "--temperature", help="Sampling temperature (default: the server's)."
    ),
    max_tokens: int = typer.Option(
        None, "--max-tokens", min=1, help="Tokens per model call at most."
    ),
    top_logprobs: int = typer.Option(10, "--top-logprobs", help="0 to not ask for logprobs."),
    token_budget: int = typer.Option(None, "--token-budget", help="Stop new calls past this."),
    max_cost: float = typer.Option(
        None, "--max-cost", help="USD; stop new calls past it (needs prices)."
    ),
    price_in: float = price_option("--price-in"),
    price_cached: float = price_option("--price-cached"),
    price_out: float = price_option("--price-out"),
    snapshots: bool = typer.Option(
        False,
        "--snapshots",
        help="Archive the writable dirs after every call (stored once per state); "
        "diagnose then grades the recorded state instead of replaying.",
    ),
    backend: str = typer.Option(
        "bwrap", "--backend", help="Sandbox backend: bwrap, docker or package.module:Class."
    ),
    name: str | None = typer.Option(
        None,
        "--name",
        help="The run's name: its run id in the trajectories, and how reports "
        "tell it from other runs of the same model (default: a hash of the arguments).",
    ),
) -> None:
    """Run G rollouts per task, grade each with the task's evaluator, write trajectories."""
    args = dict(locals())
    args.pop("name")  # not part of the default run id, so naming a run keeps its rollouts
    from agentpost.agent.loop import LoopConfig
    from agentpost.agent.preflight import check_seconds
    from agentpost.agent.run import RunInterrupted, run_groups, write_summary

    loop = config(LoopConfig, LOOP_FLAGS, mode=mode, step_limit=step_limit, timeout_s=timeout,
                  command_timeout_s=command_timeout,
                  snapshot_dir=str(Path(out) / "snapshots") if snapshots else None)  # fmt: skip
    for flag, value in (("--timeout", timeout), ("--request-timeout", request_timeout),
                        ("--command-timeout", command_timeout)):  # fmt: skip
        check_seconds(value, flag)  # the configs take any finite duration; a flag, up to a week
    if Path(out).exists() and not Path(out).is_dir():
        raise InputError(out, "-o", "not a directory")
    task_list = _tasks(tasks, task)
    agents, transport = _agents(model, base_url, policy, args)
    box = sandbox_backend(backend)
    if not box.available():
        raise InputError(None, "--backend", f"sandbox backend {backend!r} is not available here")
    run_id = (
        name
        or hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()[:12]
    )
    if name:
        args["name"] = name
    total = len(task_list) * len(agents) * attempts
    from agentpost.dirlock import DirLock

    with DirLock(out), signals_as_interrupt() as caught:  # a second writer fails before any work
        try:
            result = _with_progress(total, lambda done, plan: run_groups(
                task_list, agents, attempts=attempts, out_dir=out, backend=box, loop=loop,
                concurrency=concurrency, run_id=run_id, on_done=done, on_plan=plan,
            ))  # fmt: skip
        except RunInterrupted as e:  # in-flight rollouts stopped and cleaned up
            result = e.result
        except KeyboardInterrupt:  # outside the runner's own handling (e.g. while planning)
            _interrupted(out)
            raise typer.Exit(interrupted_code(caught)) from None
        extra = {"ledger": transport.ledger.summary()} if transport else {}
        summary = write_summary(out, args, result, extra)
    _print_summary(summary, result, model=transport is not None)
    if as_json:
        typer.echo(json.dumps(summary, default=str))
    if result.interrupted:
        _interrupted(out)
        raise typer.Exit(interrupted_code(caught))
    if result.errors or result.halted:
        raise typer.Exit(1)


def _interrupted(out: str) -> None:
    print(
        f"interrupted: finished rollouts are kept in {out}; run the same command again to resume",
        file=sys.stderr,
    )


def _with_progress(total: int, go):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:  # fmt: skip
        pid = bar.add_task("rollouts", total=total)

        def plan(todo: int, skipped: int) -> None:
            bar.update(pid, completed=skipped, description=f"rollouts ({skipped} already done)")

        def done(rollout, traj) -> None:
            status = (
                "not written"
                if traj is None
                else ("resolved" if traj.outcome.resolved else "failed")
            )
            bar.update(pid, advance=1, description=f"{rollout.id}: {status}")
            if not console.is_terminal:  # no live bar in a log: one line per rollout instead
                n = int(bar.tasks[0].completed)
                print(f"rollout {n}/{total}: {rollout.id}: {status}", file=sys.stderr, flush=True)

        result = go(done, plan)
        bar.update(pid, completed=total, description="rollouts")
    return result


def _print_summary(summary: dict, result, model: bool = True) -> None:
    from rich.table import Table

    from agentpost.trajectory.render import console as new_console

    console = new_console(stderr=True)
    table = Table(
        title=f"ran {result.ran}, skipped {result.skipped} (already finished), {len(result.errors)} errors"
    )
    for col in ("agent", "finished", "resolved", "rate"):
        table.add_column(col)
    for name, a in sorted(summary["agents"].items()):
        rate = a["resolution_rate"]
        table.add_row(
            name, str(a["finished"]), str(a["resolved"]), UNKNOWN if rate is None else f"{rate:.0%}"
        )
    console.print(table)
    for e in result.errors[:10]:
        console.print(f"[red]error[/red] {e['rollout']}: {e['error']}")
    if result.not_started and result.interrupted:
        console.print(f"interrupted: {len(result.not_started)} rollouts not finished "
                      "(not written; rerun to continue)")  # fmt: skip
    elif result.not_started and model:
        console.print(
            f"model unavailable: {len(result.not_started)} rollouts not started "
            "(not written; check --base-url and the server, then rerun to continue)"
        )
    elif result.not_started:
        console.print(f"{len(result.not_started)} rollouts not started (not written; "
                      "rerun to continue)")  # fmt: skip
    if result.halted:
        console.print(f"[red]run stopped[/red]: {result.halted}; fix it, then rerun to continue")
    if result.budget_stopped:
        console.print(
            f"budget spent: {len(result.budget_stopped)} rollouts stopped or not started "
            "(not written; rerun to continue)"
        )


def register(app: typer.Typer) -> None:
    app.command("run")(run)
