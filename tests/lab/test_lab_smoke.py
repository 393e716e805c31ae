"""The GPU script's CPU smoke: `scripts/lab-gpu.sh --smoke` runs both lab experiments end to
end at smoke size (tasks, scripted corpora, student and teacher SFT, pre-flight table, step-0
evaluation, one RL step per variant through the TRL adapter, D_SC/D_FTD collection with the model
teacher, matched fine-tunes, held-out metrics, the results document) in real sandboxes; a rerun
resumes from what was written; the SCVD fine-tune demonstrably moves the student."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

from agentpost.lab.directions import VERDICTS  # noqa: E402
from agentpost.sandbox.registry import get_backend  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not get_backend("bwrap").available(), reason="no bubblewrap")


def _script(out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(["bash", str(ROOT / "scripts" / "lab-gpu.sh"), "--smoke", str(out)],
                          capture_output=True, text=True, env=env, timeout=900)  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab")
    r = _script(out)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, r


def test_both_experiments_and_the_results_document(smoke):
    out, r = smoke
    hero = json.loads((out / "hero_lab.json").read_text())
    scvd = json.loads((out / "scvd_lab.json").read_text())
    res = json.loads((out / "results.json").read_text())
    assert set(hero["table"]) == {"base", "grpo", "hero"}
    for row in hero["table"].values():  # 3 held-out rollouts: "too few" for an interval
        assert row["resolved"]["ci95"] is None and row["resolved"]["too_few"]
        assert 0.0 <= row["resolved"]["mean"] <= 1.0
    assert "delta_vs_grpo" in hero["table"]["hero"]["tokens"]
    assert [c["step"] for c in hero["runs"][0]["curve"]] == [0, 1]
    assert hero["sft"]["loss_last"] < hero["sft"]["loss_first"]
    pf = json.loads((out / "preflight.json").read_text())
    assert pf["format"] == "agentpost.lab-preflight/1" and len(pf["records"]) == 3 * 2
    assert set(scvd["table"]) == {"base", "ftd", "scvd"}
    data = scvd["data"]
    assert data["rows"] > 0 and set(data["supervised_tokens"]) == {"sc", "ftd"}
    assert res["format"] == "agentpost.lab-results/1" and res["producer"]["name"]
    assert res["seeds"] == {"hero": [0], "scvd": [0]}
    assert 0.0 <= res["preflight"]["share_in_regime"] <= 1.0
    names = {d["name"] for d in res["directions"]}
    assert "hero_vs_grpo:tokens" in names and "scvd_vs_ftd:pass1" in names
    ran = [d for d in res["directions"] if d["verdict"] != "not run"]
    assert all(d["verdict"] in VERDICTS for d in ran)
    # the smoke runs grpo and hero only: the ablations' directions are listed as not run
    skipped = {d["name"]: d["reason"] for d in res["directions"] if d["verdict"] == "not run"}
    assert skipped["no_hpo_vs_hero:resolved"] == "arm(s) not run: no_hpo"
    assert "| scvd |" in (out / "results.md").read_text()
    assert "lab: " in r.stdout


def test_the_scvd_fine_tune_moves_the_student(smoke):
    import torch
    from safetensors.torch import load_file

    from agentpost.sft.io import read_rows

    out, _ = smoke
    sc = read_rows(out / "scvd" / "data" / "sc.parquet")
    ftd = read_rows(out / "scvd" / "data" / "ftd.parquet")
    assert len(sc) == len(ftd) and [r.meta["task_id"] for r in sc] == [
        r.meta["task_id"] for r in ftd]  # fmt: skip
    assert all(not m["train"] for r in sc for m in r.messages[: 1 + 2 * (r.meta["t_c"] + 1)])
    base = load_file(str(out / "sft" / "model.safetensors"))
    for arm in ("scvd", "ftd"):
        done = json.loads((out / "scvd" / f"{arm}-s0" / "done.json").read_text())
        assert done["steps"] >= 4 and done["loss_last"] < done["loss_first"], done
        tuned = load_file(str(out / "scvd" / f"{arm}-s0" / "model.safetensors"))
        moved = max(float((tuned[k] - base[k]).abs().max()) for k in base)
        assert moved > 1e-3, arm
        assert all(torch.isfinite(v).all() for v in tuned.values())


def test_another_pre_flight_draw_is_written_apart(smoke):
    from typer.testing import CliRunner

    from agentpost.cli import _register, app

    out, _ = smoke
    first = (out / "preflight.json").read_bytes()
    _register()
    r = CliRunner().invoke(app, ["lab", "preflight", "-o", str(out), "--scale", "smoke",
                                 "--draw", "1"])  # fmt: skip
    assert r.exit_code == 0, r.output
    pf = json.loads((out / "preflight-s1.json").read_text())
    assert pf["producer"]["args"]["seed"] == 1 and len(pf["records"]) == 3 * 2
    assert (out / "preflight.json").read_bytes() == first  # the experiments' table untouched


def test_a_rerun_resumes_without_recomputing(smoke):
    out, _ = smoke
    files = sorted([*(out / "rl").glob("*.json"), *(out / "scvd" / "eval").glob("*.jsonl")])
    stamps = {p: p.stat().st_mtime_ns for p in files}
    before = json.loads((out / "hero_lab.json").read_text())["table"]
    r = _script(out)
    assert r.returncode == 0, r.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in files} == stamps
    assert json.loads((out / "hero_lab.json").read_text())["table"] == before
