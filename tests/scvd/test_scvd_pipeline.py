"""`agentpost diagnose`: the resumable pipeline (store-backed judge calls, counted against the
real loopback server), and the expected story on reference-policy trajectories."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from loopback_panel import CASES, LABELS, N_CALLS, answer, config, opts

from agentpost.agent.loopback import LoopbackServer
from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.scvd import heuristic
from agentpost.scvd.calibrate_io import calibrate_files
from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
from agentpost.store import Store
from agentpost.tasks.loader import bundled_suite_path, load_suite
from agentpost.trajectory.io import read_jsonl, write_jsonl

AGENTPOST = str(Path(sys.executable).parent / "agentpost")  # the console script of this venv


def test_rerun_repeats_no_judge_call_and_gives_the_same_result(tmp_path) -> None:
    trajs = [t for t, _ in CASES]
    with LoopbackServer(answer) as srv:
        doc1 = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert len(srv.requests) == N_CALLS
        doc2 = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert len(srv.requests) == N_CALLS  # nothing asked again
    assert doc1["metrics"] == doc2["metrics"]
    lines = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    for line in lines:  # the panel reproduced every label; no task → no replay → y_c null
        lab = LABELS[line["case_id"]]
        assert line["decision"]["candidate_step"] == lab["candidate_step"]
        assert line["decision"]["resolved_by"] == "vote"
        if line["decision"]["verification_triggered"]:
            assert line["replay"]["status"] == "task_missing" and line["record"]["y_c"] is None
    assert doc1["panel"]["three_way_semantics"] == 1.0
    # the summary names the tasks the suite lacks (none here), not only how many replays failed
    missing = sorted(
        {
            x["record"]["task"]
            for x in lines
            if x["replay"] and x["replay"]["status"] == "task_missing"
        }
    )
    assert missing and doc1["replay"]["missing_tasks"] == missing
    summary = (tmp_path / "summary.md").read_text()
    assert f"Tasks not in the suite ({len(missing)}): {missing[0]!r}" in summary
    answers = (tmp_path / "judge_answers.jsonl").read_text().splitlines()
    assert len(answers) == N_CALLS
    assert "caveat" not in doc1["producer"]  # model judges: no heuristic caveat
    # the run's records score its judges and its panel against the labels
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(lab) + "\n" for lab in LABELS.values()))
    cal = calibrate_files(labels, [tmp_path / "records.jsonl"])
    assert set(cal["judges"]) == {"j0", "j1", "j2"} and cal["arbiter"] == "j0"
    assert all(r["strict_accuracy"] == 1.0 for r in cal["judges"].values())
    (panel,) = cal["panels"].values()
    assert panel["strict_accuracy"] == 1.0 and panel["n"] == len(CASES)
    # judge_answers.jsonl replays the whole panel offline (recorded judges), to the same result
    rec = {"judges": [{"id": f"j{i}", "kind": "recorded", "path": "judge_answers.jsonl"}
                      for i in range(3)], "arbiter": "j0"}  # fmt: skip
    again = diagnose(trajs, [], build_panel(rec, base=tmp_path), tmp_path / "again", opts())
    assert again["metrics"] == doc1["metrics"] and again["panel"] == doc1["panel"]
    assert "heuristic" not in (tmp_path / "summary.md").read_text()


def test_judge_calls_in_flight_never_exceed_the_concurrency_limit(tmp_path) -> None:
    trajs = [t for t, _ in CASES[:4]]
    lock, now, peak = threading.Lock(), [0], [0]

    def counting(body):
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return answer(body)

    with LoopbackServer(counting) as srv:
        diagnose(trajs, [], build_panel({**config(srv.url), "concurrency": 2}), tmp_path, opts())
        assert len(srv.requests) == 3 * 4
    assert peak[0] == 2  # calls do run side by side, and never more than two


def test_infra_failures_are_not_cached_and_the_rerun_completes(tmp_path) -> None:
    trajs = [t for t, _ in CASES[:2]]
    with LoopbackServer(answer) as srv:
        srv.fail(*["500"] * 3)  # the first judge call exhausts its retries (1 + 2)
        doc = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert doc["judges"]["status"]["j0"] == {"infra_error": 1, "valid": 1}
        assert Store(tmp_path / "store.sqlite").count("scvd-judge") == 5
        n = len(srv.requests)
        assert "INCOMPLETE: 1 judge results" in (tmp_path / "summary.md").read_text()
        doc = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert len(srv.requests) == n + 1  # only the failed call is asked again
        assert doc["judges"]["status"]["j0"] == {"valid": 2}
        summary = (tmp_path / "summary.md").read_text()
        assert "judge results" not in summary and "replays could not run" in summary  # no tasks


def test_killed_run_resumes_without_repeating_finished_calls(tmp_path) -> None:
    trajs = [t for t, _ in CASES]
    src = tmp_path / "trajs.jsonl"
    write_jsonl(src, trajs)
    release = threading.Event()
    k = 7

    def slow_after_k(body):
        if len(srv.requests) > k:
            release.wait(30)  # hold the (k+1)-th request until the process is killed
        return answer(body)

    with LoopbackServer(slow_after_k) as srv:
        cfg = tmp_path / "judges.json"
        cfg.write_text(json.dumps(config(srv.url)))
        run = tmp_path / "run"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [AGENTPOST, "diagnose", str(src), "--judges", str(cfg),
             "-o", str(run), "--no-progress", "--bootstrap", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while len(srv.requests) <= k and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        release.set()
        stored = Store(run / "store.sqlite").count("scvd-judge")
        assert stored == k  # every finished call was kept; the one in flight was lost
        before = len(srv.requests)
        doc = diagnose(trajs, [], build_panel(json.loads(cfg.read_text())), run, opts())
        assert len(srv.requests) - before == N_CALLS - stored
    with LoopbackServer(answer) as ref_srv:
        ref = diagnose(trajs, [], build_panel(config(ref_srv.url)), tmp_path / "ref", opts())
    assert doc["metrics"] == ref["metrics"]


@pytest.fixture(scope="module")
def policy_trajectories(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("policies")
    cmd = [AGENTPOST, "run", "--policy", "all", "--task", "csv-to-json",
           "--task", "top-client-ips", "-o", str(out), "-n", "2"]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return out / "trajectories.jsonl"


@pytest.fixture(scope="module")
def story(policy_trajectories, tmp_path_factory) -> tuple[dict, Path]:
    """One uninterrupted diagnosis of the policy trajectories with the default panel."""
    run = tmp_path_factory.mktemp("story")
    trajs = read_jsonl(policy_trajectories)
    tasks = load_suite(bundled_suite_path("terminal"))
    return diagnose(trajs, tasks, build_panel(DEFAULT_CONFIG), run, opts()), run


def test_reference_policies_tell_the_expected_story(story) -> None:
    doc, tmp_path = story
    lines = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    by_policy: dict[str, list[dict]] = {}
    for line in lines:
        by_policy.setdefault(line["record"]["model"], []).append(line["record"])
    for r in by_policy["scripted/wrong-then-repaired"]:
        assert (r["I_c"], r["I_v"], r["z"], r["y_c"], r["y_f"]) == (True, True, "error", 0, 1)
    for r in by_policy["scripted/hasty"]:
        assert (r["I_c"], r["I_v"], r["y_c"], r["y_f"]) == (True, False, None, 0)
    for r in by_policy["scripted/careful"] + by_policy["scripted/wasteful"]:
        assert (r["I_v"], r["z"], r["y_c"], r["y_f"]) == (True, "no-error", 1, 1)
    pm = doc["metrics"]["per_model"]
    wtr, hasty, careful = (
        pm["scripted/wrong-then-repaired"],
        pm["scripted/hasty"],
        pm["scripted/careful"],
    )
    assert (wtr["ICA"], wtr["EDR"], wtr["ESP"], wtr["RSR"], wtr["W2R"], wtr["final_acc"]) == (
        0,
        1,
        1,
        1,
        1,
        1,
    )
    assert wtr["CPR"] is None and wtr["VPR"] is None  # no correct candidate: NA, not 0
    assert hasty["VTR"] == 0 and hasty["VOR"] is None and hasty["final_acc_all"] == 0
    assert (careful["ICA"], careful["CPR"], careful["VPR"], careful["R2W"]) == (1, 1, 1, 0)
    assert doc["replay"]["status"] == {"ok": 6}  # careful, wasteful, wrong-then-repaired × 2 tasks
    summary = (tmp_path / "summary.md").read_text()
    assert "scripted/hasty" in summary and "| macro 95% CI |" in summary
    # the default panel is three heuristic variants: the caveat is in both outputs
    caveat = doc["producer"]["caveat"]
    assert "agentpost scvd calibrate real --heuristic" in caveat and caveat in summary
    assert json.loads((tmp_path / "metrics.json").read_text())["producer"]["caveat"] == caveat


def test_budget_stops_new_judge_calls_and_a_rerun_with_more_budget_finishes(tmp_path) -> None:
    trajs = [t for t, _ in CASES[:3]]
    with LoopbackServer(answer) as srv:
        tight = {**config(srv.url), "budget": {"max_total_tokens": 1}}
        doc = diagnose(trajs, [], build_panel(tight), tmp_path, opts())
        assert len(srv.requests) == 1  # the first call spends the budget; no further calls
        statuses = {s for j in doc["judges"]["status"].values() for s in j}
        assert statuses == {"valid", "budget"}
        # case 0: only the arbiter (j0) answered, so it decides; the others stay unannotated
        assert doc["panel"]["unannotated"] == 2 and doc["panel"]["arbiter_rate"] == 1 / 3
        doc = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert len(srv.requests) == 1 + 3 * 3 - 1  # the stored answer is not asked again
        assert doc["panel"]["vote_rate"] == 1.0


def test_killed_during_replays_resumes_without_asking_or_replaying_again(
    policy_trajectories, story, tmp_path
) -> None:
    # Judges are real HTTP calls (answers: the heuristic's), so repeated calls would be seen.
    trajs = {t.id: t for t in read_jsonl(policy_trajectories)}

    def heuristic_answer(body) -> str:
        case = re.search(r"^case_id: (.*)$", body["messages"][1]["content"], re.M).group(1)
        return json.dumps(heuristic.annotate(trajs[case], case).to_json())

    def replays(run: Path) -> dict[str, float]:
        try:
            with sqlite3.connect(run / "store.sqlite") as db:
                rows = db.execute("SELECT key, created FROM results WHERE kind = 'scvd-replay'")
                return dict(rows.fetchall())
        except sqlite3.OperationalError:  # the schema is not written yet
            return {}

    run, cfg = tmp_path / "run", tmp_path / "judges.json"
    with LoopbackServer(heuristic_answer) as srv:
        cfg.write_text(json.dumps(config(srv.url)))
        proc = subprocess.Popen(
            [AGENTPOST, "diagnose", str(policy_trajectories), "--judges", str(cfg), "-o", str(run),
             "--no-progress", "--bootstrap", "50", "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (run / "store.sqlite").exists() and len(replays(run)) >= 2:
                break
            time.sleep(0.02)
        proc.kill()
        proc.wait()
        before, asked = replays(run), len(srv.requests)
        assert asked == 3 * len(trajs) and 2 <= len(before) < 6  # killed among the replays
        suite = load_suite(bundled_suite_path("terminal"))
        panel = build_panel(json.loads(cfg.read_text()))
        doc = diagnose(
            list(trajs.values()), suite, panel, run, DiagnoseOptions(n_boot=50, progress=False)
        )
        assert len(srv.requests) == asked  # no judge call repeated
    after = replays(run)
    assert len(after) == 6 and all(after[k] == t for k, t in before.items())  # none redone
    ref, ref_run = story  # the same trajectories, never interrupted (heuristic judges)
    assert doc["metrics"] == ref["metrics"]
    recs, refs = ([json.loads(x)["record"] for x in (r / "records.jsonl").read_text().splitlines()]
                  for r in (run, ref_run))  # fmt: skip
    assert recs == refs


@pytest.mark.parametrize(
    "args, says",
    [
        (["missing.jsonl"], "missing.jsonl: no such trajectory file"),
        (["empty.jsonl"], "empty.jsonl: no trajectories to diagnose"),
        (["t.jsonl", "--suite", "./no/such/suite"], "./no/such/suite: not a task suite directory"),
        (["t.jsonl", "--judges", "one.json"], "one.json: $.judges: the panel needs exactly three"),
    ],
)
def test_diagnose_bad_input_is_one_line(tmp_path, args, says) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    write_jsonl(tmp_path / "t.jsonl", [CASES[0][0]])
    (tmp_path / "one.json").write_text('{"judges": [{"id": "a", "kind": "heuristic"}]}')
    out = subprocess.run([AGENTPOST, "diagnose", *args, "-o", "run"], cwd=tmp_path,
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 2 and out.stderr == f"error: {says}" + out.stderr.split(says)[1]
    assert out.stderr.count("\n") == 1 and not (tmp_path / "run").exists()


def test_diagnose_cli_shows_progress_and_the_summary(tmp_path) -> None:
    """...and, since the edge cases' task is in no suite, says in one line that no replay ran
    (exit 1: the metrics that need a candidate's outcome are not measured), files written."""
    write_jsonl(tmp_path / "t.jsonl", [t for t, _ in CASES[:2]])
    out = subprocess.run([AGENTPOST, "diagnose", "t.jsonl", "-o", "run", "--bootstrap", "20"],
                         cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert out.returncode == 1 and len(errors) == 1, out.stderr
    assert "none of the 2 candidate states could be replayed (task_missing: 2)" in errors[0]
    assert "annotate" in out.stderr and "100%" in out.stderr  # the rich progress bars
    summary = (tmp_path / "run/summary.md").read_text()
    assert out.stdout.startswith(summary) and "metrics.json" in out.stdout.splitlines()[-1]
    assert {p.name for p in (tmp_path / "run").iterdir()} >= {
        "metrics.json",
        "records.jsonl",
        "summary.md",
        "judge_answers.jsonl",
        "store.sqlite",
    }


def test_scvd_metrics_reads_the_records_diagnose_writes(story) -> None:
    """`agentpost scvd metrics RUN_DIR/records.jsonl` recomputes what diagnose reported."""
    doc, run = story
    out = subprocess.run(
        [AGENTPOST, "scvd", "metrics", str(run / "records.jsonl"), "--json", "--bootstrap", "0"],
        check=True,
        capture_output=True,
        text=True,
    )
    again = json.loads(out.stdout)
    assert again["per_model"] == doc["metrics"]["per_model"]
    assert again["macro"] == doc["metrics"]["macro"]
