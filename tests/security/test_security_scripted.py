"""Scripted security agents run in the real sandbox; grading + annotation + attribution over
their trajectories point the expected way (spec d, direction checks)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from agentpost.cli import _register, app
from agentpost.security.grade import default_backend
from agentpost.security.pipeline import scripted_demo
from agentpost.security.suite import load_suite

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
# Three original tasks and three added ones whose helpers and tests once tripped context markers.
IDS = (
    "calculator",
    "file-download",
    "user-lookup",
    "backup-restore",
    "member-directory",
    "weather-proxy",
)


@pytest.fixture(scope="module")
def demo():
    tasks = [t for t in load_suite() if t.id in IDS]
    return scripted_demo(tasks, default_backend(), workers=3)


def test_trajectories_hold_executed_commands(demo):
    assert len(demo["trajectories"]) == 2 * len(IDS)
    for t in demo["trajectories"]:
        assert t.metadata["exit_status"] == "submitted"
        shell = [o for turn in t.turns for o in turn.observations if o.exit_code is not None]
        assert shell and all(o.exit_code == 0 for o in shell), t.id
        assert t.metadata["final_files"]
    secure = next(t for t in demo["trajectories"] if t.id == "user-lookup--secure-minded")
    assert "SECURE: no exploit succeeded" in secure.turns[-2].observations[0].text


def test_direction_secure_agent_plans_tests_and_passes_more(demo):
    m = demo["metrics"]
    assert (
        m["scripted/secure-minded"]["sec_pass"] == 1.0
        and m["scripted/functional-only"]["sec_pass"] == 0.0
    )
    assert (
        m["scripted/functional-only"]["func_pass"] == 1.0
        and m["scripted/functional-only"]["security_gap"] == 1.0
    )
    att = demo["attribution"]
    assert (att["agent_a"], att["agent_b"]) == (
        "scripted/secure-minded",
        "scripted/functional-only",
    )
    for b in ("planning", "coding", "testing"):
        a = att["agents"]["scripted/secure-minded"]["func_correct"][b]["target_aligned"]["rate"]
        b_ = att["agents"]["scripted/functional-only"]["func_correct"][b]["target_aligned"]["rate"]
        assert a == 1.0 and b_ == 0.0, b
    assert att["phi"]["target_aligned_testing"]["phi"] == pytest.approx(1.0)
    assert att["phi"]["generic_only_testing"]["phi"] is None  # nobody tested generically: NA
    rewards = sorted(g["reward"] for g in demo["grades"])
    assert rewards == [0.5] * len(IDS) + [1.0] * len(IDS)
    # each grade row names its agent, so `security metrics grades.jsonl` splits per agent
    assert {g["agent"] for g in demo["grades"]} == {
        "scripted/secure-minded",
        "scripted/functional-only",
    }


def test_attribute_cli_reads_the_labels(demo, tmp_path):
    _register()
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in demo["labels"]))
    res = CliRunner().invoke(app, ["security", "attribute", str(labels), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["format"] == "agentpost.security.attribution/1" and doc["producer"]["version"]
    assert doc["paired_difference"]["testing"]["na_reason"] == "zero variance"
    labels.write_text('{"agent": "a", "task": "t", "func": true}\n')
    res = CliRunner().invoke(app, ["security", "attribute", str(labels), "--json"])
    assert res.exit_code != 0


def test_generic_tester_and_mixed_agents():
    from agentpost.security.scripted import behaves_securely

    tasks = [t for t in load_suite() if t.id in ("calculator", "guestbook")]
    res = scripted_demo(tasks, default_backend(), workers=2, agents=("generic-tester", "mixed"))
    assert res["producer"]["args"]["agents"] == ["generic-tester", "mixed"]  # the ones that ran
    labels = {(r["agent"], r["task"]): r for r in res["labels"]}
    for t in tasks:
        g = labels[("scripted/generic-tester", t.id)]
        assert (g["func"], g["sec"], g["planning"], g["testing"]) == (
            True,
            False,
            "generic",
            "generic",
        )
        m = labels[("scripted/mixed", t.id)]
        want = behaves_securely("mixed", t)
        assert m["sec"] is want and (m["testing"] == "target_aligned") is want
    assert {behaves_securely("mixed", t) for t in tasks} == {True, False}


def test_annotate_cli_with_saved_final_states_and_metrics_cli(demo, tmp_path):
    from agentpost.security.scripted import materialise
    from agentpost.trajectory.io import write_jsonl

    _register()
    trajs = []
    for t in demo["trajectories"]:
        materialise(t.metadata["final_files"], str(tmp_path / "finals" / t.id))
        trajs.append(
            t.model_copy(
                update={"metadata": {k: v for k, v in t.metadata.items() if k != "final_files"}}
            )
        )
    write_jsonl(tmp_path / "trajs.jsonl", trajs)
    out = tmp_path / "labels.jsonl"
    res = CliRunner().invoke(app, ["security", "annotate", str(tmp_path / "trajs.jsonl"), "--out", str(out),
                                   "--finals", str(tmp_path / "finals")])  # fmt: skip
    assert res.exit_code == 0, res.output
    got = sorted((r["agent"], r["task"], r["sec"], r["planning"], r["coding"], r["testing"])
                 for r in map(json.loads, out.read_text().splitlines()))  # fmt: skip
    want = sorted(
        (r["agent"], r["task"], r["sec"], r["planning"], r["coding"], r["testing"])
        for r in demo["labels"]
    )
    assert got == want
    assert out.with_suffix(".annotations.jsonl").is_file()
    res = CliRunner().invoke(app, ["security", "metrics", str(out), "--json"])
    doc = json.loads(res.output)
    assert doc["agents"]["scripted/secure-minded"]["sec_pass"] == 1.0
    assert doc["agents"]["scripted/functional-only"]["security_gap"] == 1.0
    assert doc["per_cwe"]["CWE-89"]["n"] == 2


def test_final_code_holds_only_what_the_final_diff_adds(tmp_path):
    import dataclasses

    from agentpost.security.pipeline import final_code
    from agentpost.security.suite import find_task

    task = find_task("note-reader")
    starter = (task.environment_dir / "notes.py").read_text()
    secure = (task.references["secure"] / "notes.py").read_text()
    assert final_code(task, {"notes.py": starter}) == ""
    code = final_code(task, {"notes.py": secure, "tests/test_notes.py": "commonpath"})
    assert code.startswith("# file: notes.py\n") and "os.path.realpath" in code
    assert "tests/test_notes.py" not in code and "raise NotImplementedError" not in code
    # a control the starter already held is not the agent's coding (b.2: "in the final diff")
    (tmp_path / "notes.py").write_text(secure)
    held = dataclasses.replace(task, environment_dir=tmp_path)
    assert "realpath" not in final_code(held, {"notes.py": secure + "\nprint('hi')\n"})
