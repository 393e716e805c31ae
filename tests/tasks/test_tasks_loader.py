"""Loading Harbor and Terminal-Bench 1 task directories, and evaluating them in a real sandbox."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentpost.errors import InputError
from agentpost.tasks.evaluate import (
    evaluate,
    parse_reward_json,
    parse_reward_text,
    prepare,
    run_script,
    spec_for,
)
from agentpost.tasks.loader import bundled_suite_path, load_suite, load_task

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _bwrap():
    from agentpost.sandbox.registry import get_backend

    backend = get_backend("bwrap")
    if not backend.available():
        pytest.skip("bubblewrap sandbox not available")
    return backend


def test_harbor_task_loads_every_field() -> None:
    task = load_task(bundled_suite_path() / "git-feature-branch")
    assert task.format == "harbor" and task.id == "git-feature-branch"
    assert task.workdir == "/app" and task.evaluator_network is False
    assert task.agent_timeout_s == 600.0 and task.verifier_timeout_s == 60.0
    assert task.metadata["category"] == "git" and task.metadata["difficulty"] == "medium"
    assert task.environment_dir and (task.environment_dir / "Dockerfile").is_file()
    assert task.solution_script and task.solution_script.name == "solve.sh"
    assert [p.parent.name for p in task.wrong_solutions] == ["wrong"]
    assert "feature/greeting" in task.instruction
    assert task.explore and task.check and "status --short" in task.check


def test_tb1_task_loads_into_the_same_model() -> None:
    task = load_task(FIXTURES / "tb1-hello")
    assert task.format == "terminal-bench-1" and task.id == "tb1-hello"
    assert task.instruction.startswith("Create the file /app/hello.txt")
    assert task.agent_timeout_s == 120.0 and task.verifier_timeout_s == 30.0
    assert task.metadata == {
        "author_email": "fixture@example.com",
        "difficulty": "easy",
        "category": "file-operations",
        "tags": ["fixture"],
        "parser_name": "pytest",
    }
    assert task.solution_script == task.path / "solution.sh"
    assert task.run_tests_script == task.path / "run-tests.sh"
    assert task.environment_dir is None and task.wrong_solutions == ()


def test_bundled_suite_has_twenty_varied_harbor_tasks() -> None:
    tasks = load_suite(bundled_suite_path("terminal"))
    assert len(tasks) >= 20
    kinds = {  # the kinds the suite must cover (issue 3): text/logs, a Python package to fix, a
        # CLI to a spec, CSV/JSON, shell scripting, config repair, git, a small C program
        "text-processing", "python-debugging", "cli", "data-conversion",
        "shell-scripting", "config", "git", "c",
    }  # fmt: skip
    assert kinds <= {t.metadata["category"] for t in tasks}
    for t in tasks:
        assert t.format == "harbor" and t.solution_script and t.wrong_solutions, t.id
        assert t.explore and t.check, t.id
        for wrong in t.wrong_solutions:  # each wrong solution says which realistic bug it has
            header = wrong.read_text().splitlines()[1]
            assert header.startswith("# A plausible WRONG solution: ") and len(header) > 50, t.id


def _copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copytree(bundled_suite_path() / name, dest)
    return dest


def test_bad_task_toml_names_file_and_line(tmp_path: Path) -> None:
    root = _copy(tmp_path, "csv-to-json")
    (root / "task.toml").write_text('version = "1.0"\n[verifier]\ntimeout_sec = = 3\n')
    with pytest.raises(InputError) as e:
        load_task(root)
    assert str(root / "task.toml") in str(e.value) and "line 3" in str(e.value)


def test_wrong_type_names_the_field(tmp_path: Path) -> None:
    root = _copy(tmp_path, "csv-to-json")
    (root / "task.toml").write_text('[agent]\ntimeout_sec = "soon"\n')
    with pytest.raises(InputError, match=r"\[agent\]\.timeout_sec"):
        load_task(root)


def test_bad_task_yaml_names_line(tmp_path: Path) -> None:
    root = tmp_path / "tb1"
    shutil.copytree(FIXTURES / "tb1-hello", root)
    (root / "task.yaml").write_text("instruction: [unclosed\nother: 1\n")
    with pytest.raises(InputError, match="task.yaml: line"):
        load_task(root)


def test_missing_test_sh_and_empty_suite_are_input_errors(tmp_path: Path) -> None:
    root = _copy(tmp_path, "csv-to-json")
    (root / "tests" / "test.sh").unlink()
    with pytest.raises(InputError, match="test.sh"):
        load_task(root)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no task directories"):
        load_suite(tmp_path / "empty")


def test_reward_parsers() -> None:
    assert parse_reward_text(" 1\n") == 1.0 and parse_reward_text("0.5") == 0.5
    assert parse_reward_text("") is None and parse_reward_text("pass") is None
    assert parse_reward_text("nan") is None
    assert parse_reward_json('{"reward": 0.25}') == 0.25 and parse_reward_json("1") == 1.0
    assert parse_reward_json('{"accuracy": 1}') == 1.0
    assert parse_reward_json('{"a": 1, "b": 0}') is None and parse_reward_json("true") is None
    assert parse_reward_json("{") is None


def _eval_with_test_sh(tmp_path: Path, body: str, backend):
    root = _copy(tmp_path, "csv-to-json")
    (root / "tests" / "test.sh").write_text("#!/bin/bash\nmkdir -p /logs/verifier\n" + body)
    task = load_task(root)
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        return evaluate(task, sb)


def test_reward_json_missing_and_garbage_rewards(tmp_path: Path) -> None:
    backend = _bwrap()
    ok = _eval_with_test_sh(
        tmp_path / "a", "echo '{\"reward\": 0.5}' > /logs/verifier/reward.json\n", backend
    )
    assert (ok.status, ok.reward, ok.resolved) == ("ok", 0.5, False)
    missing = _eval_with_test_sh(tmp_path / "b", "echo ran\n", backend)
    assert missing.status == "evaluator_invalid" and missing.reward is None
    assert "no reward file" in missing.output
    garbage = _eval_with_test_sh(tmp_path / "c", "echo yes > /logs/verifier/reward.txt\n", backend)
    assert garbage.status == "evaluator_invalid" and garbage.reward is None
    slow = tmp_path / "d"
    root = _copy(slow, "csv-to-json")
    (root / "tests" / "test.sh").write_text("sleep 30\n")
    (root / "task.toml").write_text("[verifier]\ntimeout_sec = 1.0\n")
    task = load_task(root)
    with backend.create(spec_for(task)) as sb:
        slow_res = evaluate(task, sb)  # the oracle times out as well: the task cannot grade
    assert slow_res.status == "evaluator_invalid" and "ran out of time" in slow_res.output
    assert slow_res.details["control"].startswith("not clean")


def test_agent_cannot_prewrite_its_reward(tmp_path: Path) -> None:
    backend = _bwrap()
    task = load_task(bundled_suite_path() / "csv-to-json")
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        sb.exec(
            "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && echo 'exit 0' > /tests/test.sh"
        )
        res = evaluate(task, sb)
    assert (res.status, res.reward) == ("ok", 0.0)


def test_tb1_task_evaluates_by_pytest_summary(tmp_path: Path) -> None:
    backend = _bwrap()
    task = load_task(FIXTURES / "tb1-hello")
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        nop = evaluate(task, sb)
        assert run_script(task, sb, task.solution_script).exit_code == 0
        done = evaluate(task, sb)
        sb.exec("echo 'Hello' > /app/hello.txt")
        half = evaluate(task, sb)
    assert (nop.status, nop.reward) == ("ok", 0.0)
    assert (done.status, done.reward, done.resolved) == ("ok", 1.0, True)
    assert half.reward == 0.0 and half.details["tests"] == {
        "check_outputs.py::test_content": "FAILED",
        "check_outputs.py::test_file_exists": "PASSED",
    }


def test_tb1_output_without_a_pytest_summary_is_evaluator_invalid(tmp_path: Path) -> None:
    """A real TB1 runner installs pytest with curl/uv; offline that fails before any test runs.
    Its exit status (1 here) must not read as a silent reward 0, nor may stray PASSED lines
    printed before pytest's summary header count as results."""
    backend = _bwrap()
    root = tmp_path / "tb1"
    shutil.copytree(FIXTURES / "tb1-hello", root)
    runner = root / "run-tests.sh"
    runner.write_text(
        "#!/bin/bash\necho 'PASSED check_outputs.py::test_content'\n"
        "echo 'curl: (6) Could not resolve host: astral.sh' >&2; exit 1\n"
    )
    task = load_task(root)
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        run_script(task, sb, task.solution_script)
        res = evaluate(task, sb)
        assert (res.status, res.reward, res.resolved) == ("evaluator_invalid", None, None)
        assert "short test summary" in res.output
        runner.write_text(runner.read_text().replace("exit 1", "exit 0"))
        assert evaluate(task, sb).status == "evaluator_invalid"


def test_older_tb1_task_with_descriptions_and_no_runner(tmp_path: Path) -> None:
    """Older TB1 tasks put the instruction in ``descriptions`` (key ``base``) and leave
    run-tests.sh to the harness; the default runner uses the sandbox's pytest and, where there is
    none, the result is evaluator_invalid rather than a silent 0."""
    root = tmp_path / "tb1-old"
    shutil.copytree(FIXTURES / "tb1-hello", root)
    (root / "run-tests.sh").unlink()
    (root / "tests" / "check_outputs.py").rename(root / "tests" / "test_outputs.py")
    (root / "task.yaml").write_text(
        "descriptions:\n  - key: base\n    description: |\n      Write /app/hello.txt.\n"
        "  - key: hard\n    description: other\nmax_test_timeout_sec: 30\n"
    )
    task = load_task(root)
    assert task.instruction == "Write /app/hello.txt.\n" and task.run_tests_script is None
    backend = _bwrap()
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        run_script(task, sb, task.solution_script)
        res = evaluate(task, sb)
        has_pytest = sb.exec(["python3", "-c", "import pytest"]).exit_code == 0
    if has_pytest:  # the sandbox's python3 is the host's (read-only root)
        assert (res.status, res.reward) == ("ok", 1.0)
    else:
        assert (res.status, res.reward) == ("evaluator_invalid", None), res.output
    (root / "task.yaml").write_text("descriptions:\n  - key: hard\n    description: x\n")
    with pytest.raises(InputError, match="instruction"):
        load_task(root)


def test_every_suite_file_is_package_data() -> None:
    """A wheel ships only files matching pyproject's package-data globs, and no hidden files:
    such files are written by the task's agentpost-setup.sh instead."""
    import fnmatch
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["agentpost"]
    names = {g.split("/")[-1] for g in globs}
    suite = bundled_suite_path()
    bad = [
        str(p.relative_to(suite))
        for p in suite.rglob("*")
        if p.is_file()
        and (
            any(part.startswith(".") or " " in part for part in p.relative_to(suite).parts)
            or not any(fnmatch.fnmatch(p.name, n) for n in names)
        )
    ]
    assert not bad


def test_a_task_file_that_is_not_utf8_is_an_error_naming_it_and_the_others_load(
    tmp_path: Path,
) -> None:
    """instruction.md or task.yaml in Latin-1: an InputError at the first bad byte, and the
    rest of the suite still loads (it was a UnicodeDecodeError that ended the whole load)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    good = _copy(suite, "csv-to-json")
    bad = _copy(suite, "git-feature-branch")
    (bad / "instruction.md").write_bytes("Caf\xe9 au lait\n".encode("latin-1"))
    tb1 = suite / "tb1"
    shutil.copytree(FIXTURES / "tb1-hello", tb1)
    (tb1 / "task.yaml").write_bytes(b"instruction: caf\xe9\n")
    errors: list[InputError] = []
    tasks = load_suite(suite, errors)
    assert [t.path for t in tasks] == [good]
    where = sorted((str(e.path), e.where, e.message) for e in errors)
    assert where == [
        (str(bad / "instruction.md"), "byte 3", "not UTF-8 text"),
        (str(tb1 / "task.yaml"), "byte 16", "not UTF-8 text"),
    ]
