"""Each input read once (issue 30 item 2) and --agent/--task on what a command reads (item 1):
the same file twice, overlapping folders, the same trajectory in two files; agent labels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentpost.errors import InputError
from agentpost.trajectory.io import write_jsonl
from agentpost.trajectory.model import (
    Observation,
    Outcome,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
)
from agentpost.trajectory.select import agent_label, select

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
MADE = Producer(name="tests.select", version="0", args={})


def _traj(
    i: int, model: str | None, task: str, resolved: bool, run: str | None = None, tokens: int = 100
):
    calls = [ToolCall(name="bash", command="ls", kind="shell")] * 2
    turns = [Turn(index=k, tool_calls=[c], observations=[Observation(text="a", exit_code=0)],
                  usage=Usage(input_tokens=tokens, output_tokens=10)) for k, c in enumerate(calls)]  # fmt: skip
    return Trajectory(id=f"{task}::{model}::{i}", task_id=task, model=model, run_id=run,
                      turns=turns, outcome=Outcome(resolved=resolved), producer=MADE)  # fmt: skip


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_agent_labels_and_the_filters() -> None:
    trajs = [_traj(0, "m", "a", True, "r1"), _traj(1, "m", "a", False, "r2"),
             _traj(2, "other", "b", True), _traj(3, None, "b", True)]  # fmt: skip
    assert agent_label(None, "swe-agent", None, False) == "swe-agent"
    assert agent_label(None, None, None, False) == "NA"
    assert agent_label("m", None, "r1", True) == "m [run r1]"
    assert [t.id for t in select(trajs, ["m [run r2]"])] == ["a::m::1"]
    assert len(select(trajs, ["m"])) == 2  # the bare model name picks every run of it
    assert [t.id for t in select(trajs, None, ["b"])] == ["b::other::2", "b::None::3"]
    with pytest.raises(InputError, match=r"--agent: no trajectory of agent 'x' \(agents: NA, m"):
        select(trajs, ["x"])
    with pytest.raises(InputError, match="--task: no trajectory of task 'zz'"):
        select(trajs, None, ["zz"])


def test_duplicate_inputs_are_read_once_with_a_warning(tmp_path: Path) -> None:
    """`efficiency a.jsonl a.jsonl` used to double n; a copy of the same trajectories in a
    second file (same id and content) is counted once too; a different trajectory under a
    known id is kept once and the warning says they differ."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, [_traj(i, "m", f"t{i}", i % 2 == 0) for i in range(6)])
    write_jsonl(b, [_traj(i, "m", f"t{i}", i % 2 == 0) for i in range(3)])
    once = json.loads(cli("efficiency", str(a), "--json", "--bootstrap", "0").stdout)
    twice = cli("efficiency", str(a), str(a), str(b), "--json", "--bootstrap", "0")
    assert twice.returncode == 0, twice.stderr
    assert json.loads(twice.stdout)["models"] == once["models"]  # n and every figure unchanged
    assert "1 files reached more than once" in twice.stderr
    assert "3 trajectories already read from another input (same id and content)" in twice.stderr
    write_jsonl(b, [_traj(0, "m", "t0", False, tokens=999)])
    differ = cli("efficiency", str(a), str(b), "--json", "--bootstrap", "0")
    assert "with different content; the first was kept" in differ.stderr
    assert len(json.loads(differ.stdout)["trajectories"]) == 6
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "one.jsonl", [_traj(i, "m", f"t{i}", True) for i in range(5)])
    write_jsonl(run / "two.jsonl", [_traj(i, "m", f"t{i}", True) for i in range(5)])
    proc = cli("summary", str(run), "--json", "--bootstrap", "0")
    (agent,) = json.loads(proc.stdout)["agents"]
    assert agent["trajectories"] == 5 and "counted once" in proc.stderr


def test_import_of_overlapping_folders_reads_each_file_once(tmp_path: Path) -> None:
    """`import DIR DIR/sub` imported the files under sub twice (45 trajectories from 42); and
    -o into a missing folder creates it and says so."""
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    write_jsonl(logs / "x.jsonl", [_traj(0, "m", "t0", True)])
    write_jsonl(logs / "sub" / "y.jsonl", [_traj(1, "m", "t1", True), _traj(2, "m", "t2", True)])
    out = tmp_path / "new" / "folder" / "all.jsonl"
    proc = cli("import", str(logs), str(logs / "sub"), str(logs / "x.jsonl"), "-o", str(out),
               "--json", "--name", "mine")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["imported"] == 3
    assert "2 files reached more than once" in proc.stderr
    assert f"note: created the folder {out.parent} for all.jsonl" in proc.stderr
    runs = {json.loads(x)["run_id"] for x in out.read_text().splitlines()}
    assert runs == {"mine"}  # --name names the imported source


def test_agent_and_task_filters_on_the_reading_commands(tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    write_jsonl(f, [_traj(i, m, f"t{i % 3}", True) for i in range(6) for m in ("a", "b")])
    doc = json.loads(cli("efficiency", str(f), "--agent", "b", "--task", "t1", "--json",
                         "--bootstrap", "0").stdout)  # fmt: skip
    assert {(r["model"], r["task_id"]) for r in doc["trajectories"]} == {("b", "t1")}
    stats = json.loads(cli("stats", str(f), "--agent", "a", "--json").stdout)
    assert len(stats["trajectories"]) == 6
    bad = cli("efficiency", str(f), "--agent", "nobody")
    assert bad.returncode == 2 and "no trajectory of agent 'nobody' (agents: a, b)" in bad.stderr
    summ = json.loads(cli("summary", str(tmp_path), "--agent", "a", "--json").stdout)
    assert [x["agent"] for x in summ["agents"]] == ["a"]
