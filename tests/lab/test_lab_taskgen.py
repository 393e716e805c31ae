"""The lab's procedural task family: disjoint seeded splits, and every instance is a real task
(oracle 1, no-op 0, wrong 0, its check passes the oracle and fails the wrong candidate) in real
sandboxes."""

from __future__ import annotations

import json

import pytest

from agentpost.lab.taskgen import FAMILIES, family_split
from agentpost.lab.tasks import write_family
from agentpost.sandbox.registry import get_backend
from agentpost.tasks.check import check_task
from agentpost.tasks.loader import load_suite

BACKEND = get_backend("bwrap")


def test_splits_are_seeded_disjoint_and_cover_every_family():
    a, b = family_split(7, 12, 6), family_split(7, 12, 6)
    assert [t.files for t in a["train"]] == [t.files for t in b["train"]]
    assert family_split(8, 12, 6)["train"][0].files != a["train"][0].files
    train = {(t.key, t.files["tests/expected.txt"]) for t in a["train"]}
    held = {(t.key, t.files["tests/expected.txt"]) for t in a["heldout"]}
    assert len(train) == 12 and len(held) == 6 and not train & held
    assert {t.family for t in a["heldout"]} == set(FAMILIES)


def test_parameters_come_from_the_instruction():
    for t in family_split(3, 9, 0)["train"] + family_split(3, 9, 0, one_slot=True)["train"]:
        text = t.files["instruction.md"]
        assert all(v in text for v in t.params.values()), (t.id, t.params)
        assert t.params["file"] in t.files["solution/solve.sh"]


@pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
def test_every_instance_passes_tasks_check(tmp_path):
    write_family(tmp_path, seed=11, n_train=6, n_heldout=3)
    tasks = load_suite(tmp_path / "train") + load_suite(tmp_path / "heldout")
    assert len(tasks) == 9
    for task in tasks:
        row = check_task(task, BACKEND)
        assert (row["oracle_reward"], row["nop_reward"], row["wrong_reward"]) == (1.0, 0.0, 0.0), (
            row
        )
        assert row["check_ok"], row


def test_hidden_tests_start_nothing_that_outlives_them(tmp_path):
    # a process substitution <(...) is not waited for by bash: the verifier then finds a process
    # the tests started still running and the oracle's reward is 0 (seen in a full run on main)
    write_family(tmp_path, seed=3, n_train=len(FAMILIES), n_heldout=1)
    scripts = sorted(tmp_path.glob("*/*/tests/test.sh"))
    assert scripts
    for path in scripts:
        assert "<(" not in path.read_text(), path


def test_lab_tasks_command_writes_both_splits(tmp_path):
    from typer.testing import CliRunner

    from agentpost.cli import _register, app

    _register()
    r = CliRunner().invoke(app, ["lab", "tasks", "-o", str(tmp_path / "fam"), "--train", "4",
                                 "--heldout", "2", "--seed", "5"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert len(load_suite(tmp_path / "fam" / "train")) == 4
    assert len(load_suite(tmp_path / "fam" / "heldout")) == 2
    doc = json.loads((tmp_path / "fam" / "family.json").read_text())
    assert doc["producer"]["args"]["one_slot"] is True  # what the experiments use
    assert {t["params"]["out"] for t in doc["splits"]["train"]} <= {"count.txt", "answer.txt",
                                                                   "out.txt"}  # fmt: skip
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    r = CliRunner().invoke(app, ["lab", "tasks", "-o", str(tmp_path / "other")])
    assert r.exit_code != 0


@pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
def test_an_evaluator_without_a_verdict_is_an_infra_error_not_a_failed_episode(tmp_path):
    from agentpost.errors import InfraError
    from agentpost.lab.env import LabEnv

    write_family(tmp_path, seed=2, n_train=1, n_heldout=0)
    (task,) = load_suite(tmp_path / "train")
    (task.path / "tests" / "test.sh").write_text("#!/usr/bin/env bash\nexit 0\n")  # no reward
    with LabEnv(task, BACKEND) as env:
        env.step(task.solution_script.read_text().splitlines()[-1])
        with pytest.raises(InfraError, match="evaluator"):
            env.resolved()
