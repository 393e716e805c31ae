"""`agentpost security check | grade | metrics`: SecPass grading of the suite's references, of one
candidate, and the rates over graded samples.

Layer: edges.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agentpost.commands._options import sandbox_backend
from agentpost.commands._options import suite_dir as resolve_suite
from agentpost.commands.security._output import echo, num, verdicts
from agentpost.documents.formats import producer
from agentpost.errors import InputError


def check_command(
    suite_dir: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name (default: secure)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    workers: int = typer.Option(4, "--workers", min=1, help="Tasks graded concurrently."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Grade each task's secure and vulnerable reference implementation.

    A task is ok when its secure reference passes both tests and its vulnerable one passes the functional test but fails the security test; exits 1 otherwise.
    """
    from agentpost.security.grade import check_suite
    from agentpost.security.suite import load_suite

    suite_dir = resolve_suite(suite_dir) if suite_dir else None
    rows, problems = check_suite(load_suite(suite_dir), sandbox_backend(backend), workers=workers)
    doc = {"format": "agentpost.security.check/1", "producer": producer(check_suite, suite_dir=suite_dir),
           "tasks": rows, "ok": all(r["ok"] for r in rows), "problems": problems}  # fmt: skip
    if as_json:
        echo(doc)
    else:
        fs = verdicts
        for r in rows:
            cwes = ",".join(f"CWE-{c}" for c in r["cwes"])
            typer.echo(f"{'ok ' if r['ok'] else 'BAD'} {r['id']:<16} {cwes:<16} "
                       f"secure: {fs(r['secure'])}  vulnerable: {fs(r['vulnerable'])}")  # fmt: skip
        for tid, grades in problems.items():
            for impl, g in grades.items():
                typer.echo(f"  {tid} {impl}: {g['status']}: {g['detail'][-300:]}", err=True)
    if not doc["ok"]:
        raise typer.Exit(1)


def grade_command(
    task: str = typer.Argument(..., help="Task directory or task id in --suite."),
    candidate: Path = typer.Argument(..., help="Candidate directory (a full /app) or a diff file."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite directory or bundled suite name, for a task id."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    func_only: float = typer.Option(0.5, "--func-only", help="Reward for func ✓ sec ✗."),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds per test run."),
    backend: str = typer.Option("bwrap", "--backend", help="Sandbox backend."),
) -> None:
    """Grade one candidate: {func, sec, status, patch_applied, patch_valid, reward, aborted}."""
    from agentpost.security.grade import grade_candidate
    from agentpost.security.suite import find_task

    if timeout <= 0:
        raise InputError(None, "--timeout", f"must be > 0 seconds, got {timeout}")
    t = find_task(task, resolve_suite(suite) if suite else None)
    if candidate.is_dir():
        g = grade_candidate(t, candidate_dir=candidate, backend=sandbox_backend(backend),
                            timeout_s=timeout, func_only=func_only)  # fmt: skip
    elif candidate.is_file():
        text = candidate.read_text(errors="replace")
        g = grade_candidate(
            t, patch=text, backend=sandbox_backend(backend), timeout_s=timeout, func_only=func_only
        )
    else:
        raise InputError(candidate, None, "candidate not found (give a directory or a diff file)")
    doc = {"format": "agentpost.security.grade/1",
           "producer": producer(grade_candidate, task=t.id, candidate=candidate, func_only=func_only),
           **g.to_json()}  # fmt: skip
    if as_json:
        echo(doc)
    else:
        typer.echo(f"{t.id}: status={g.status} func={g.func} sec={g.sec} reward={g.reward}")
        if g.status != "ok" and g.detail.strip():
            typer.echo(f"  {g.detail.strip().splitlines()[-1][:300]}")
    if g.status == "aborted":  # no grade came out (a timeout, an infrastructure error)
        raise typer.Exit(1)


def metrics_command(
    records: Path = typer.Argument(
        ..., help="JSONL of graded samples: {task (or task_id), func, sec[, cwes, agent, aborted]}."
    ),
    k: list[int] = typer.Option([1], "--k", help="pass@k values (per task, averaged)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """FuncPass, SecPass, security gap, insec and pass@k per agent, plus a per-CWE table.

    Reads label records, security grade --json lines or security demo grades; aborted samples are counted, never averaged.
    """
    from agentpost.security.metrics import by_agent, per_cwe
    from agentpost.security.records import read_graded

    rows = read_graded(records)
    try:
        doc = {"format": "agentpost.security.metrics/1", "producer": producer(by_agent, records=records, k=k),
               "agents": by_agent(rows, tuple(k)), "per_cwe": per_cwe(rows)}  # fmt: skip
    except ValueError as e:
        raise InputError(records, "--k", str(e)) from None
    if as_json:
        echo(doc)
        return
    for a, m in doc["agents"].items():
        typer.echo(
            f"{a}: n={m['n']} aborted={m['aborted']} FuncPass={num(m['func_pass'])} "
            f"SecPass={num(m['sec_pass'])} gap={num(m['security_gap'])}"
        )
