"""Calibration statistics (spec b.4), Krippendorff's α, the bundled calibration set and the
heuristic's measured accuracy on it, and the `agentpost scvd` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentpost.scvd.calibrate_io import BUNDLED_LABELS, calibrate_files, read_labels
from agentpost.scvd.calibration import calibrate, judge_report, krippendorff_alpha
from agentpost.scvd.protocol import consistency_errors
from agentpost.scvd.records import Annotation

AGENTPOST = str(Path(sys.executable).parent / "agentpost")


def A(cid, ic=True, step=1, idx=0, iv=True, out="supports_pass") -> Annotation:
    if not ic:
        return Annotation(cid, "t", False, None, None, None, False, None)
    return Annotation(cid, "t", True, step, idx, "clean", iv, out if iv else None)


LABELS = {
    "a": A("a"),
    "b": A("b", out="exposes_error"),
    "c": A("c", ic=False),
    "d": A("d", iv=False),
}


def test_krippendorff_alpha_matches_the_published_example() -> None:
    n = None  # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal: 0.743
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
              [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]  # fmt: skip
    assert krippendorff_alpha(list(zip(*coders, strict=True))) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha([[1, 1], [0, 0], [1, 0]]) == pytest.approx(4 / 9)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation: undefined
    assert krippendorff_alpha([[1, None], [None, 2]]) is None


def test_judge_report_pooled_strict_fields_boundary_and_confusion() -> None:
    got = {
        "a": A("a"),  # all right
        "b": A(
            "b", step=2, idx=0, out="supports_pass"
        ),  # boundary one call off (by order), z wrong
        "c": A("c", ic=True, iv=False),  # candidate wrong, I_v right, z right (none)
        "d": None,  # abstained: wrong on every field
    }
    orders = {"b": [(1, 0), (2, 0), (3, 0)]}
    r = judge_report(LABELS, got, orders)
    assert r["pooled_accuracy"] == pytest.approx(7 / 12)  # a:3, b:2, c:2, d:0
    assert r["strict_accuracy"] == pytest.approx(1 / 4)
    assert r["per_field"] == {"candidate_formed": 0.5, "verification_triggered": 0.75, "z": 0.5}
    assert r["labelled_candidates"] == 3 and r["boundary_exact"] == pytest.approx(1 / 3)
    assert r["boundary_within_1"] == pytest.approx(2 / 3)
    assert r["z_confusion"]["error"]["no-error"] == 1 and r["z_confusion"]["none"]["abstained"] == 1
    assert r["abstained"] == 1


def test_calibrate_names_the_most_accurate_judge_as_arbiter() -> None:
    perfect = dict(LABELS)
    sloppy = {k: A(k, ic=False) for k in LABELS}
    doc = calibrate(LABELS, {"sloppy": sloppy, "perfect": perfect, "same": dict(LABELS)})
    assert doc["arbiter"] == "perfect"  # tie with "same": the first listed wins
    assert doc["judges"]["perfect"]["pooled_accuracy"] == 1.0
    assert set(doc["krippendorff_alpha"]) == {"candidate_formed", "verification_triggered", "z"}


def test_bundled_calibration_set_is_consistent_and_the_heuristic_is_measured() -> None:
    labels, orders, trajs = read_labels(BUNDLED_LABELS)
    assert len(labels) == len(trajs) == len(orders) >= 30
    for cid, lab in labels.items():
        assert consistency_errors(lab, trajs[cid]) == [], cid
    doc = calibrate_files(BUNDLED_LABELS, [], heuristic_judges=True, legacy=True)
    rep = doc["judges"]
    # Measured on this set (see data/README.md); a regression below these fails the test.
    assert rep["rules-changes"]["pooled_accuracy"] >= 0.98
    assert rep["rules-changes"]["boundary_exact"] == 1.0
    assert rep["rules-commands"]["pooled_accuracy"] >= 0.95
    assert rep["heuristic-artifact"]["pooled_accuracy"] >= 0.95  # the earlier rules, still scored
    # the narration seat reads the agent's words: scripted policies say little, so it trails
    assert rep["rules-narration"]["pooled_accuracy"] < rep["rules-commands"]["pooled_accuracy"]
    assert doc["arbiter"] == "rules-changes"  # the best on these labels (on real ones: commands)
    assert doc["seats"]["rules-commands"] == "rule"
    panel = doc["panels"]["default panel (rule seats voting)"]  # scored, never the arbiter
    assert panel["pooled_accuracy"] >= 0.98 and panel["boundary_exact"] == 1.0
    assert set(panel["agreement"]) >= {"three_way_boundary", "three_way_semantics", "vote_rate"}


def _row(task, z, y_c, y_f, I_c=True, I_v=True) -> dict:
    return {"model": "m", "run": 1, "task": task, "I_c": I_c, "I_v": I_v, "z": z, "y_c": y_c,
            "y_f": y_f}  # fmt: skip


def test_cli_metrics_json(tmp_path) -> None:
    rows = [
        _row("t1", "error", 0, 1),
        _row("t2", "no-error", 1, 1),
        _row("t3", "no-error", None, 0),
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([AGENTPOST, "scvd", "metrics", str(path), "--json", "--bootstrap", "100"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    doc = json.loads(out.stdout)
    # the issue's contract: {"per_model": {MODEL: {METRIC: value|null}}, "macro": {...}, "counts"}
    names = {"VTR", "VOR", "EDR", "ESP", "CPR", "CAR", "VPR", "VPC", "RSR", "ICA", "final_acc",
             "W2R", "R2W", "net_gain"}  # fmt: skip
    assert set(doc["per_model"]) == {"m"} and names <= set(doc["per_model"]["m"]) <= set(
        doc["macro"]
    )
    assert doc["per_model"]["m"]["EDR"] == 1.0 and doc["per_model"]["m"]["CAR"] == 1.0
    assert doc["macro"]["ESP"] == 1.0 and doc["macro"]["RSR"] == 1.0
    assert doc["counts"]["all"]["replay_missing"] == 1 and doc["counts"]["all"]["EDR_den"] == 1
    assert doc["producer"]["name"] == "agentpost.scvd.metrics.compute" and doc["format"]
    assert set(doc["cis"]["macro"]) >= names and "coverage" in doc
    text = subprocess.run([AGENTPOST, "scvd", "metrics", str(path), "--bootstrap", "50"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert text.splitlines()[0].startswith("model\tICA") and "macro 95% CI" in text


@pytest.mark.parametrize(
    "lines, where, says",
    [
        (['{"model": "m", "run": 1, "task": "t", "I_c": true, "I_v": true, "z": "maybe", "y_c": 0}'],
         "line 1", "z must be"),
        (["", json.dumps({"run": 1, "task": "t"})], "line 2", "missing model"),
        ([json.dumps(_row("t", "error", 0, 1, I_c=False))], "line 1", "I_c false needs"),
        ([json.dumps(_row("t", None, 0, 1))], "line 1", "I_v true needs z"),
        ([json.dumps(_row("t", None, 1, 1, I_v=False))], "line 1", "y_c is replayed only"),
        (["[1, 2]"], "line 1", "expected a JSON object"),
        ([""], "", "no metric records"),
    ],
)  # fmt: skip
def test_cli_metrics_bad_input_is_one_line_naming_file_and_line(tmp_path, lines, where, says):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([AGENTPOST, "scvd", "metrics", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and f"{path}: {where}" in out.stderr and says in out.stderr


def test_cli_calibrate_reads_judge_files(tmp_path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(a.to_json()) + "\n" for a in LABELS.values()))
    judge = tmp_path / "judge-x.jsonl"
    judge.write_text("".join(json.dumps({**a.to_json(), "verification_outcome": a.verification_outcome})
                             + "\n" for a in LABELS.values()))  # fmt: skip
    out = subprocess.run([AGENTPOST, "scvd", "calibrate", str(labels), str(judge), "--json"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    doc = json.loads(out.stdout)
    assert doc["arbiter"] == "judge-x" and doc["judges"]["judge-x"]["strict_accuracy"] == 1.0


def test_cli_calibrate_bundled_heuristic_reports_every_number() -> None:
    # The heuristic's accuracy is reported by a command, on the calibration set shipped with it.
    out = subprocess.run([AGENTPOST, "scvd", "calibrate", "bundled", "--heuristic"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "(32 trajectories, 96 pooled decisions)" in out
    header, *rows = out.split("\n\n")[2].splitlines()
    assert header.split("\t")[1:] == ["pooled", "strict", "I_c", "I_v", "z", "boundary exact",
                                      "±1 call", "abstained"]  # fmt: skip
    names = [f"rules-{v}" for v in ("changes", "commands", "narration")]
    assert [r.split("\t")[0] for r in rows] == [*names, "default panel (rule seats voting)"]
    assert out.count("z confusion for rules-") == 3 and "label\\judge\terror" in out
    assert "seats: rules-changes (rule), rules-commands (rule), rules-narration (rule)" in out
    assert "agreement in default panel (rule seats voting): three-way on the boundary" in out
    assert "Krippendorff's alpha (nominal): {'candidate_formed'" in out
    assert out.endswith("arbiter (highest pooled accuracy): rules-changes\n")


def test_cli_calibrate_bad_embedded_trajectory_names_the_line(tmp_path) -> None:
    labels = tmp_path / "labels.jsonl"
    rows = [a.to_json() for a in LABELS.values()]
    rows[1]["trajectory"] = {"id": "x"}
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([AGENTPOST, "scvd", "calibrate", str(labels), "--heuristic"],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{labels}: line 2: trajectory: $" in out.stderr
