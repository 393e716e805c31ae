"""Hand labels of real trajectories (src/agentpost/scvd/data/real-labels.*, issue 29), read from
../shared/data, and the rule seats' accuracy on them. The labels were written by the rules in
real-labels.md; v1's held-out third and held-out v2, v3 and v4 were each scored once and then
moved into tune (batches v1-heldout .. v4-heldout); a held-out batch is frozen before it is
scored (v5, 30 labels, frozen and then scored once with seats/4, is the held-out split now; a
batch frozen and not scored yet is WITHHELD: no test runs a seat on it until its one score). Labels whose files are not in ../shared are skipped by name, with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRAJECTORIES

from agentpost.errors import InputError
from agentpost.scvd import calibrate_io, real_labels

ROOT = Path(__file__).resolve().parents[2]
SHARED = TRAJECTORIES
# further data roots (os.pathsep-separated) holding the listed public files not in ../shared yet,
# so the full measurement can be re-checked where they are at hand; CI sets none
EXTRA = [Path(p) for p in os.environ.get("AGENTPOST_REAL_LABEL_ROOTS", "").split(os.pathsep) if p]
AGENTPOST = str(Path(sys.executable).parent / "agentpost")
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
# Panel misses measured on the labels (data/README.md): a fixed case or a new miss changes this
# set, so the test fails until the README's numbers are updated with it.
KNOWN_MISSES = {
    "tune": {
        "matplotlib__matplotlib-26208.traj.json#0",  # an elif before its if: only words show it
        "astropy__astropy-7166.traj.json#0",  # precedence slip shown by an inspection: a reader's
        "django__django-11451.traj.json#0",  # a literal \n in the inserted line: a reader's
        "sympy__sympy-13031.traj.json#0",  # checks of sibling classes read as errors
        "multi_swe_bench/examples/output.jsonl#0",  # exit codes and words of an unbuilt tree
        "multi_swe_bench/examples/output.jsonl#2",  # the same, two seats of three
        # held-out v2, scored once, then declared seen and moved into tune (data/README.md)
        "django__django-13809.traj.json#0",
        "django__django-16100.traj.json#0",
        "django__django-16661.traj.json#0",
        "mwaskom__seaborn-3187.traj.json#0",
        "pydata__xarray-3993.traj.json#0",
        "pytest-dev__pytest-5840.traj.json#0",
        "pytest-dev__pytest-7236.traj.json#0",
        "scikit-learn__scikit-learn-14053.traj.json#0",
        "sphinx-doc__sphinx-10323.traj.json#0",
        "sphinx-doc__sphinx-8475.traj.json#0",
        # right with seats/3 only by chance: a probe of namedtuple read as the exposed error; with
        # seats/4 the probe says nothing and the real exposure ("NamedTuple Failed: ...", exit 0)
        # is read by the narration seat alone
        "django__django-12050.traj.json#0",
        # held-out v3, frozen at 5f7c24e and scored once (seats/2), then declared seen and moved
        # into tune: 6 of the 13 it missed then are still missed with seats/3 (data/README.md;
        # 14311, 13089, 13236, 6202, 12262, 24970 and 18763 are fixed as classes, as is v2's
        # sympy-19346: test_scvd_seat_gaps_v3.py)
        "django__django-10097.traj.json#0",
        "django__django-10554.traj.json#0",
        "django__django-13794.traj.json#0",
        "django__django-15278.traj.json#0",
        "sphinx-doc__sphinx-7440.traj.json#0",
        "sphinx-doc__sphinx-7985.traj.json#0",
        # held-out v4, frozen at d30284f and scored once with seats/3 (frozen at 42bbf8a), then
        # declared seen and moved into tune: 3 of the 13 it missed then are still missed with
        # seats/4 (data/README.md; the other 10 and v2's scikit-learn-14087 are fixed as classes:
        # test_scvd_seat_gaps_v4.py)
        "astropy__astropy-7336.traj.json#0",
        "matplotlib__matplotlib-23299.traj.json#0",
        "sphinx-doc__sphinx-8269.traj.json#0",
    },
    # held-out v5, frozen at 6bf728c and scored once with seats/4 (frozen at 2d37738, landed
    # 1e3ae9e before any v5 label or trajectory was read): the 10 trajectories the panel missed on
    # either tuple, recorded after the score (data/README.md classifies them)
    "heldout": {
        "django__django-12125.traj.json#0",
        "django__django-12754.traj.json#0",
        "django__django-13363.traj.json#0",
        "django__django-15569.traj.json#0",
        "matplotlib__matplotlib-22871.traj.json#0",
        "matplotlib__matplotlib-23314.traj.json#0",
        "matplotlib__matplotlib-26291.traj.json#0",
        "sphinx-doc__sphinx-8056.traj.json#0",
        "sympy__sympy-12489.traj.json#0",
        "sympy__sympy-22714.traj.json#0",
    },
}
ROWS = [json.loads(x) for x in real_labels.LABELS.read_text().splitlines()]
NOT_SHARED = "not in ../shared yet: the public source is listed in scvd/data/real-labels.md"
STORED = json.loads((real_labels.LABELS.parent / "real-labels-calibration.json").read_text())
# held-out batches frozen but not scored yet (no scored_once entry): no seat runs on them here
# before their one score (make_real_labels_calibration.py --score-once BATCH), whatever roots
WITHHELD = {r["batch"] for r in ROWS if r["split"] == "heldout"} - set(STORED["scored_once"])
NOT_SCORED = "frozen, not scored yet: its one score is make_real_labels_calibration.py --score-once"


def _missed(doc_panel_cases: dict, labels: dict) -> set[str]:
    out = set()
    for cid, lab in labels.items():
        got = doc_panel_cases[cid]
        if (
            got is None
            or got.boundary_tuple() != lab.boundary_tuple()
            or got.semantics_tuple() != lab.semantics_tuple()
        ):
            out.add(cid.rsplit("/", 1)[-1] if "/" in cid else cid)
    return out


@pytest.fixture(scope="module")
def real():
    if not SHARED.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    return real_labels.load(real_labels.LABELS, [SHARED, *EXTRA])


def test_every_label_file_present_matches_its_hash_and_anchor(real) -> None:
    assert len(ROWS) == len(real.labels) + len(real.missing)
    assert sum(r["batch"] == "v1-heldout" and r["split"] == "tune" for r in ROWS) == 23
    assert sum(r["batch"] == "v2-heldout" and r["split"] == "tune" for r in ROWS) == 28
    assert sum(r["batch"] == "v3-heldout" and r["split"] == "tune" for r in ROWS) == 30
    assert sum(r["batch"] == "v4-heldout" and r["split"] == "tune" for r in ROWS) == 30
    assert {r["batch"] for r in ROWS if r["split"] == "heldout"} <= {"v5-heldout"}
    assert sum(r["batch"] == "v5-heldout" and r["split"] == "heldout" for r in ROWS) == 30
    assert not [r["path"] for r in ROWS if r["in_shared"] and r["path"] in real.missing]
    assert all(
        r["evidence"].split(":")[0] in ("state-diff", "edit-tool", "command", "none") for r in ROWS
    )


@pytest.mark.parametrize(
    "row", ROWS, ids=[f"{r['path'].rsplit('/', 1)[-1]}#{r['index']}" for r in ROWS]
)
def test_each_labelled_file_is_scored_or_skipped_with_the_reason(real, row) -> None:
    """A label whose file is not in ../shared is skipped here, by name, and left out of every
    measurement below (the stored ``shared_only`` numbers are those CI re-measures)."""
    if row["path"] in real.missing:
        assert not row["in_shared"], f"{row['path']} should be in ../shared"
        pytest.skip(f"{row['path']}: {NOT_SHARED}")
    cid = f"{row['path']}#{row['index']}"
    assert real.labels[cid].candidate_step == row["candidate_step"]


@pytest.mark.parametrize("split", ["tune", "heldout"])
def test_the_panel_misses_exactly_the_known_cases(real, split) -> None:
    part = real.only(split)
    if any(part.batches.get(c) in WITHHELD for c in part.labels):
        pytest.skip(f"{', '.join(sorted(WITHHELD))}: {NOT_SCORED}")
    if not part.labels:
        if not any(r["split"] == split for r in ROWS):
            pytest.skip(f"no {split} label exists now (every batch scored so far is tune)")
        pytest.skip(f"no {split} label has its file in ../shared ({NOT_SHARED})")
    judges = calibrate_io.heuristic_annotations(part.trajs)
    missed = _missed(calibrate_io.default_panel(judges), part.labels)
    known = {m for m in KNOWN_MISSES[split] if any(c.endswith(m) for c in part.labels)}
    norm = {next((k for k in known if m.endswith(k) or k.endswith(m)), m) for m in missed}
    assert norm == known


def test_cli_calibrate_real_reports_each_seat_its_kind_and_the_panel_agreement(real) -> None:
    roots = [a for r in [SHARED, *EXTRA] for a in ("--data-root", str(r))]
    out = subprocess.run([AGENTPOST, "scvd", "calibrate", "real", "--heuristic", *roots,
                          "--split", "tune", "--json"], capture_output=True, text=True, env=ENV, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    assert doc["seats"] == {
        "rules-changes": "rule",
        "rules-commands": "rule",
        "rules-narration": "rule",
    }
    assert doc["labels"]["split"] == "tune" and doc["labels"]["n"] == len(real.only("tune").labels)
    panel = doc["panels"]["default panel (rule seats voting)"]
    assert 0 < panel["agreement"]["three_way_boundary"] <= 1 and panel["ci95"]["pooled_accuracy"]
    assert set(doc["krippendorff_alpha"]) == {"candidate_formed", "verification_triggered", "z"}


@pytest.mark.parametrize(
    "bad", ["../outside.json", "/etc/passwd", "a/../../outside.json", "a\\..\\b"]
)
def test_a_label_path_cannot_leave_its_data_root(tmp_path, bad) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.json").write_text("{}")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"path": bad, "split": "tune"}) + "\n")
    with pytest.raises(InputError, match="line 1"):
        real_labels.load(labels, [root])


def test_a_symlink_out_of_the_data_root_is_refused(tmp_path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.json").write_text("{}")
    (root / "t.json").symlink_to(tmp_path / "secret.json")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"path": "t.json", "split": "tune"}) + "\n")
    with pytest.raises(InputError, match="leaves its data root"):
        real_labels.load(labels, [root])


def test_a_changed_file_and_a_missing_file(tmp_path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    src = SHARED / "mini-swe-agent/harbor-rfc-0001/mini-swe-agent-trajectory.json"
    if not src.is_file():
        pytest.skip("../shared/data is not beside the checkout")
    (root / "d/t.json").write_bytes(src.read_bytes())
    row = {"path": "d/t.json", "split": "tune", "sha256": "0" * 64, "candidate_step": 0,
           "candidate_tool_call_index": 0, "boundary_type": "clean", "verification_triggered": True,
           "verification_outcome": "supports_pass", "anchor": "hello.txt"}  # fmt: skip
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(row) + "\n" + json.dumps({**row, "path": "d/absent.json"}) + "\n")
    with pytest.raises(InputError, match="content changed"):
        real_labels.load(labels, [root])
    row["sha256"] = None
    labels.write_text(json.dumps(row) + "\n" + json.dumps({**row, "path": "d/absent.json"}) + "\n")
    got = real_labels.load(labels, [root])
    assert len(got.labels) == 1 and got.missing == ["d/absent.json"]
    labels.write_text(json.dumps({**row, "anchor": "not in the call"}) + "\n")
    with pytest.raises(InputError, match="anchor"):
        real_labels.load(labels, [root])


def test_the_stored_numbers_are_the_live_ones(real) -> None:
    stored = STORED
    absent = sum(not r["in_shared"] for r in ROWS)
    which = {absent: "shared_only", 0: "full"}.get(len(real.missing))
    if which is None:
        pytest.skip(
            f"{len(real.missing)} labelled files missing: neither stored measurement applies"
        )
    for scope, want in stored[which].items():
        part = real.only(scope)
        if any(part.batches.get(c) in WITHHELD for c in part.labels):
            continue  # a withheld batch is in this scope with the roots at hand: not measured
        live = calibrate_io.calibrate_files(
            real_labels.LABELS, [], True, [SHARED, *EXTRA], scope, legacy=True
        )
        assert live["labels"]["n"] == want["n"], scope
        for group in ("judges", "panels"):
            for name, r in want[group].items():
                got = live[group][name]
                for key in (
                    "pooled_accuracy",
                    "strict_accuracy",
                    "boundary_exact",
                    "per_field",
                    "ci95",
                ):
                    assert json.dumps(got[key], sort_keys=True) == json.dumps(
                        r[key], sort_keys=True
                    ), (scope, name, key)


def test_a_frozen_unscored_heldout_batch_is_withheld_from_calibrate(tmp_path) -> None:
    """A held-out batch with no scored_once record is left out of every calibrate run (the CLI's
    too) until its one score names it; scored batches and tune labels are measured as before."""
    src = SHARED / "mini-swe-agent/harbor-rfc-0001/mini-swe-agent-trajectory.json"
    if not src.is_file():
        pytest.skip("../shared/data is not beside the checkout")
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d/t.json").write_bytes(src.read_bytes())
    (root / "d/u.json").write_bytes(src.read_bytes())
    row = {"path": "d/t.json", "split": "heldout", "batch": "v5-heldout", "candidate_step": 0,
           "candidate_tool_call_index": 0, "boundary_type": "clean", "verification_triggered": True,
           "verification_outcome": "supports_pass", "anchor": "hello.txt"}  # fmt: skip
    labels = tmp_path / "real-labels.jsonl"
    labels.write_text(json.dumps(row) + "\n")
    record = tmp_path / real_labels.CALIBRATION
    record.write_text(json.dumps({"scored_once": {"v4-heldout": {}}}))
    assert real_labels.withheld(labels) == {"v5-heldout"}
    assert real_labels.withheld(labels, once="v5-heldout") == set()
    with pytest.raises(InputError, match="withheld"):
        calibrate_io.calibrate_files(labels, [], True, [root], "heldout")
    cli = [AGENTPOST, "scvd", "calibrate", str(labels), "--heuristic", "--data-root", str(root)]
    out = subprocess.run(cli, capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert out.returncode != 0 and "withheld" in out.stderr and "pooled" not in out.stdout
    tune = {**row, "path": "d/u.json", "split": "tune", "batch": "v1-tune"}
    labels.write_text(json.dumps(row) + "\n" + json.dumps(tune) + "\n")
    doc = calibrate_io.calibrate_files(labels, [], True, [root], "all")
    assert doc["labels"]["n"] == 1 and doc["labels"]["withheld"] == {"v5-heldout": 1}
    once = calibrate_io.calibrate_files(labels, [], True, [root], "all", score_once="v5-heldout")
    assert once["labels"]["n"] == 2 and once["labels"]["withheld"] == {}
    record.write_text(json.dumps({"scored_once": {"v5-heldout": {}}}))
    assert calibrate_io.calibrate_files(labels, [], True, [root], "heldout")["labels"]["n"] == 1
    labels.with_name("elsewhere").mkdir()
    moved = labels.with_name("elsewhere") / "labels.jsonl"
    moved.write_text(labels.read_text())
    assert real_labels.withheld(moved) == set()  # no scored_once record beside it: nothing held


def test_the_bundled_labels_withhold_what_the_tests_withhold() -> None:
    assert real_labels.withheld() == WITHHELD
