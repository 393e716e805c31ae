"""The documented offline SCVD run (scripts/scvd-offline.sh), killed with SIGKILL in the middle
of `scvd collect` and run again: nothing finished is recomputed or lost, and the run completes
with matched SCVD and FTD datasets and two trained tiny models."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("trl")

from agentpost.sft.io import read_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "scvd-offline.sh"
TASKS = ["greet-cli"]


def env() -> dict[str, str]:
    return {**os.environ, "AGENTPOST": str(Path(sys.executable).parent / "agentpost"),
            "SCVD_STEPS": "2", "SCVD_CONCURRENCY": "1", "PYTHONPATH": str(ROOT / "src")}  # fmt: skip


def entries(db: Path) -> dict[str, float]:
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return dict(c.execute("SELECT key, created FROM results WHERE kind = 'scvd-collect'"))
    except sqlite3.Error:
        return {}


@pytest.mark.slow
def test_kill_mid_collect_then_rerun_loses_and_repeats_nothing(backend, tmp_path):
    out = tmp_path / "run"
    db = out / "collect" / "store.sqlite"
    proc = subprocess.Popen(["bash", str(SCRIPT), str(out), *TASKS], env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    before: dict[str, float] = {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        before = entries(db)
        if before and not (out / "collect" / "scvd.parquet").exists():
            os.killpg(proc.pid, signal.SIGKILL)  # the whole stage, mid-collect
            break
        time.sleep(0.02)
    proc.wait(timeout=30)
    assert before and not (out / "collect" / "scvd.parquet").exists(), "not killed mid-collect"
    assert len(before) < 2
    rerun = subprocess.run(["bash", str(SCRIPT), str(out), *TASKS], env=env(),
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    after = entries(db)
    assert len(after) == 2  # 1 task x 2 students, each computed once
    assert all(after[k] == t for k, t in before.items())  # finished cases were read back
    students = [
        json.loads(x)["id"]
        for x in (out / "students" / "trajectories.jsonl").read_text().splitlines()
    ]
    assert len(students) == len(set(students)) == 2
    doc = json.loads((out / "collect" / "scvd.json").read_text())
    assert doc["status"] == {"kept": 2}
    scvd = read_rows(out / "matched" / "scvd.matched.parquet")
    ftd = read_rows(out / "matched" / "ftd.matched.parquet")
    assert len(scvd) == len(ftd) == 1
    assert (
        sorted(r.meta["task_id"] for r in scvd) == sorted(r.meta["task_id"] for r in ftd) == TASKS
    )
    for name in ("scvd", "ftd"):
        run = json.loads((out / f"model-{name}" / "train.json").read_text())
        assert run["rows"] == 1 and len(run["log"]) == 2
