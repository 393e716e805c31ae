"""SWE-bench offline, the whole path on docker with a synthetic instance built here (no SWE-bench
data): a toy repository with a history (and a planted future commit, tag and branch), an instance
file in SWE-bench's fields, the suite's own spec for it (the harness has none), then: image build
and gold gate (gold 1, no patch 0), ``tasks check``, a scripted trajectory replayed and graded by
the harness's parser, ``diagnose`` with y_c from that grade, and the clean-history attack.

Needs a docker daemon and the ``swebench`` extra (``bash scripts/setup.sh --swebench``); skips
saying which is missing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.replay.run import replay
from agentpost.sandbox.docker import DockerBackend
from agentpost.scvd.examples import build
from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
from agentpost.tasks.check import check_task
from agentpost.tasks.evaluate import spec_for
from agentpost.tasks.loader import load_suite

pytestmark = pytest.mark.timeout(900)
REPO = "agentpost-test/toycalc"
SECRET = "FUTURE-ANSWER-7f3a"
CALC = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
TESTS = "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
# setup.py only, as most SWE-bench repositories at their base commits (pylint 2.x, sympy, astropy)
SETUP_PY = (
    'from setuptools import setup\n\nsetup(name="toycalc", version="0.1", py_modules=["calc"])\n'
)


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


def _diff(repo: Path, files: dict[str, str]) -> str:
    """The diff that ``files`` would make to ``repo``'s checkout (left unchanged)."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    out = _git(repo, "diff") + "\n"
    _git(repo, "checkout", "--", ".")
    return out


@pytest.fixture(scope="module")
def backend() -> DockerBackend:
    pytest.importorskip("swebench", reason="the swebench extra: bash scripts/setup.sh --swebench")
    docker = DockerBackend()
    if not docker.available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    return docker


@pytest.fixture(scope="module")
def suite(tmp_path_factory, backend) -> dict:
    root = tmp_path_factory.mktemp("swe")
    repo = root / "toycalc"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "setup.py").write_text(SETUP_PY)
    (repo / ".gitignore").write_text("__pycache__/\n")  # (not the egg-info: the image's list)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    _git(repo, "tag", "v0.1")
    (repo / "README").write_text("toy calculator\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "second")
    base = _git(repo, "rev-parse", "HEAD")
    gold = _diff(repo, {"calc.py": CALC.replace("a - b", "a + b")})
    test_patch = _diff(repo, {"tests/test_calc.py": TESTS.replace("import neg", "import add, neg")
                              + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"})  # fmt: skip
    # the answer key an agent must never see: a later commit with the fix, a tag, a branch
    (repo / "calc.py").write_text(CALC.replace("a - b", "a + b") + f"# {SECRET}\n")
    _git(repo, "commit", "-qam", f"fix add {SECRET}")
    future = _git(repo, "rev-parse", "HEAD")
    _git(repo, "tag", "v0.2")
    _git(repo, "branch", "fix-branch")
    _git(repo, "reset", "-q", "--hard", base)
    _git(repo, "stash", "list")
    inst = {"instance_id": "toycalc-1", "repo": REPO, "base_commit": base, "patch": gold,
            "test_patch": test_patch, "version": "0.1", "environment_setup_commit": base,
            "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
            "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_neg"]),
            "problem_statement": "add() subtracts."}  # fmt: skip
    (root / "instances.jsonl").write_text(json.dumps(inst) + "\n")
    (root / "swebench.toml").write_text(f"""instances = "instances.jsonl"
[repos]
"{REPO}" = "toycalc"
[specs."{REPO}"."0.1"]
python = "3.11"
pip_packages = ["pytest==8.3.5"]
install = "python -m pip install -e ."
test_cmd = "pytest -rA"
parser = "pytest"
""")
    return {"root": root, "future": future, "base": base, "gold": gold}


@pytest.fixture(scope="module")
def task(suite, tmp_path_factory, backend):
    import os

    os.environ["AGENTPOST_SWEBENCH_CACHE"] = str(tmp_path_factory.mktemp("swecache"))
    [t] = load_suite(suite["root"])
    spec_for(t, backend=backend)  # builds the image and runs the gold gate
    return t


def test_gold_gate_and_tasks_check(task, backend) -> None:
    from agentpost.tasks.swebench import gate

    doc = gate.cached(spec_for(task, backend=backend).image)
    assert doc["ok"] and doc["gold"]["resolved"] is True and doc["empty"]["resolved"] is False
    rep = doc["gold"]["report"]
    assert rep["tests_status"]["FAIL_TO_PASS"]["success"] == ["tests/test_calc.py::test_add"]
    assert doc["empty"]["report"]["tests_status"]["FAIL_TO_PASS"]["failure"] == [
        "tests/test_calc.py::test_add"
    ]
    row = check_task(task, backend)
    assert (row["oracle_reward"], row["nop_reward"], row["ok"]) == (1.0, 0.0, True), row


def test_planted_future_commit_is_unreachable_in_the_sandbox(task, suite, backend) -> None:
    with backend.create(spec_for(task, backend=backend)) as sb:
        probe = sb.exec(
            f"git cat-file -e {suite['future']}; echo missing=$?; git tag; git branch -a; "
            "git log --all --format=%s; git stash list; git reflog --all | wc -l; git remote; "
            f"git cat-file --batch-all-objects --batch | grep -ac {SECRET}; "
            f"grep -rac {SECRET} .git | grep -v ':0$' | wc -l",
            cwd="/testbed",
        )
    out = probe.stdout
    assert "missing=1" in out or "missing=128" in out, out
    assert "v0.2" not in out and "fix-branch" not in out and SECRET not in out, out
    assert "v0.1" in out  # a tag of the ancestry is kept (setuptools-scm needs tags)
    lines = out.split()
    assert lines[-2:] == ["0", "0"], out  # no object and no file of .git holds the secret


def test_the_editable_install_puts_the_checkout_on_sys_path(task, backend) -> None:
    """As the harness's conda env (pip 24): a project with no pyproject.toml is installed with
    ``setup.py develop``, so /testbed is on ``sys.path`` from any directory (pylint 2.x finds its
    checkers through it). The newest pip's PEP 660 import hook leaves it off."""
    with backend.create(spec_for(task, backend=backend)) as sb:
        probe = sb.exec("python -c 'import sys, calc; print(\"/testbed\" in sys.path, calc.__file__)'",
                        cwd="/")  # fmt: skip
    assert probe.stdout.split() == ["True", "/testbed/calc.py"], (probe.stdout, probe.stderr)


def test_the_system_python_has_no_test_tools(task, backend) -> None:
    """As the harness's images: pytest is the environment's, not the system Python's (the build
    base installs one there for Harbor tasks); a recorded ``/usr/bin/python3 -m pytest`` failed."""
    with backend.create(spec_for(task, backend=backend)) as sb:
        system = sb.exec("/usr/bin/python3 -m pytest --version", cwd="/testbed")
        env = sb.exec("python -m pytest --version && ls -d /usr/local/bin", cwd="/testbed")
    assert system.exit_code == 1 and "No module named pytest" in system.stderr, system
    assert env.exit_code == 0 and "pytest 8.3.5" in env.stdout + env.stderr, env


def _trajectory(fix: bool):
    edit = "sed -i 's/a - b/a + b/' calc.py" if fix else "sed -i 's/a - b/a * b/' calc.py"
    result = "5" if fix else "6"
    return build(
        f"toy-{'fix' if fix else 'wrong'}",
        [
            [("cat calc.py", CALC, 0)],
            [(edit, "", 0)],
            [("python -c 'from calc import add; print(add(2, 3))'", result + "\n", 0)],
            [("git add -A && git diff --cached | head -3", "diff --git a/calc.py b/calc.py\n", 0)],
            [("SUBMIT", "", 0)],
        ],
        task="toycalc-1",
        resolved=fix,
    )


def test_scripted_trajectory_replays_and_grades_like_the_harness(task, backend) -> None:
    res = replay(_trajectory(True), task, backend=backend)
    assert res.status == "ok" and res.resolved is True, res
    assert res.fidelity["exit_code_match"] == 1.0, res.fidelity
    assert res.details["evaluator"]["patch"].startswith("diff --git a/calc.py b/calc.py")
    report = res.details["evaluator"]["report"]["toycalc-1"]
    assert report["resolved"] and report["tests_status"]["PASS_TO_PASS"]["failure"] == []
    res = replay(_trajectory(False), task, backend=backend)
    assert res.status == "ok" and res.resolved is False


def test_diagnose_takes_y_c_from_the_harness_grade(task, backend, tmp_path) -> None:
    trajs = [_trajectory(True), _trajectory(False)]
    opts = DiagnoseOptions(n_boot=20, progress=False, backend="docker", replay_concurrency=1)
    diagnose(trajs, [task], build_panel(DEFAULT_CONFIG), tmp_path, opts)
    recs = {r["case_id"]: r for r in map(json.loads, (tmp_path / "records.jsonl").open())}
    assert recs["toy-fix"]["y_c_source"] == "replay", recs
    assert [recs[c]["record"]["y_c"] for c in ("toy-fix", "toy-wrong")] == [1, 0], recs
    report = recs["toy-wrong"]["replay"]["details"]["evaluator"]["report"]["toycalc-1"]
    assert report["tests_status"]["FAIL_TO_PASS"]["failure"] == ["tests/test_calc.py::test_add"]


def test_fidelity_report_compares_exit_codes_final_diff_and_grade(task, suite, tmp_path) -> None:
    """`agentpost replay --fidelity` on two recorded runs: one replays faithfully (every exit
    code, the submission byte for byte, the official grade); the other recorded an exit code
    and a submission its actions do not give, and a grade the replay does not reach."""
    from typer.testing import CliRunner

    from agentpost import cli
    from agentpost.trajectory.io import write_jsonl

    good = _trajectory(True)
    good.outcome.details["submission"] = suite["gold"]  # what `sed a - b -> a + b` leaves
    bad = _trajectory(False)
    bad.outcome.details["submission"] = suite["gold"]
    bad.turns[0].observations[0].exit_code = 1  # `cat calc.py` recorded as failing
    write_jsonl(tmp_path / "trajs.jsonl", [good, bad])
    (tmp_path / "report.json").write_text(json.dumps({"toycalc-1": {"resolved": True}}))
    args = ["replay", tmp_path / "trajs.jsonl", "--suite", suite["root"], "--fidelity",
            "--backend", "docker", "--official", tmp_path / "report.json", "-o", tmp_path / "out"]  # fmt: skip
    cli._register()
    res = CliRunner().invoke(cli.app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out" / "fidelity.json").read_text())
    assert doc["format"] == "agentpost.replay-fidelity/1"
    rows = {r["trajectory"]: r for r in doc["trajectories"]}
    ok, wrong = rows["toy-fix"], rows["toy-wrong"]
    assert (ok["status"], ok["exit_codes_matched"], ok["exit_codes_compared"]) == ("ok", 4, 4)
    assert ok["diff_equal"] is True and ok["resolved"] is True
    assert (ok["grade_reference"], ok["grade_match"]) == ("official", True)
    assert wrong["exit_mismatches"] == [[0, 0, 1, 0]] and wrong["exit_codes_matched"] == 3
    assert wrong["diff_equal"] is False and wrong["diff_equal_content"] is False
    assert wrong["resolved"] is False and wrong["grade_match"] is False
    assert doc["summary"]["diff_equal"] == {"yes": 1, "of": 2}
    assert "toy-fix" in res.output and "4/4" in res.output  # the table
    # resumable: a rerun replays nothing (both results are in the store)
    res = CliRunner().invoke(cli.app, [str(a) for a in args])
    assert res.exit_code == 0 and json.loads((tmp_path / "out" / "fidelity.json").read_text())[
        "trajectories"] == doc["trajectories"]  # fmt: skip


def test_an_openhands_run_replays_through_its_workspace_link(task, backend) -> None:
    """OpenHands works in /workspace/<owner>__<name>__<version> (a link to /testbed that its
    own setup script makes) and writes scratch files in /workspace: both replay, and the grade
    sees the fix and none of the scratch files."""
    ws = "/workspace/agentpost-test__toycalc__0.1"
    traj = build("oh-fix", [
        [(f"cd {ws} && grep -n 'a - b' calc.py", "2:    return a - b\n", 0)],
        [(f"sed -i 's/a - b/a + b/' {ws}/calc.py", "", 0)],
        [("echo 'from calc import add; print(add(2, 3))' > /workspace/repro.py && "
          "python /workspace/repro.py", "5\n", 0)],
        [("ls /agentpost-test__toycalc/calc.py", "/agentpost-test__toycalc/calc.py\n", 0)],
    ], task="toycalc-1", resolved=True)  # fmt: skip
    traj.agent = "openhands"
    res = replay(traj, task, backend=backend)
    assert res.status == "ok" and res.resolved is True, res
    assert res.fidelity["exit_codes_matched"] == 4, res.details
    assert "repro.py" not in res.details["evaluator"]["patch"]


def test_a_python_39_instance_builds_and_grades_on_bullseye(suite, backend, tmp_path) -> None:
    """The same instance, specified for Python 3.9: its image comes from the bullseye base (no
    substituted Python, no deviation), runs 3.9, and grades gold 1 / empty 0. Skips where the
    bullseye build base is not built (`agentpost images build --base build@bullseye`)."""
    from agentpost.sandbox.images import base_tag, image_exists
    from agentpost.tasks.swebench import gate

    if not image_exists(backend, base_tag("build", suite="bullseye")):
        pytest.skip("no bullseye build base here (agentpost images build --base build@bullseye)")
    root = suite["root"]
    inst = json.loads((root / "instances.jsonl").read_text())
    (tmp_path / "i.jsonl").write_text(json.dumps({**inst, "version": "0.39"}) + "\n")
    toml = (root / "swebench.toml").read_text().replace('"0.1"', '"0.39"')
    toml = toml.replace('python = "3.11"', 'python = "3.9"').replace("instances.jsonl", "i.jsonl")
    (tmp_path / "swebench.toml").write_text(toml.replace('= "toycalc"', f'= "{root / "toycalc"}"'))
    [t] = load_suite(tmp_path)
    assert (t.metadata["env"]["release"], t.metadata["deviations"]) == ("bullseye", [])
    spec = spec_for(t, backend=backend)
    doc = gate.cached(spec.image)
    assert doc["ok"] and doc["gold"]["resolved"] is True and doc["empty"]["resolved"] is False
    with backend.create(spec) as sb:
        out = sb.exec("python -c 'import sys; print(sys.version_info[:2])'", cwd="/testbed")
    assert out.stdout.strip() == "(3, 9)", out
