"""Streaming (#30 item 5): `efficiency`, `summary` and `report` read each trajectory once and
keep only its row; their numbers equal those computed from every trajectory held in memory with
the list functions (hero.cost over a model's trajectories, hero.analyze over a list, the
select.read_files/select pair), and a progress bar shows only when asked or on a terminal."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from hero_traj_factory import shell, traj, turn
from shared_data import TRAJECTORIES

from agentpost.errors import InputError
from agentpost.hero import cost as C
from agentpost.hero.analyze import analyze, trajectory_row
from agentpost.hero.behaviours import detect
from agentpost.hero.entropy import turn_entropy
from agentpost.prices import Prices
from agentpost.report.rundata import load
from agentpost.trajectory.inputs import Stream, read_files
from agentpost.trajectory.io import read_jsonl, write_jsonl
from agentpost.trajectory.select import labels, select

CLI = [sys.executable, "-c", "import sys; from agentpost.cli import main; sys.argv[0] = 'agentpost'; main()"]  # fmt: skip


def _fleet() -> list:
    """Three models (one without cached counts), logprobs on every turn, repeated calls."""
    out = []
    for model, scale in (("a", 3), ("b", 1), ("c", 2)):
        for task in ("t1", "t2", "t3"):
            for r in range(3):
                turns = [
                    turn(k, [shell("cat a.py" if k % 2 else "ls -la", exit_code=k % 3 and 0)],
                         inp=1_000 * (k + scale), cached=None if model == "c" else 700 * k,
                         out=50 + r, p_top=0.9 if k % 2 else 0.35)
                    for k in range(2 + r * scale)
                ]  # fmt: skip
                out.append(traj(f"{model}-{task}-{r}", task, model, r != 2, turns))
    return out


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    trajs = _fleet()
    paths = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    write_jsonl(paths[0], trajs[:14])
    write_jsonl(paths[1], trajs[14:])
    return paths


def test_the_streamed_document_equals_the_list_computation(files: list[Path]) -> None:
    res = subprocess.run([*CLI, "efficiency", *map(str, files), "--json", "--bootstrap", "50",
                          "--price-in", "3", "--price-out", "15"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # no bar: not a terminal, and JSON
    doc = json.loads(res.stdout)
    trajs = [t for f in files for t in read_jsonl(f)]
    prices = Prices(input=3, output=15)
    held = analyze(trajs, n_boot=50, prices=prices, inputs=[str(f) for f in files])
    held["producer"]["args"]["prices"] = doc["producer"]["args"]["prices"]  # same Prices
    assert doc == json.loads(json.dumps(held))
    # each row, and each model's cache and price sums, from today's list functions
    for t, row in zip(trajs, doc["trajectories"], strict=True):
        ent = [turn_entropy(u) for u in t.turns]
        assert row == json.loads(json.dumps(trajectory_row(t, detect(t), ent, prices)))
    for m in doc["models"]:
        mine = [t for t in trajs if t.model == m["model"]]
        assert m["cache_hit_rate"] == C.cache_hit_rate(mine)
        assert m["effective_token_price"] == C.effective_token_price(mine, prices)
        assert m["trajectories"] == len(mine)
    assert {m["model"] for m in doc["models"] if m["association"]} == {"a", "b", "c"}


def test_run_rows_equal_the_rows_of_every_trajectory_held(
    tmp_path: Path, files: list[Path]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for f in files:
        (run / f.name).write_bytes(f.read_bytes())
    (run / "zz-copy.jsonl").write_bytes(files[0].read_bytes())  # the same, read last
    data = load(run)
    trajs = [t for f in files for t in read_jsonl(f)]
    rows = analyze(trajs, n_boot=0)["trajectories"]
    lab = labels(trajs)
    assert list(data.rows) == [t.id for t in trajs]  # each once, in file order
    for t, row in zip(trajs, rows, strict=True):
        got = data.rows[t.id]
        want = dict(row, agent=lab[t.id], task_id=t.task_id or t.id,
                    file=next(f.name for f in files if t in read_jsonl(f)),
                    turn_tokens=[u.usage.input_tokens + u.usage.output_tokens for u in t.turns])  # fmt: skip
        assert got == want


@pytest.mark.parametrize(("agents", "tasks"), [(None, None), (["a"], None), (["b", "c"], ["t2"]),
                                               (None, ["t1", "t3"]), (["nope"], None),
                                               (["a"], ["t9"])])  # fmt: skip
def test_the_stream_reads_and_selects_as_read_files_and_select_do(
    tmp_path: Path, files: list[Path], caplog: pytest.LogCaptureFixture, agents, tasks
) -> None:
    changed = read_jsonl(files[0])[0].model_copy(update={"run_id": "other"})
    write_jsonl(tmp_path / "three.jsonl", [*read_jsonl(files[1])[:2], changed])
    paths = [*files, tmp_path / "three.jsonl", files[0]]  # a file twice, copies, a variant
    with caplog.at_level(logging.WARNING, logger="agentpost"):
        try:
            want = [
                t.id for t in select([t for _, ts in read_files(paths) for t in ts], agents, tasks)
            ]
        except InputError as e:
            want = str(e)
        held_log = [r.getMessage() for r in caplog.records]
        caplog.clear()
        stream = Stream([(str(p), p) for p in paths], agents, tasks)
        try:
            got = [t.id for _, t in stream]
            stream.finish()
        except InputError as e:
            got = str(e)
        streamed_log = [r.getMessage() for r in caplog.records]
    assert got == want
    assert streamed_log == held_log and any("different content" in m for m in held_log)


@pytest.mark.parametrize("command", ["efficiency", "summary", "report"])
def test_a_progress_bar_only_when_asked(tmp_path: Path, files: list[Path], command: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "t.jsonl").write_bytes(files[0].read_bytes())
    target = [str(run / "t.jsonl")] if command == "efficiency" else [str(run)]
    quiet = subprocess.run([*CLI, command, *target], capture_output=True, text=True, timeout=120)
    shown = subprocess.run([*CLI, command, *target, "--progress"], capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert quiet.returncode == shown.returncode == 0, shown.stderr
    assert "trajectories" not in quiet.stderr
    assert "14 trajectories" in shown.stderr and "100%" in shown.stderr
    assert quiet.stdout == shown.stdout  # the bar goes to stderr only


@pytest.mark.skipif(not TRAJECTORIES.is_dir(), reason="../shared/data is absent")
def test_real_samples_stream_to_the_same_document(tmp_path: Path) -> None:
    from agentpost.trajectory.importing import import_paths

    real = tmp_path / "real.jsonl"
    write_jsonl(real, import_paths([TRAJECTORIES]).trajectories)
    res = subprocess.run([*CLI, "efficiency", str(real), "--json", "--bootstrap", "20"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    held = analyze(read_jsonl(real), n_boot=20, inputs=[str(real)])
    assert json.loads(res.stdout) == json.loads(json.dumps(held))
