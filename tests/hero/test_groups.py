"""HERO advantage input from any trajectories (hero.groups), `agentpost hero groups` and
`hero advantages --export trl|verl` on real recorded rollouts, and the refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agentpost.hero.analyze import analyze
from agentpost.hero.groups import GroupingError, hero_groups
from agentpost.trajectory.model import FORMAT, Outcome, Producer, Trajectory, Turn, Usage

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]


def _traj(i: str, task: str | None, resolved: bool | None, model: str = "m", run: str = "r"):
    turns = [Turn(index=k, usage=Usage(input_tokens=100, output_tokens=10 + k)) for k in range(2)]
    return Trajectory(format=FORMAT, id=i, task_id=task, model=model, run_id=run, turns=turns,
                      outcome=Outcome(resolved=resolved),
                      producer=Producer(name="test", version="0"))  # fmt: skip


def test_groups_by_agent_and_task_and_says_what_it_left_out() -> None:
    trajs = [_traj("a", "t1", True), _traj("b", "t1", False), _traj("c", "t2", True),
             _traj("d", None, True), _traj("e", "t1", None), _traj("f", "t1", True, run="r2")]  # fmt: skip
    doc = hero_groups(trajs, analyze(trajs, n_boot=0)["trajectories"])
    assert [r["id"] for r in doc["rollouts"]] == ["a", "b"]
    assert {r["group"] for r in doc["rollouts"]} == {"t1 | m [run r]"}  # run r2 is its own agent
    assert doc["skipped"] == {"no task id": 1, "outcome unknown": 1, "only rollout of its group": 2}
    assert doc["has_entropy"] is False and "--ablation no-fine" in doc["note"]
    assert doc["rollouts"][1]["turns"] == [
        {"entropy": 0.0, "tokens": 10},
        {"entropy": 0.0, "tokens": 11},
    ]
    pooled = hero_groups(trajs, analyze(trajs, n_boot=0)["trajectories"], pool_agents=True)
    assert [r["id"] for r in pooled["rollouts"]] == ["a", "b", "f"]


def test_refuses_when_nothing_can_be_grouped() -> None:
    trajs = [_traj("a", None, True), _traj("b", "t1", True)]
    with pytest.raises(
        GroupingError, match=r"no task id: 1 \(e\.g\. a\).*only rollout of its group"
    ):
        hero_groups(trajs, analyze(trajs, n_boot=0)["trajectories"])


needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hero-own") / "run"
    proc = subprocess.run([*CLI, "run", "-o", str(out), "--policy", "hasty", "--policy", "careful",
                           "--task", "c-primes", "-G", "2"],
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out / "trajectories.jsonl"


@needs_bwrap
def test_cli_groups_then_advantages_then_trl_and_verl_exports(
    recorded: Path, tmp_path: Path
) -> None:
    groups = tmp_path / "groups.json"
    proc = subprocess.run([*CLI, "hero", "groups", str(recorded), "--pool-agents", "-o", str(groups)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "4 rollouts in 1 groups (by task)" in proc.stdout and "no-fine" in proc.stdout
    adv = subprocess.run([*CLI, "hero", "advantages", str(groups), "--json", "--ablation", "no-fine"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    doc = json.loads(adv.stdout)
    by_id = {r["id"]: r for r in doc["rollouts"]}
    hasty = [r for i, r in by_id.items() if "hasty" in i]
    careful = [r for i, r in by_id.items() if "careful" in i]
    assert all(not r["resolved"] for r in hasty) and all(r["resolved"] for r in careful)
    assert max(a for r in hasty for a in r["turn_advantages"]) < min(
        a for r in careful for a in r["turn_advantages"]
    )  # resolution first
    trl = tmp_path / "hero_trl.jsonl"
    proc = subprocess.run([*CLI, "hero", "advantages", str(recorded), "--pool-agents", "--export",
                           "trl", "-o", str(trl)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "no logprobs" in proc.stderr and "4 trl rows written" in proc.stderr
    rows = [json.loads(x) for x in trl.read_text().splitlines()]
    trajs = {t["id"]: t for t in map(orjson.loads, recorded.read_bytes().splitlines())}
    for r in rows:
        assert r["turn_advantages"] == by_id[r["id"]]["turn_advantages"]  # same numbers
        assert r["prompt"][-1] == {"role": "user", "content": trajs[r["id"]]["instruction"]}
        roles = [m["role"] for m in r["completion"]]
        assert roles.count("assistant") == len(trajs[r["id"]]["turns"])
        assert [a is None for a in r["advantages"]] == [x == "tool" for x in roles]
    pq = pytest.importorskip("pyarrow.parquet")
    verl = tmp_path / "hero.parquet"
    proc = subprocess.run([*CLI, "hero", "advantages", str(recorded), "--pool-agents", "--export",
                           "verl", "-o", str(verl)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(verl).to_pylist()
    assert len(table) == 4 and {"data_source", "prompt", "reward_model", "extra_info"} <= set(
        table[0]
    )
    first = table[0]["extra_info"]
    assert first["turn_advantages"] == by_id[first["id"]]["turn_advantages"]
    assert json.loads(first["response"])[0]["role"] == "assistant"


@needs_bwrap
def test_cli_refusals_are_one_line(recorded: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_bytes(recorded.read_bytes().splitlines()[0] + b"\n")
    proc = subprocess.run([*CLI, "hero", "groups", str(one)], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        "no HERO group of 2 or more rollouts" in proc.stderr and len(proc.stderr.splitlines()) == 1
    )
    groups = tmp_path / "g.json"
    groups.write_text('{"rollouts": []}')
    proc = subprocess.run([*CLI, "hero", "advantages", str(groups), "--export", "trl", "-o",
                           str(tmp_path / "x.jsonl")], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and "--export needs canonical trajectories" in proc.stderr
