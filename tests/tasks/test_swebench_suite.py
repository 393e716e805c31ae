"""SWE-bench suites without docker: instance fields checked with errors that name the file and
place, the Python-version choice and its recorded deviation, and the clean copy of a repository
(a planted future commit, tag, branch and stash never enter it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentpost.errors import InfraError, InputError
from agentpost.tasks.swebench.env import choose_release
from agentpost.tasks.swebench.history import clean_copy, verify
from agentpost.tasks.swebench.instance import parse_instance

GOOD = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "abc1234", "patch": "",
        "test_patch": "diff", "version": "1.0", "FAIL_TO_PASS": '["t1"]', "PASS_TO_PASS": []}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip


def test_instance_fields_parse_and_published_json_lists_are_read() -> None:
    inst = parse_instance(GOOD, "f.jsonl", "line 1")
    assert inst.FAIL_TO_PASS == ("t1",) and inst.environment_setup_commit == "abc1234"


@pytest.mark.parametrize(
    "change, where",
    [({"repo": "nope"}, "line 2.repo"), ({"base_commit": "main"}, "line 2.base_commit"),
     ({"FAIL_TO_PASS": "[1"}, "line 2.FAIL_TO_PASS"), ({"version": None}, "line 2.version"),
     ({"instance_id": "../x"}, "line 2.instance_id"), ({"version": "../../etc"}, "line 2.version"),
     ({"version": "1 $(id)"}, "line 2.version")],
)  # fmt: skip
def test_a_bad_field_is_an_input_error_naming_file_and_place(change, where) -> None:
    with pytest.raises(InputError) as e:
        parse_instance({**GOOD, **change}, "f.jsonl", "line 2")
    assert e.value.path == "f.jsonl" and e.value.where == where


def test_python_version_choice_records_a_substitution() -> None:
    both = ("bullseye", "bookworm")
    assert choose_release("3.9", both) == ("bullseye", None)
    assert choose_release("3.10", both) == ("bookworm", "python 3.10 -> 3.11 (bookworm)")
    assert choose_release("3.9", ("bookworm",))[1] == "python 3.9 -> 3.11 (bookworm)"
    assert choose_release("3.13", both) == ("bookworm", "python 3.13 -> 3.11 (bookworm)")


@pytest.mark.parametrize("python, release", [("3.9", "bullseye"), ("3.11", "bookworm"),
                                             ("3.13", "trixie")])  # fmt: skip
def test_each_python_builds_on_the_release_that_ships_it(python, release) -> None:
    """No substitution where a Debian release ships the spec's Python: the image's FROM is that
    release's build base (``sandbox.images``), and the plan records no deviation."""
    from agentpost.sandbox.images import base_tag
    from agentpost.tasks.swebench import env, image

    got, deviation = choose_release(python, env.releases())
    assert (got, deviation) == (release, None)
    assert image.dockerfile(image.base_name(got)).startswith(
        f"FROM {base_tag('build', suite=release)}\n"
    )
    assert release in image.base_name(got) or release == "bookworm"


def test_clean_copy_holds_nothing_after_base_commit(tmp_path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _git(src, "init", "-q", "-b", "main")
    (src / "f").write_text("1\n")
    _git(src, "add", "f")
    _git(src, "commit", "-qm", "one")
    _git(src, "tag", "-a", "v1", "-m", "v1")
    base = _git(src, "rev-parse", "HEAD")
    (src / "f").write_text("ANSWER\n")
    _git(src, "commit", "-qam", "answer")
    future = _git(src, "rev-parse", "HEAD")
    _git(src, "tag", "v2")
    (src / "f").write_text("stashed ANSWER\n")
    _git(src, "stash")
    _git(src, "checkout", "-q", "-b", "other", base)
    dest = tmp_path / "copy"
    assert clean_copy(src, base[:8], dest) == base
    assert (
        _git(dest, "tag") == "v1" and _git(dest, "branch", "-a") == "* other"
    )  # named like the source HEAD
    objs = _git(dest, "cat-file", "--batch-all-objects", "--batch-check")
    assert future not in objs and _git(dest, "stash", "list") == ""
    assert not (dest / ".git" / "logs").exists() and (dest / "f").read_text() == "1\n"
    # verify() is the check that would catch a later object: plant one and it fails
    (dest / "g").write_text("x")
    _git(dest, "add", "g")
    _git(dest, "commit", "-qm", "later")
    with pytest.raises(InfraError):
        verify(dest, base)


def test_suite_errors_name_the_file(tmp_path) -> None:
    pytest.importorskip("swebench", reason="the swebench extra: bash scripts/setup.sh --swebench")
    from agentpost.tasks.loader import load_suite

    (tmp_path / "swebench.toml").write_text('instances = "i.jsonl"\n[repos]\n"a/b" = "nowhere"\n')
    (tmp_path / "i.jsonl").write_text(json.dumps(GOOD) + "\n{\n")
    with pytest.raises(InputError) as e:
        load_suite(tmp_path)
    assert "i.jsonl: line 2: not JSON" in str(e.value)
    (tmp_path / "i.jsonl").write_text(json.dumps(GOOD) + "\n")
    errors: list[InputError] = []
    with pytest.raises(InputError, match="no instance loads"):
        load_suite(tmp_path, errors)
    assert "repos.a/b: no local clone for a__b-1" in str(errors[0])


def test_official_grades_read_the_harness_reports_and_refuse_what_they_are_not(tmp_path) -> None:
    from agentpost.tasks.swebench.reports import official_grades

    logs = tmp_path / "logs"
    for iid, ok in (("a__b-1", True), ("a__b-2", False)):
        (logs / iid).mkdir(parents=True)
        (logs / iid / "report.json").write_text(json.dumps({iid: {"resolved": ok, "x": 1}}))
    assert official_grades(logs) == {"a__b-1": True, "a__b-2": False}
    assert official_grades(logs / "a__b-2" / "report.json") == {"a__b-2": False}
    summary = tmp_path / "run.json"
    summary.write_text(json.dumps({"resolved_ids": ["a__b-1"], "completed_ids": ["a__b-1", "c-3"]}))
    assert official_grades(summary) == {"a__b-1": True, "c-3": False}
    bare = tmp_path / "bare" / "x__y-9"  # a published run's layout: the folder names the instance
    bare.mkdir(parents=True)
    (bare / "report.json").write_text(json.dumps({"resolved": True, "tests_status": {}}))
    assert official_grades(tmp_path / "bare") == {"x__y-9": True}
    (logs / "dup").mkdir()
    (logs / "dup" / "report.json").write_text(json.dumps({"a__b-1": {"resolved": False}}))
    with pytest.raises(InputError, match="grades this instance otherwise"):
        official_grades(logs)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a__b-1": {"resolved": "yes"}}))
    with pytest.raises(InputError) as e:
        official_grades(bad)
    assert e.value.path == str(bad) and e.value.where == "a__b-1"
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no report.json"):
        official_grades(tmp_path / "empty")
    with pytest.raises(InputError, match="no such file"):
        official_grades(tmp_path / "nowhere")
