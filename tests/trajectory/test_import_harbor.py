"""Harbor job/trial folders and Terminal-Bench 1 run folders (synthetic layouts, labelled in
tests/data/synthetic/README.md). The native gemini-cli session of the Harbor trial is the real
file from harbor's RFC 0001: it lives in ../shared/data only, and the tests that need it put it
into a copy of the trial (``gem_job``)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_paths

SYN = Path(__file__).resolve().parents[1] / "data" / "synthetic"
GEM_JOB = SYN / "harbor-gemini" / "2025-11-20__10-00-00"
GEM_TRIAL = GEM_JOB / "hello-world__gEm1n1x"
T2_TRIAL = SYN / "harbor-terminus" / "2025-11-21__09-00-00" / "hello-world__t2EpIsd"
TB1_RUN = SYN / "tb1" / "runs" / "2025-07-15__12-00-00"
BIN = Path(sys.executable).with_name("agentpost")
GEM_NATIVE = Path("gemini-cli") / "harbor-rfc-0001" / "gemini-cli-trajectory.json"


@pytest.fixture()
def gem_job(shared_data, tmp_path) -> Path:
    """A copy of the synthetic Harbor job with the real native session beside its ATIF copy."""
    job = tmp_path / GEM_JOB.name
    shutil.copytree(GEM_JOB, job)
    native = job / GEM_TRIAL.name / "agent" / "gemini-cli.trajectory.json"
    shutil.copy(shared_data / "trajectories" / GEM_NATIVE, native)
    return job


def test_trial_imports_once_from_its_atif_copy(gem_job):
    """Harbor keeps the native gemini-cli session and its ATIF conversion side by side; the
    trial is one trajectory, not two (turns and tokens would double)."""
    r = import_paths([gem_job])
    assert not r.errors and len(r.trajectories) == 1
    (t,) = r.trajectories
    assert t.source.format == "atif" and t.totals.turns == 1
    reasons = {Path(p).name: why for p, why in r.skipped}
    assert "imported from agent/trajectory.json" in reasons["gemini-cli.trajectory.json"]
    assert set(reasons) == {"gemini-cli.trajectory.json", "config.json", "result.json", "ctrf.json"}


def test_trial_joined_with_result_and_ctrf():
    (t,) = import_paths([GEM_TRIAL]).trajectories
    assert (t.task_id, t.run_id, t.model) == (
        "hello-world",
        "2025-11-20__10-00-00",
        "gemini-2.0-flash",
    )
    assert (t.outcome.resolved, t.outcome.reward, t.outcome.evaluator) == (
        True,
        1.0,
        "harbor-verifier",
    )
    assert t.outcome.tests == {
        "test_state.py::test_hello_file_exists": "passed",
        "test_state.py::test_hello_file_contents": "passed",
    }
    assert t.metadata["harbor_agent_result"]["n_input_tokens"] == 5915
    # ATIF keeps Gemini's thought tokens in metrics.extra (0 in this session), no longer dropped
    assert t.totals.reasoning_tokens == 0


def test_without_its_atif_copy_the_native_log_imports(gem_job):
    trial = gem_job / GEM_TRIAL.name
    (trial / "agent" / "trajectory.json").unlink()
    (t,) = import_paths([trial]).trajectories
    assert t.source.format == "gemini-cli" and t.task_id == "hello-world" and t.outcome.resolved


def test_a_forged_result_inside_the_agent_folder_is_ignored(tmp_path):
    """The agent writes under agent/: a result.json it plants there claiming reward 1 must not
    become the outcome of its own log. The trial is the outermost agent/ with a result.json."""
    trial = tmp_path / "job" / "t1"
    shutil.copytree(T2_TRIAL, trial)
    fake = trial / "agent" / "x"
    (fake / "agent").mkdir(parents=True)
    (fake / "result.json").write_text(
        '{"task_name": "other", "verifier_result": {"rewards": {"reward": 1.0}}}'
    )
    shutil.move(str(trial / "agent" / "episode-0"), fake / "agent" / "episode-0")
    r = import_paths([trial])
    outcomes = {t.id: (t.task_id, t.outcome.reward) for t in r.trajectories}
    assert ("other", 1.0) not in outcomes.values()
    assert all(v == ("hello-world", 0.0) for v in outcomes.values())


def test_terminus_episode_logs_of_a_harbor_trial():
    (t,) = import_paths([T2_TRIAL]).trajectories
    assert (t.source.format, t.agent, t.model) == (
        "terminus-episodes",
        "terminus-2",
        "openai/gpt-5-mini",
    )
    assert t.instruction == 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert [tt.step for tt in t.turns] == [0, 1, 2]
    calls = [(c.name, c.kind, c.id) for tt in t.turns for c in tt.tool_calls]
    assert calls == [
        ("bash_command", "keystrokes", "call_0_1"),
        ("bash_command", "keystrokes", "call_0_2"),
        ("mark_task_complete", "control", "call_1_task_complete"),
        ("mark_task_complete", "control", "call_2_task_complete"),
    ]
    assert t.turns[0].tool_calls[0].command == "echo 'Hello, world!' > hello.txt\n"
    # the observation of episode N is the prompt of episode N+1; the last has none
    assert "Hello, world!" in t.turns[0].observations[0].text and t.turns[2].observations == []
    assert (t.totals.input_tokens, t.totals.cached_tokens, t.totals.output_tokens) == (
        6230,
        3840,
        243,
    )
    assert (t.task_id, t.outcome.resolved, t.outcome.reward) == ("hello-world", False, 0.0)
    assert t.outcome.tests["test_state.py::test_hello_file_contents"] == "failed"


def test_terminal_bench_1_run_folder():
    r = import_paths([TB1_RUN])
    assert not r.errors and len(r.trajectories) == 1
    (t,) = r.trajectories
    assert (t.agent, t.task_id, t.run_id) == ("terminus", "hello-world", "2025-07-15__12-00-00")
    assert (t.outcome.resolved, t.outcome.evaluator) == (True, "terminal-bench")
    assert t.outcome.tests == {
        "test_hello_file_exists": "passed",
        "test_hello_file_contents": "passed",
    }
    assert [c.name for tt in t.turns for c in tt.tool_calls] == [
        "bash_command",
        "mark_task_complete",
    ]
    assert t.turns[0].tool_calls[0].arguments["timeout_sec"] == 5
    assert (t.totals.input_tokens, t.totals.output_tokens) == (3110, 125)
    # run results, both trial results (one an installed agent with no logs), run metadata
    assert len(r.skipped) == 4


def test_job_folders_import_with_exit_0(tmp_path):
    """Issue 17: a Harbor jobs folder was four errors and exit 1."""
    for i, folder in enumerate((GEM_JOB, TB1_RUN, T2_TRIAL.parent)):
        dest = tmp_path / f"{i}.jsonl"
        out = subprocess.run(
            [str(BIN), "import", str(folder), "-o", str(dest)], capture_output=True, text=True
        )
        assert out.returncode == 0 and "failed 0" in out.stdout, out.stdout + out.stderr


def test_episode_logs_beside_an_atif_trajectory_are_not_counted_twice(shared_data, tmp_path):
    trial = tmp_path / "job" / "t1"
    shutil.copytree(T2_TRIAL, trial)
    golden = TRAJECTORIES / "atif"
    atif = golden / "harbor-golden" / "terminus_2" / "hello-world-invalid-json.trajectory.json"
    shutil.copy(atif, trial / "agent" / "trajectory.json")
    r = import_paths([trial])
    assert [t.source.format for t in r.trajectories] == ["atif"]
    assert any("Terminus episode logs" in why for _, why in r.skipped)
    assert r.trajectories[0].task_id == "hello-world"  # joined from the trial's result.json
