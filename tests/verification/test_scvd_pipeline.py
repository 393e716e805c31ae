"""`agentpost diagnose`: the resumable pipeline (store-backed judge calls, counted against the
real loopback server), and the expected story on reference-policy trajectories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentpost.agent.loopback import LoopbackServer
from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.store import Store
from agentpost.tasks.loader import bundled_suite_path, load_suite
from agentpost.trajectory.io import read_jsonl, write_jsonl
from agentpost.verification.examples import EDGE_CASES, edge_case
from agentpost.verification.pipeline import DiagnoseOptions, diagnose

CASES = [edge_case(n) for n in EDGE_CASES]
LABELS = {t.id: lab for t, lab in CASES}
N_CALLS = 3 * len(CASES)
AGENTPOST = str(Path(sys.executable).parent / "agentpost")  # the console script of this venv


def answer(body) -> str:
    case = re.search(r"^case_id: (.*)$", body["messages"][1]["content"], re.M).group(1)
    return json.dumps(LABELS[case])


def config(url: str) -> dict:
    j = {
        "kind": "openai",
        "model": "loopback",
        "base_url": url,
        "backoff_s": 0.01,
        "max_retries": 2,
    }
    return {"judges": [{"id": f"j{i}", **j, "extra_body": {"seed": i}} for i in range(3)],
            "arbiter": "j0", "concurrency": 1}  # fmt: skip


def opts() -> DiagnoseOptions:
    return DiagnoseOptions(n_boot=50, progress=False)


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
    answers = (tmp_path / "judge_answers.jsonl").read_text().splitlines()
    assert len(answers) == N_CALLS


def test_infra_failures_are_not_cached_and_the_rerun_completes(tmp_path) -> None:
    trajs = [t for t, _ in CASES[:2]]
    with LoopbackServer(answer) as srv:
        srv.fail(*["500"] * 3)  # the first judge call exhausts its retries (1 + 2)
        doc = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert doc["judges"]["status"]["j0"] == {"infra_error": 1, "valid": 1}
        assert Store(tmp_path / "store.sqlite").count("scvd-judge") == 5
        n = len(srv.requests)
        doc = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
        assert len(srv.requests) == n + 1  # only the failed call is asked again
        assert doc["judges"]["status"]["j0"] == {"valid": 2}


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
             "-o", str(run), "--no-progress", "--n-boot", "0"],
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


def test_reference_policies_tell_the_expected_story(policy_trajectories, tmp_path) -> None:
    trajs = read_jsonl(policy_trajectories)
    tasks = load_suite(bundled_suite_path("terminal"))
    doc = diagnose(trajs, tasks, build_panel(DEFAULT_CONFIG), tmp_path, opts())
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
    assert "scripted/hasty" in (tmp_path / "summary.md").read_text()


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
