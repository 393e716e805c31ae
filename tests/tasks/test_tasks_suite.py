"""The bundled suite holds: every task's oracle scores 1, a no-op 0, every wrong solution 0, and
its [agentpost].check command passes on the oracle and fails on the wrong solution."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentpost.tasks.check import check_suite
from agentpost.tasks.loader import bundled_suite_path, load_suite

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_every_bundled_task_is_ok(backend) -> None:
    tasks = load_suite(bundled_suite_path("terminal"))
    result = check_suite(tasks, backend, workers=2)
    bad = [r for r in result["tasks"] if not r["ok"] or r["check_ok"] is not True]
    assert not bad, json.dumps(bad, indent=1)[:4000]
    assert len(result["tasks"]) >= 20 and result["ok"] and result["check_ok"]
    assert (
        result["format"] == "agentpost.tasks-check/1" and result["producer"]["args"]["workers"] == 2
    )
    for row in result["tasks"]:
        assert (row["oracle_reward"], row["nop_reward"], row["wrong_reward"]) == (1.0, 0.0, 0.0)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from agentpost.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_tasks_check_json(backend) -> None:
    out = _cli("tasks", "check", str(bundled_suite_path()), "--id", "c-primes", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["tasks"]
    assert [
        (r["id"], r["oracle_reward"], r["nop_reward"], r["wrong_reward"], r["ok"]) for r in rows
    ] == [("c-primes", 1.0, 0.0, 0.0, True)]


def test_cli_tasks_check_flags_a_task_whose_wrong_solution_passes(backend, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "suite" / "dedupe-preserve-order"
    shutil.copytree(bundled_suite_path() / "dedupe-preserve-order", root)
    shutil.copy(root / "solution" / "solve.sh", root / "wrong" / "solve.sh")  # "wrong" now right
    out = _cli("tasks", "check", str(tmp_path / "suite"), "--json")
    row = json.loads(out.stdout)["tasks"][0]
    assert out.returncode == 1 and row["ok"] is False and row["wrong_reward"] == 1.0
    assert row["check_ok"] is False  # the check passes on the "wrong" solution too


def test_cli_tasks_check_bad_dir_is_one_line_error(tmp_path: Path) -> None:
    out = _cli("tasks", "check", str(tmp_path / "nope"), "--json")
    assert (
        out.returncode == 2
        and out.stderr.count("\n") == 1
        and "not a task suite directory" in out.stderr
    )


def test_cli_tasks_on_a_file_in_the_cwd_says_not_a_directory(tmp_path: Path) -> None:
    """A bare name that exists (a file here) is not looked up as a bundled suite name."""
    (tmp_path / "notes.md").write_text("not a suite\n")
    for cmd in ("list", "check"):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "from agentpost.cli import main; main()",
                "tasks",
                cmd,
                "notes.md",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert (out.returncode, out.stderr) == (
            2,
            "error: notes.md: not a task suite directory\n",
        ), cmd


def test_cli_tasks_check_on_a_terminal_bench_1_task(backend) -> None:
    out = _cli("tasks", "check", str(FIXTURES / "tb1-hello"), "--json")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["tasks"]
    assert (row["oracle_reward"], row["nop_reward"], row["wrong_reward"], row["ok"]) == (
        1.0,
        0.0,
        None,
        True,
    )
