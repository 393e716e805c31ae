"""The heuristic annotator on real public trajectories (../shared/data), against labels written
by hand under spec b.2 after reading each trajectory. Measured, not assumed: the numbers are
reported in src/agentpost/verification/data/README.md; the test guards against regressions."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentpost.trajectory.importing import import_file
from agentpost.verification.calibrate_io import default_panel
from agentpost.verification.calibration import calibrate, judge_report
from agentpost.verification.examples import label
from agentpost.verification.heuristic import VARIANTS, annotate
from agentpost.verification.protocol import consistency_errors
from agentpost.verification.records import Annotation

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "trajectories"

# relative path → (step, index, boundary, triggered, outcome); None step = no candidate.
LABELS = {
    # creates hello.txt with an edit tool, declares completion without looking
    "atif/harbor-golden/openhands/hello-world.trajectory.json": (5, 0, "clean", False, None),
    # writes hello.txt, marks the task complete twice, never checks
    "atif/harbor-golden/terminus_2/hello-world-invalid-json.trajectory.json": (3, 0, "clean", False, None),
    # only echoes the text to the terminal and sleeps: nothing is created
    "atif/harbor-golden/terminus_2/hello-world-timeout.trajectory.json": (None, None, None, False, None),
    # echo > hello.txt, then cat hello.txt shows the content
    "mini-swe-agent/harbor-rfc-0001/mini-swe-agent-trajectory.json": (0, 0, "clean", True, "supports_pass"),
    # one call writes the file and prints its size and content
    "openhands/harbor-rfc-0001/openhands_trajectory.json": (0, 0, "includes_first_verification", True, "supports_pass"),
    # creates the game file and finishes (the task says not to run it)
    "openhands/v0/tests/runtime/trajs/basic.json": (0, 0, "clean", False, None),
    # mv, then lists the directory: the renamed file is there
    "openhands/v0/tests/runtime/trajs/wrong_initial_state.json": (1, 0, "clean", True, "supports_pass"),
    # adds the missing colon, runs the script: prints 8.2
    "swe-agent/tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj": (2, 0, "clean", True, "supports_pass"),
    "swe-agent/trajectories/demonstrations/function_calling_simple.traj": (2, 0, "clean", True, "supports_pass"),
    # repro script first (a probe, not the candidate), then the sed fix; inspects and reruns: pass
    "mini-swe-agent/swebench-bash-only_gemini-3-pro/trajs/django__django-16255/django__django-16255.traj.json": (4, 0, "clean", True, "supports_pass"),
    # same shape; the reruns look right to the agent (the final grade is 0: a VPR miss, not a label issue)
    "mini-swe-agent/swebench-bash-only_gemini-3-pro/trajs/django__django-10999/django__django-10999.traj.json": (4, 0, "clean", True, "supports_pass"),
}  # fmt: skip


@pytest.fixture(scope="module")
def cases():
    if not DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    out = {}
    for rel, lab in LABELS.items():
        (traj,) = import_file(DATA / rel)
        out[rel] = (traj, Annotation.from_json(label(rel, traj.task_id or "", *lab)))
    return out


def test_labels_are_consistent(cases) -> None:
    for rel, (traj, lab) in cases.items():
        assert consistency_errors(lab, traj) == [], rel


def test_heuristic_accuracy_on_real_trajectories(cases) -> None:
    labels = {rel: lab for rel, (_, lab) in cases.items()}
    judges = {v: {rel: annotate(t, rel, v) for rel, (t, _) in cases.items()} for v in VARIANTS}
    doc = calibrate(labels, judges)
    rep = doc["judges"]
    print(
        {
            v: (round(r["pooled_accuracy"], 3), round(r["strict_accuracy"], 3))
            for v, r in rep.items()
        }
    )
    # measured 31/33 (one miss: a directory listing after a rename)
    assert rep["artifact"]["pooled_accuracy"] >= 0.9
    assert rep["artifact"]["boundary_exact"] == 1.0
    # the default panel (variants voting, arbiter artifact), as data/README.md reports it
    heur = {f"heuristic-{v}": got for v, got in judges.items()}
    panel = judge_report(labels, default_panel(heur))
    assert panel["pooled_accuracy"] == pytest.approx(31 / 33)
