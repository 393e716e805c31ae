"""The `agentpost security` commands as a user types them: a hand-made label set whose numbers
were worked out by hand, grade lines fed to `security metrics`, and one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
T, G, N = "target_aligned", "generic", "none"
# (agent, task, func, sec, planning, coding, testing)
ROWS = [
    ("A", "t1", 1, 1, T, T, T),
    ("A", "t1", 1, 0, G, N, G),
    ("A", "t2", 1, 1, T, T, T),
    ("A", "t3", 1, 1, N, T, G),
    ("A", "t4", 0, 0, N, N, N),
    ("B", "t1", 1, 0, N, N, G),
    ("B", "t2", 1, 1, G, T, N),
    ("B", "t2", 0, 0, N, N, N),
    ("B", "t3", 1, 0, N, N, G),
    ("B", "t4", 1, 0, N, N, N),
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)


@pytest.fixture()
def labels(tmp_path: Path) -> Path:
    keys = ("agent", "task", "func", "sec", "planning", "coding", "testing")
    recs = [dict(zip(keys, r, strict=True)) for r in ROWS]
    for r in recs:
        r["func"], r["sec"] = bool(r["func"]), bool(r["sec"])
    recs.append({**recs[0], "task": "t9", "aborted": True})  # dropped before any statistic
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_attribute_text_output_matches_hand_computed_numbers(labels: Path) -> None:
    res = cli("security", "attribute", str(labels))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    # A: 4 of 5 functionally correct; target-aligned planning 2/4, coding 3/4, testing 2/4
    assert lines[0] == "A: n=5 func-correct=4 target-aligned planning=0.5 coding=0.75 testing=0.5"
    assert lines[1] == "B: n=5 func-correct=4 target-aligned planning=0 coding=0.25 testing=0"
    # tasks t1..t3: Δb planning (0.5, 1, 0), Δs (0.5, 0.5, 1) → r = −0.25 / sqrt(0.5 · 1/6)
    assert "r planning (A - B, 3 tasks): -0.866" in lines
    assert "r coding (A - B, 3 tasks): 0.866" in lines
    # pooled functionally correct (8): generic-only testing n11=1 n10=3 n01=3 n00=1 → −8/16
    assert lines[-1] == (
        "phi vs sec (8 functionally correct): generic-only testing=-0.5 "
        "target-aligned testing=0.577"
    )


def test_metrics_reads_grade_lines_keyed_by_task_id(tmp_path: Path, labels: Path) -> None:
    grades = tmp_path / "grades.jsonl"
    rows = [("ok", True, True), ("ok", True, False), ("empty_patch", None, None)]
    grades.write_text(
        "".join(
            json.dumps({"task_id": "user-lookup", "status": s, "func": f, "sec": c}) + "\n"
            for s, f, c in rows
        )
    )
    res = cli("security", "metrics", str(grades))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "all: n=3 aborted=0 FuncPass=0.667 SecPass=0.333 gap=0.333"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["attribute", "{labels}", "--agent-a", "A"], "error: --agent-a/--agent-b: give both"),
        (["attribute", "{tmp}/x.diff"], "error: {tmp}/x.diff: line 1: invalid JSON"),
        (["hint", "user-lookup", "--level", "L9"], "error: --level: hint level must be one of"),
        (
            ["grade", "user-lookup", "{tmp}/none.diff"],
            "error: {tmp}/none.diff: candidate not found",
        ),
        (["grade", "user-lookup", "{tmp}/x.diff", "--timeout", "0"], "error: --timeout: must be"),
        (["grade", "no-such-task", "{tmp}/x.diff"], "error: no-such-task: no such task"),
    ],
)
def test_mistakes_give_one_line_errors(tmp_path: Path, labels: Path, args, message) -> None:
    (tmp_path / "x.diff").write_text("--- a/users.py\n+++ b/users.py\n")
    fill = {"labels": str(labels), "tmp": str(tmp_path)}
    res = cli("security", *[a.format(**fill) for a in args])
    assert res.returncode == 2
    assert res.stderr.startswith(message.format(**fill)) and res.stderr.count("\n") == 1


def test_hint_level_is_case_insensitive() -> None:
    res = cli("security", "hint", "user-lookup", "--level", "l1")
    assert res.returncode == 0 and res.stdout.strip() == "CWE-89"


def test_annotate_warns_when_trajectories_have_no_final_files(tmp_path: Path) -> None:
    from agentpost.trajectory.model import Trajectory

    traj = Trajectory(id="imported-1", task_id="user-lookup", agent="someone", turns=[],
                      producer={"name": "test", "version": "0", "args": {}})  # fmt: skip
    src = tmp_path / "trajs.jsonl"
    src.write_text(traj.model_dump_json() + "\n")
    res = cli("security", "annotate", str(src), "-o", str(tmp_path / "labels.jsonl"))
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith("warning: 1 of 1 trajectories have no final files")
    assert "imported-1" in res.stderr
    label = json.loads((tmp_path / "labels.jsonl").read_text())
    assert (label["status"], label["reward"]) == ("no_patch", -1.0)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_security_demo_outputs_feed_metrics_and_carry_a_format(tmp_path: Path) -> None:
    out = tmp_path / "sd"
    res = cli("security", "demo", "-o", str(out), "--task", "calculator", "--policy", "mixed")
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "agentpost.security.demo-summary/1"
    assert summary["producer"]["args"]["agents"] == ["mixed"]
    # the same writer as `agentpost demo`'s security stage: per-agent tables, suite hash, attribution
    # a scripted policy goes by scripted/<name> in grades and reports (security.scripted.PREFIX)
    assert list(summary["per_agent_cwe"]) == ["scripted/mixed"]
    assert summary["producer"]["args"]["suite_hash"]
    attribution = json.loads((out / "attribution.json").read_text())
    assert attribution["producer"]["name"] == "agentpost.security.attribution.attribute"
    res = cli("security", "metrics", str(out / "grades.jsonl"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("scripted/mixed: n=1 aborted=0 FuncPass=1 ")
