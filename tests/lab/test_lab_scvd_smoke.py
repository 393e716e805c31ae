"""The SCVD-vs-FTD lab experiment end to end at smoke size: student SFT, D_SC collection by
candidate-state replay with the scripted teacher, size-matched D_FTD, fine-tuning each, held-out
metrics with CIs; a rerun resumes from what was written."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from agentpost.lab.scvd_lab import CAVEAT, ScvdLabConfig, run_scvd_lab  # noqa: E402
from agentpost.sandbox.registry import get_backend  # noqa: E402
from agentpost.sft.io import read_rows  # noqa: E402

BACKEND = get_backend("bwrap")


@pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
def test_smoke_runs_end_to_end_and_resumes(tmp_path):
    from typer.testing import CliRunner

    from agentpost.cli import _register, app

    _register()
    cfg = ScvdLabConfig.smoke()
    r = CliRunner().invoke(app, ["lab", "scvd", "--smoke", "-o", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # the trainers' own log lines go to stderr, never into the JSON
    assert doc["producer"]["caveat"] == CAVEAT
    assert "scripted" in doc["producer"]["teacher"]
    data = doc["data"]
    assert data["student_rollouts"] == cfg.rollouts_per_task * cfg.policy.n_train
    student = {k: v for k, v in data["outcomes"].items() if not k.startswith("scripted")}
    assert sum(student.values()) == data["student_rollouts"]
    assert data["outcomes"]["scripted hasty: kept"] == cfg.policy.n_train  # the teacher repairs
    assert data["repaired"] >= cfg.policy.n_train
    sc = read_rows(tmp_path / "scvd" / "data" / "sc.parquet")
    ftd = read_rows(tmp_path / "scvd" / "data" / "ftd.parquet")
    assert len(sc) == len(ftd) == data["rows"]  # size-matched
    assert [r.meta["task_id"] for r in sc] == [r.meta["task_id"] for r in ftd]  # task-matched
    assert set(doc["table"]) == {"base", "ftd", "scvd"}
    assert all(r["loss_last"] is not None for r in doc["runs"])
    for row in doc["table"].values():
        assert row["n"] == cfg.eval_samples * cfg.policy.n_heldout * len(cfg.seeds)
        acc = row["final_acc_all"]
        assert 0.0 <= acc["mean"] <= 1.0
    evals = sorted(p.name for p in (tmp_path / "scvd" / "eval").glob("*.jsonl"))
    stamps = {n: (tmp_path / "scvd" / "eval" / n).stat().st_mtime_ns for n in evals}
    again = run_scvd_lab(tmp_path, cfg, BACKEND, progress=lambda m: None)
    assert again["table"] == json.loads(json.dumps(doc["table"]))
    assert {n: (tmp_path / "scvd" / "eval" / n).stat().st_mtime_ns for n in evals} == stamps
