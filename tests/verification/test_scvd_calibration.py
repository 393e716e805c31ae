"""Calibration statistics (spec b.4), Krippendorff's α, the bundled calibration set and the
heuristic's measured accuracy on it, and the `agentpost scvd` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentpost.verification.calibrate_io import BUNDLED_LABELS, calibrate_files, read_labels
from agentpost.verification.calibration import calibrate, judge_report, krippendorff_alpha
from agentpost.verification.protocol import consistency_errors
from agentpost.verification.records import Annotation

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
    doc = calibrate_files(BUNDLED_LABELS, [], heuristic_judges=True)
    rep = doc["judges"]
    # Measured on this set (see data/README.md); a regression below these fails the test.
    assert rep["heuristic-artifact"]["pooled_accuracy"] >= 0.95
    assert rep["heuristic-artifact"]["boundary_exact"] >= 0.95
    assert rep["heuristic-run"]["pooled_accuracy"] < rep["heuristic-artifact"]["pooled_accuracy"]
    assert doc["arbiter"] == "heuristic-artifact"  # the default config's arbiter


def test_cli_metrics_json(tmp_path) -> None:
    rows = [
        {
            "model": "m",
            "run": 1,
            "task": "t1",
            "I_c": True,
            "I_v": True,
            "z": "error",
            "y_c": 0,
            "y_f": 1,
        },
        {
            "model": "m",
            "run": 1,
            "task": "t2",
            "I_c": True,
            "I_v": True,
            "z": "no-error",
            "y_c": 1,
            "y_f": 1,
        },
        {
            "model": "m",
            "run": 1,
            "task": "t3",
            "I_c": True,
            "I_v": True,
            "z": "no-error",
            "y_c": None,
            "y_f": 0,
        },
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([AGENTPOST, "scvd", "metrics", str(path), "--json", "--n-boot", "100"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    doc = json.loads(out.stdout)
    assert doc["per_model"]["m"]["EDR"] == 1.0 and doc["per_model"]["m"]["CAR"] == 1.0
    assert doc["macro"]["ESP"] == 1.0 and doc["macro"]["RSR"] == 1.0
    assert doc["counts"]["all"]["replay_missing"] == 1
    assert (
        doc["producer"]["name"] == "agentpost scvd metrics" and "cis" in doc and "coverage" in doc
    )


def test_cli_bad_input_is_one_line_naming_file_and_line(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"model": "m", "run": 1, "task": "t", "I_c": true, "I_v": true, "z": "maybe", "y_c": 0, "y_f": 1}\n'
    )
    out = subprocess.run([AGENTPOST, "scvd", "metrics", str(path)], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"{path}: record 1" in out.stderr


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
