"""`agentpost scvd collect|ftd|match`: SCVD training data, the FTD baseline, task- and
size-matching. Read, call the library, write.

Layer: edges.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentpost.commands._options import (
    agent_option,
    config,
    read_trajectory_files,
    sandbox_backend,
    suite_dir,
    task_option,
)
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InputError

Teacher = Annotated[
    str,
    typer.Option(
        "--teacher", help="'scripted' (offline, labelled scripted-teacher/...) or a model name."
    ),
]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="The teacher's endpoint.")]
Out = Annotated[Path, typer.Option("--out", "-o", help="Run directory (reused to resume).")]


def _teacher(teacher, plan, base_url, api_key_env, temperature, max_tokens, token_budget):
    from agentpost.scvd.distill.teacher import make_teacher

    if teacher != "scripted" and not base_url:
        raise InputError(None, "--base-url", "a model teacher needs --base-url")
    kw = {"base_url": base_url, "api_key_env": api_key_env, "temperature": temperature,
          "max_tokens": max_tokens, "max_total_tokens": token_budget}  # fmt: skip
    return make_teacher(teacher, plan, **kw)


# CollectOptions field -> the flag that sets it (a config error names both)
FLAGS = {"handoff": "--handoff", "concurrency": "--workers", "max_retries": "--retries",
         "teacher_steps": "--teacher-steps"}  # fmt: skip
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
ApiKeyEnv = Annotated[
    str, typer.Option(help="Environment variable holding the teacher endpoint's key.")
]
Temperature = Annotated[
    float | None, typer.Option(help="Teacher sampling temperature (default: the server's).")
]
TeacherSteps = Annotated[
    int, typer.Option(min=1, help="Teacher model calls per continuation at most.")
]
Workers = Annotated[int, typer.Option("--workers", min=1, help="Cases run at once.")]
Backend = Annotated[
    str, typer.Option(help="Sandbox backend: bwrap, docker or package.module:Class.")
]
Progress = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")
]


def _report(doc: dict, path: Path, as_json: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps({**doc, "wrote": str(path)}, default=str) + "\n")
        return
    counts = ", ".join(f"{k} {v}" for k, v in sorted(doc["status"].items()))
    sys.stdout.write(f"kept {doc['kept']} of {len(doc['cases'])} ({counts})\nwrote {path}\n")


def collect_cmd(
    files: Annotated[list[Path], typer.Argument(help="Student trajectories (canonical JSONL).")],
    out: Out = Path("scvd-collect"),
    tasks: Annotated[
        str, typer.Option("--suite", help="Suite directory or bundled suite name.")
    ] = "terminal",
    teacher: Teacher = "scripted",
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    temperature: Temperature = None,
    max_tokens: Annotated[int | None, typer.Option(help="Per teacher call.")] = None,
    token_budget: Annotated[int | None, typer.Option(help="Teacher tokens in all.")] = None,
    judges: Annotated[
        Path | None, typer.Option(help="Judge panel config; default offline.")
    ] = None,
    handoff: Annotated[
        str,
        typer.Option(
            help="Where the teacher takes over: tool_call (right after the candidate's "
            "call) or step (after the whole step that holds it)."
        ),
    ] = "tool_call",
    teacher_steps: TeacherSteps = 30,
    concurrency: Workers = 2,
    retries: Annotated[int, typer.Option(min=0, help="Retries on infrastructure errors.")] = 3,
    backend: Backend = "bwrap",
    progress: Progress = True,
    as_json: AsJson = False,
    agents: Annotated[list[str] | None, agent_option(annotated=True)] = None,
    task_ids: Annotated[list[str] | None, task_option(annotated=True)] = None,
) -> None:
    """SCVD data: t_c from the panel, replay the candidate state, the teacher continues with g_ver, keep R* = 1, remove g_ver."""
    args = {k: str(v) if isinstance(v, Path) else v for k, v in locals().items()}
    args["files"] = [str(f) for f in files]
    from agentpost.judges.config import build_panel, load_config
    from agentpost.scvd.distill.collect import CollectOptions, collect
    from agentpost.scvd.distill.collect_out import summary, write_outputs
    from agentpost.scvd.distill.sources import snapshot_or_replay_state
    from agentpost.store import Store
    from agentpost.tasks.loader import load_suite

    opts = config(CollectOptions, FLAGS, handoff=handoff, concurrency=concurrency,
                  max_retries=retries, backend=backend, teacher_steps=teacher_steps,
                  progress=progress)  # fmt: skip
    sandbox_backend(backend)
    suite = load_suite(suite_dir(tasks))
    trajs, roots = read_trajectory_files(files, "no student trajectories", agents, task_ids)
    panel = build_panel(load_config(judges), str(judges or "default judge config"),
                        judges.parent if judges else None)  # fmt: skip
    t = _teacher(teacher, "verify-repair", base_url, api_key_env, temperature, max_tokens,
                 token_budget)  # fmt: skip
    opts.snapshot_roots = roots
    store = Store(out / "store.sqlite")
    try:
        results = collect(trajs, suite, panel, t, store, opts, source=snapshot_or_replay_state)
    finally:
        store.close()
    doc = summary(results, t, producer(collect, **args))
    _report(doc, write_outputs(out, results, doc, "scvd"), as_json)


def ftd_cmd(
    out: Out = Path("scvd-ftd"),
    tasks: Annotated[
        str, typer.Option("--suite", help="Suite directory or bundled suite name.")
    ] = "terminal",
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
    teacher: Teacher = "scripted",
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    temperature: Temperature = None,
    max_tokens: Annotated[int | None, typer.Option(help="Per teacher call.")] = None,
    token_budget: Annotated[int | None, typer.Option(help="Teacher tokens in all.")] = None,
    attempts: Annotated[
        int, typer.Option("--group-size", "-G", min=1, help="Teacher rollouts per task (G).")
    ] = 1,
    teacher_steps: TeacherSteps = 30,
    concurrency: Workers = 2,
    retries: Annotated[int, typer.Option(min=0, help="Retries on infrastructure errors.")] = 3,
    backend: Backend = "bwrap",
    progress: Progress = True,
    as_json: AsJson = False,
) -> None:
    """FTD baseline data: the teacher solves each task from scratch (plain prompt); keep R* = 1."""
    args = {k: str(v) if isinstance(v, Path) else v for k, v in locals().items()}
    from agentpost.scvd.distill.collect import CollectOptions
    from agentpost.scvd.distill.collect_out import summary, write_outputs
    from agentpost.scvd.distill.ftd import ftd
    from agentpost.store import Store
    from agentpost.tasks.loader import load_suite

    opts = config(CollectOptions, FLAGS, concurrency=concurrency, max_retries=retries,
                  backend=backend, teacher_steps=teacher_steps, progress=progress)  # fmt: skip
    sandbox_backend(backend)
    suite = load_suite(suite_dir(tasks))
    if task:
        missing = sorted(set(task) - {t.id for t in suite})
        if missing:
            raise InputError(tasks, "--task", f"no task named {', '.join(missing)}")
        suite = [t for t in suite if t.id in task]
    t = _teacher(teacher, "solve", base_url, api_key_env, temperature, max_tokens, token_budget)
    store = Store(out / "store.sqlite")
    try:
        results = ftd(suite, t, store, opts, attempts)
    finally:
        store.close()
    doc = summary(results, t, producer(ftd, **args))
    _report(doc, write_outputs(out, results, doc, "ftd"), as_json)


def match_cmd(
    data: Annotated[list[Path], typer.Argument(help="Two or more agentpost.sft Parquet files.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    seed: Annotated[int, typer.Option(help="Seed of the size-matching draws.")] = 0,
    verl: Annotated[
        bool, typer.Option("--verl", help="Also write verl multi-turn SFT files (*.verl.parquet).")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Task- and size-match datasets: common tasks only, the same row count per task in each."""
    from agentpost.scvd.distill.matching import match
    from agentpost.sft.io import read_rows, write_rows, write_verl

    if len(data) < 2:
        raise InputError(None, "DATA", "give at least two datasets to match")
    names = [p.stem for p in data]
    if len(set(names)) != len(names):
        raise InputError(
            None, "DATA", "the datasets' file names must differ (they name the outputs)"
        )
    matched, report = match([read_rows(p) for p in data], seed)
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        write_rows(rows, out / f"{n}.matched.parquet")
        for n, rows in zip(names, matched, strict=True)
    ]
    if verl:
        for n, rows in zip(names, matched, strict=True):
            paths.append(write_verl(rows, out / f"{n}.matched.verl.parquet"))
    doc = {"format": fmt("agentpost.scvd.match"),
           "producer": producer(match, data=[str(p) for p in data], seed=seed),
           "outputs": [str(p) for p in paths], **report}  # fmt: skip
    write_json(out / "match.json", doc)
    if as_json:
        sys.stdout.write(json.dumps(doc) + "\n")
        return
    sys.stdout.write(
        f"{report['tasks']['common']} common tasks; rows {report['rows_in']} → {report['rows_out']}\n"
        f"wrote {', '.join(str(p) for p in paths)}\n"
    )


def add_to(scvd: typer.Typer) -> None:
    scvd.command("collect")(collect_cmd)
    scvd.command("ftd")(ftd_cmd)
    scvd.command("match")(match_cmd)
