"""Real task directories written by others (../shared/data/tasks, Apache-2.0): Harbor and
Terminal-Bench features load as their authors wrote them, and on the docker backend every one
gives oracle 1 and no-op 0 with no network at grading time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from shared_data import TASKS, needed
from typer.testing import CliRunner

from agentpost.cli import _register, app
from agentpost.errors import InputError
from agentpost.tasks.loader import load_suite, load_task

pytestmark = needed
HARBOR = TASKS / "harbor-examples"
TB1 = TASKS / "tb1-adapters"
SHAPES = Path(__file__).resolve().parent / "fixtures" / "harbor-shapes"


def test_harbor_environment_users_and_steps_load():
    workdir = load_task(HARBOR / "hello-workdir")
    assert workdir.workdir == "/custom-workdir" and workdir.cpus == 1.0
    assert workdir.memory_mb == 2048 and workdir.build_timeout_s == 600.0
    assert workdir.evaluator_network is False  # allow_internet is a permission, not a need
    user = load_task(HARBOR / "hello-user")
    assert (user.agent_user, user.verifier_user) == ("agent", None)
    multi = load_task(HARBOR / "hello-multi-step-simple")
    assert [s.name for s in multi.steps] == ["create-file", "append-content"]
    assert multi.steps[0].agent_timeout_s == 30.0 and multi.tests_dir is None
    assert "Append" in multi.instruction and multi.dockerfile.name == "Dockerfile"


def test_tasks_as_their_authors_wrote_them_get_harbors_writable_root(tmp_path):
    from agentpost.tasks.loader import bundled_suite_path

    assert load_task(HARBOR / "hello-world").writable_root  # no [agentpost] table
    own = load_task(bundled_suite_path("terminal") / "c-primes")
    assert not own.writable_root  # agentpost's own tasks keep the read-only root
    shutil.copytree(HARBOR / "hello-world", tmp_path / "t")
    toml = tmp_path / "t" / "task.toml"
    toml.write_text(toml.read_text() + "\n[agentpost]\nwritable_root = true\n")
    assert load_task(tmp_path / "t").writable_root
    toml.write_text(toml.read_text().replace("writable_root = true", 'writable_root = "yes"'))
    with pytest.raises(InputError, match="writable_root"):
        load_task(tmp_path / "t")
    memory = load_task(SHAPES / "py313-verifier")  # memory = "2G", storage = "10G"
    assert (memory.memory_mb, memory.storage_mb, memory.workdir_given) == (2048, 10240, False)
    for bad, why in (('memory = "2X"', "size like"), ('memory = "1G"', "disagrees")):
        shutil.copytree(HARBOR / "hello-world", tmp_path / bad[10:12], dirs_exist_ok=True)
        toml = tmp_path / bad[10:12] / "task.toml"  # hello-world sets memory_mb = 2048
        toml.write_text(toml.read_text().replace("memory_mb = 2048", f"memory_mb = 2048\n{bad}"))
        with pytest.raises(InputError, match=why):
            load_task(tmp_path / bad[10:12])


def test_tb1_tasks_keep_their_dockerfile_runner_and_parser():
    aider = load_task(TB1 / "aider_polyglot-polyglot_python_affine-cipher")
    assert aider.dockerfile == aider.path / "Dockerfile" and aider.environment_dir is None
    assert aider.run_tests_script.name == "run-tests.sh"
    assert aider.metadata["parser_name"] == "pytest" and aider.verifier_timeout_s == 1800.0


def test_a_task_that_cannot_load_is_skipped_and_reported(tmp_path):
    for name in ("hello-world", "hello-user"):
        shutil.copytree(HARBOR / name, tmp_path / name)
    (tmp_path / "hello-user" / "task.toml").write_text("[agent]\ntimeout_sec = -1\n")
    errors: list[InputError] = []
    tasks = load_suite(tmp_path, errors)
    assert [t.id for t in tasks] == ["hello-world"]
    assert len(errors) == 1 and "timeout_sec" in str(errors[0]) and "hello-user" in str(errors[0])
    with pytest.warns(UserWarning, match="skipped task"):
        load_suite(tmp_path)
    _register()
    out = CliRunner().invoke(app, ["tasks", "list", "--suite", str(tmp_path), "--json"])
    assert out.exit_code == 0 and "timeout_sec" in json.loads(out.stdout)["skipped"][0]


def test_plain_tasks_check_prints_every_failure_reason(tmp_path, backend):
    shutil.copytree(HARBOR / "hello-world", tmp_path / "hello-world")
    (tmp_path / "hello-world" / "tests" / "test.sh").write_text("echo nothing written\n")
    _register()
    out = CliRunner().invoke(
        app, ["tasks", "check", "--suite", str(tmp_path), "--backend", "bwrap"]
    )
    assert out.exit_code == 1
    assert "oracle: no reward file" in out.stdout and "nop: no reward file" in out.stdout
    wrong = tmp_path / "hello-workdir"
    shutil.copytree(HARBOR / "hello-workdir", wrong)
    (wrong / "solution" / "solve.sh").write_text("echo /elsewhere > workdir.txt; echo wrote it\n")
    out = CliRunner().invoke(app, ["tasks", "check", "--suite", str(wrong), "--backend", "bwrap"])
    assert out.exit_code == 1 and "oracle: reward 0.0 (expected 1.0); verifier:" in out.stdout


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("suite", [HARBOR, TB1], ids=["harbor", "tb1"])
def test_every_real_task_gives_oracle_1_and_nop_0_on_docker(docker, suite):
    from agentpost.tasks.check import check_suite

    result = check_suite(load_suite(suite), docker, workers=2)
    rows = {
        r["id"]: (r["oracle_reward"], r["nop_reward"], r.get("errors")) for r in result["tasks"]
    }
    assert all(v[:2] == (1.0, 0.0) for v in rows.values()), rows
    assert result["ok"]


ATTACK = r"""#!/bin/bash
# a do-nothing agent that tries to grade itself resolved
mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt          # a stale reward
(while :; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done) &  # outlives its turn
site=$(python3 -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site" && printf 'import os\nos._exit(0)\n' > "$site/usercustomize.py"  # user site
echo 'def test_x(): pass' > /tests/test_fake.py                          # a fake test
true
"""
# Harbor gives the agent a writable root (its tests check what solutions install system-wide),
# so a startup hook in the system site-packages is the agent's to plant, and the tests' python3
# runs it (python3 -m pytest exits 0 at startup, TB1's runner prints PASSED from the exit
# status). It earns nothing: the run's report lacks every test the oracle's run (the control)
# reported, so the outcome is the agent's 0 (tasks/outcome.py).
SYSTEM_HOOK = r"""#!/bin/bash
for d in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))'); do
  mkdir -p "$d" && printf 'import os; os._exit(0)\n' > "$d/x.pth"
done
true
"""


def _attack(docker, tmp_path, script_text: str, paths) -> None:
    from agentpost.tasks.evaluate import evaluate, prepare, run_script, spec_for

    script = tmp_path / "attack" / "solve.sh"
    script.parent.mkdir(exist_ok=True)
    script.write_text(script_text)
    for path in paths:
        task = load_task(path)
        with docker.create(spec_for(task, backend=docker)) as sb:
            prepare(task, sb)
            run_script(task, sb, script)
            ev = evaluate(task, sb)
        assert (ev.status, ev.reward) == ("ok", 0.0), (task.id, ev.output[-800:])


@pytest.mark.timeout(600)
def test_a_do_nothing_agent_cannot_grade_itself_on_docker(docker, tmp_path):
    paths = (TB1 / "aider_polyglot-polyglot_python_affine-cipher", HARBOR / "hello-world")
    _attack(docker, tmp_path, ATTACK, paths)


@pytest.mark.timeout(600)
def test_a_system_site_startup_hook_cannot_grade_the_agent_on_docker(docker, tmp_path):
    _attack(docker, tmp_path, SYSTEM_HOOK, (TB1 / "aider_polyglot-polyglot_python_affine-cipher",))
