"""`agentpost compare` and `agentpost summary` on real runs: two scripted policies rolled out in
bubblewrap sandboxes by `agentpost run`, compared with paired bootstrap intervals, in the
terminal, as JSON and in the report; two runs of one model are never pooled."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agentpost.report.build import render_run_dir

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
TASKS = ("c-primes", "calc-cli", "config-repair", "csv-to-json", "greet-cli")  # >= MIN_N pairs
CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    for name, policy in (("A", "careful"), ("B", "wasteful")):
        task_args = [x for t in TASKS for x in ("--task", t)]
        proc = cli("run", "-o", str(root / name), "--policy", policy, *task_args, "-G", "1")
        assert proc.returncode == 0, proc.stderr
    return root / "A", root / "B"


def test_compare_gives_paired_deltas_with_intervals(runs) -> None:
    a, b = runs
    proc = cli("compare", str(a), str(b), "--json", "--bootstrap", "300")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (c,) = doc["comparisons"]
    assert c["a"] == "scripted/careful (A)" and c["b"] == "scripted/wasteful (B)"
    m = {x["metric"]: x for x in c["metrics"]}
    assert {"resolution rate", "mean tokens", "TRS", "unproductive turn rate"} <= set(m)
    tok = m["mean tokens"]
    assert tok["pairs"] == len(TASKS) and tok["delta"] > 0 and tok["ci"][0] > 0  # B wastes
    assert tok["ci"][0] <= tok["delta"] <= tok["ci"][1]
    assert abs(tok["delta"] - (tok["b"] - tok["a"])) < 1e-9
    rows_b = [orjson.loads(x) for x in (b / "trajectories.jsonl").read_bytes().splitlines()]
    by_hand = sum(t["totals"]["input_tokens"] + t["totals"]["output_tokens"] for t in rows_b)
    assert abs(tok["b"] - by_hand / len(rows_b)) < 1e-6
    assert m["unproductive turn rate"]["delta"] > 0.3 and m["TRS"]["delta"] < 0
    # both resolve every task: no zero-width "95% CI 0 to 0", the reason instead
    res = m["resolution rate"]
    assert res["delta"] == 0 and res["ci"] is None and "no spread" in res["ci_note"]
    text = cli("compare", str(a), str(b), "--bootstrap", "100").stdout
    assert "A = scripted/careful (A)" in text and "mean tokens" in text and "{" not in text
    assert "no spread across resamples of its 5 tasks paired" in text


def test_compare_section_in_the_report(runs, tmp_path: Path) -> None:
    a, b = runs
    html = render_run_dir(a, tmp_path / "r.html", compare_to=b).read_text()
    sec = html[html.index("<h2>Compare runs") :]
    assert "A = scripted/careful (A); B = scripted/wasteful (B)" in sec
    assert "paired bootstrap" in sec and "token-resolution score" in sec
    assert html.index("<h2>Verdict") < html.index("<h2>Compare runs") < html.index("<h2>What this")
    proc = cli(
        "compare", str(a), str(b), "-o", str(tmp_path / "new" / "c.html"), "--bootstrap", "50"
    )
    assert proc.returncode == 0 and "95% CI (or why none)" in (tmp_path / "new/c.html").read_text()
    assert (
        f"wrote {tmp_path / 'new' / 'c.html'} (1 comparisons)" in proc.stderr
    )  # says what it wrote
    assert f"created the folder {tmp_path / 'new'}" in proc.stderr


def test_compare_takes_more_than_two_runs_and_falls_back_to_unpaired(runs, tmp_path) -> None:
    """A against B and against C; C shares no task with A, so its deltas are two-sample
    (unpaired) and say so, instead of an all-NA table."""
    a, b = runs
    c = tmp_path / "C"
    proc = cli("run", "-o", str(c), "--policy", "careful", "--task", "json-to-csv", "--task",
               "word-frequency", "--name", "third")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    runs = {orjson.loads(x)["run_id"] for x in (c / "trajectories.jsonl").read_bytes().splitlines()}
    assert runs == {"third"}  # --name names the run
    proc = cli("compare", str(a), str(b), str(c), "--json", "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    ab, ac = json.loads(proc.stdout)["comparisons"]
    assert ab["b"] == "scripted/wasteful (B)" and ac["b"] == "scripted/careful (C)"
    tok = next(x for x in ac["metrics"] if x["metric"] == "mean tokens")
    assert tok["paired"] is False and tok["shared"] == 0 and tok["delta"] is not None
    assert tok["ci"] is None and tok["ci_note"].startswith("too few tasks a side")  # 2 tasks in C
    text = cli("compare", str(a), str(b), str(c)).stdout
    assert "unpaired: the sides share 0 tasks" in text and text.count("A = ") == 2
    one = cli("compare", str(a))
    assert one.returncode == 2 and "give two or more run directories" in one.stderr


def test_unknown_agent_is_a_one_line_error(runs) -> None:
    a, b = runs
    proc = cli("compare", str(a), str(b), "--agent-a", "nobody")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "no agent 'nobody'" in proc.stderr and "scripted/careful" in proc.stderr


def test_two_runs_of_one_model_are_two_agents(runs, tmp_path: Path) -> None:
    """One file holding two runs of the same model (different run ids): the verdict and the
    viewer keep them apart, and compare can pick each."""
    a, _ = runs
    lines = (a / "trajectories.jsonl").read_bytes().splitlines()
    out = []
    for run_id in ("first", "second"):
        for x in lines:
            t = orjson.loads(x)
            t["id"], t["run_id"] = f"{run_id}:{t['id']}", run_id
            out.append(orjson.dumps(t))
    (tmp_path / "trajectories.jsonl").write_bytes(b"\n".join(out) + b"\n")
    proc = cli("summary", str(tmp_path), "--json", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    agents = [x["agent"] for x in json.loads(proc.stdout)["agents"]]
    assert agents == ["scripted/careful [run first]", "scripted/careful [run second]"]
    both = cli("summary", str(tmp_path), "--json", "--bootstrap", "50", "--agent", agents[1])
    assert [x["agent"] for x in json.loads(both.stdout)["agents"]] == [agents[1]]
    proc = cli("compare", str(tmp_path), str(tmp_path), "--json", "--bootstrap", "50",
               "--agent-a", agents[0], "--agent-b", agents[1])  # fmt: skip
    (c,) = json.loads(proc.stdout)["comparisons"]
    tok = next(x for x in c["metrics"] if x["metric"] == "mean tokens")
    assert tok["delta"] == 0 and tok["pairs"] == len(TASKS)  # same rollouts: nothing differs
    eff = cli("efficiency", str(tmp_path / "trajectories.jsonl"), "--bootstrap", "0",
              "-o", str(tmp_path / "efficiency.json"))  # fmt: skip
    assert eff.returncode == 0, eff.stderr
    html = render_run_dir(tmp_path).read_text()
    assert "scripted/careful ran in more than one run" in html
    assert f"scripted/careful [run first] ({len(TASKS)} trajectories)" in html


def test_summary_names_behaviours_examples_and_the_next_signal(runs) -> None:
    _, b = runs
    proc = cli("summary", str(b))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith(f"scripted/wasteful ({len(TASKS)} trajectories): resolves 100% (95% CI")
    assert "over-exploration:" in text and "of its tokens (" in text
    assert "examples: " in text and "::scripted/wasteful::" in text
    # one rollout per task and one agent: no HERO group can be formed, and the verdict says so
    assert "build next: HERO" not in text and "each of its 5 tasks has one rollout" in text
    assert "self-verification (SCVD): not measured: run `agentpost diagnose" in text
