"""The bundled security suite: `agentpost security check` passes for every task (CI), the
suite's coverage and its hidden-reference hygiene."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from typer.testing import CliRunner

from agentpost.cli import _register, app
from agentpost.errors import InputError
from agentpost.security.behaviours import controls_in
from agentpost.security.cwe import load_names
from agentpost.security.hints import LEVELS, hints_for, rl_record
from agentpost.security.pipeline import final_code, read_final_files
from agentpost.security.suite import MARKERS, bundled_suite_dir, load_data, load_split, load_suite

ALLOWED = {int(c) for c in load_names()}  # every CWE has its L2 text
TASKS = load_suite()
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    _register()
    return CliRunner()


@needs_bwrap
def test_security_check_passes_for_every_bundled_task(runner):
    t0 = time.monotonic()
    res = runner.invoke(app, ["security", "check", "--json", "--workers", "4"])
    elapsed = time.monotonic() - t0
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["producer"]["name"] == "agentpost.security.grade.check_suite"
    bad = [r for r in doc["tasks"] if not r["ok"]]
    assert not bad, bad
    assert doc["ok"] is True and doc["problems"] == {}
    for r in doc["tasks"]:
        assert set(r) == {"id", "cwes", "secure", "vulnerable", "ok"}  # the contract
        assert r["secure"] == {"func": True, "sec": True}
        assert r["vulnerable"] == {"func": True, "sec": False}
    assert len(doc["tasks"]) == len(TASKS)
    assert elapsed < 120  # 31 tasks: ~10 s on two idle cores, ~30 s with the box shared eightfold


def test_suite_coverage():
    assert len(TASKS) >= 30
    cwes = {c for t in TASKS for c in t.cwes}
    assert cwes <= ALLOWED
    assert len(cwes - {863}) >= 18  # 862/863 (one task holds both) count once
    assert len({t.id for t in TASKS}) == len(TASKS)


def test_split_is_documented_disjoint_and_covers_the_suite():
    split = load_split()
    assert split.version and not split.seen & split.unseen
    assert {c for t in TASKS for c in t.cwes} == split.seen | split.unseen
    assert len(split.seen - {863}) >= 12 and len(split.unseen) >= 6
    assert len(split.train) + len(split.heldout) == len(TASKS)
    for t in split.train:
        assert set(t.cwes) <= split.seen and split.side(t.id) == "train"
    for t in split.heldout:
        assert set(t.cwes) <= split.unseen and split.side(t.id) == "heldout"
    assert {c for t in split.heldout for c in t.cwes} == split.unseen  # each held-out CWE is tested
    readme = (bundled_suite_dir() / "README.md").read_text()
    assert all(f"CWE-{c}" in readme for c in split.unseen)  # the split is documented


def _suite_copy(tmp_path, split_doc):
    root = tmp_path / "suite"
    shutil.copytree(bundled_suite_dir(), root)
    (root / "split.json").write_text(
        split_doc if isinstance(split_doc, str) else json.dumps(split_doc)
    )
    return root


@pytest.mark.parametrize(
    "change, message",
    [
        ({"unseen": [22]}, "both sides"),
        ({"seen": [78]}, "neither side"),
        ({"seen": ["22"]}, "list of CWE ids"),
        ({"format": "other/1"}, "expected"),
    ],
)
def test_a_bad_split_is_a_one_line_input_error(tmp_path, change, message):
    good = json.loads((bundled_suite_dir() / "split.json").read_text())
    root = _suite_copy(tmp_path, {**good, **change})
    with pytest.raises(InputError, match=message) as e:
        load_split(root)
    assert "split.json" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="invalid JSON"):
        load_split(_suite_copy(tmp_path / "b", "{nope"))


def test_every_task_has_markers_its_secure_reference_shows_and_its_exploit_uses():
    """The heuristic annotator can see each task's weakness: the secure reference holds a control
    pattern of the task's CWE and the vulnerable one does not; the exploit test holds a payload
    marker of that CWE (a context one is fine: the test's canary gives it context)."""
    markers = load_data(MARKERS)
    for t in TASKS:
        secure = final_code(t, read_final_files(t.references["secure"]))
        vulnerable = final_code(t, read_final_files(t.references["vulnerable"]))
        exploit = (t.tests_dir / "test_security.py").read_text().lower()
        for c in t.cwes:
            spec = markers["cwes"][str(c)]
            assert controls_in(secure, str(c), markers), (t.id, c, "no control in secure")
            assert not controls_in(vulnerable, str(c), markers), (t.id, c, "control in vulnerable")
            assert any(p.lower() in exploit for p in spec["payloads"] + spec["context_payloads"]), (
                t.id,
                c,
            )


_SECURITY_WORDS = re.compile(
    r"secur|vulnerab|attack|exploit|inject|sanitiz|escape|travers|malicious|cwe|xss|ssrf|xxe"
    r"|unsafe|untrusted|authori[sz]|pickle|eval\b|owner only|exactly what was written"
    r"|as the user typed|html.?entit",
    re.I,
)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_instruction_never_mentions_security_and_reference_is_complete(task):
    text = task.instruction.replace("Authorization: Bearer", "")  # an HTTP header name, not a hint
    assert not _SECURITY_WORDS.search(text), _SECURITY_WORDS.search(text)
    assert set(task.references) == {"secure", "vulnerable"}
    assert (task.environment_dir / task.entry).is_file()
    assert task.sink and task.security_test
    hints = hints_for(task.cwes, task.hints, load_names())
    assert hints["L1"] == ", ".join(f"CWE-{c}" for c in task.cwes)
    for lo, hi in zip(LEVELS, LEVELS[1:], strict=False):
        assert hints[hi].startswith(hints[lo]) and len(hints[hi]) > len(hints[lo])
    rec = rl_record(task.id, task.instruction, task.cwes, hints["L4"])
    assert rec["label"] == task.id and rec["metadata"]["teacher_hint"] == hints["L4"]
    assert hints["L4"] not in rec["prompt"] and "CWE" not in rec["prompt"]
    # The starter and the security test never touch absolute host paths outside the sandbox.
    text = (task.tests_dir / "test_security.py").read_text()
    assert "/etc/" not in text and "/home" not in text and "/work" not in text


def test_security_grade_cli_and_bad_input(runner, tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    res = runner.invoke(
        app, ["security", "grade", "calculator", str(TASKS[0].path / "nope"), "--json"]
    )
    assert res.exit_code != 0
    calc = next(t for t in TASKS if t.id == "calculator")
    res = runner.invoke(
        app, ["security", "grade", "calculator", str(calc.references["vulnerable"]), "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert (doc["func"], doc["sec"], doc["reward"], doc["status"]) == (True, False, 0.5, "ok")
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    doc = json.loads(
        runner.invoke(app, ["security", "grade", "calculator", str(empty), "--json"]).output
    )
    assert (doc["status"], doc["reward"], doc["patch_valid"]) == ("empty_patch", -1.0, False)


def test_rl_record_refuses_a_hint_inside_the_prompt():
    with pytest.raises(ValueError, match="teacher hint"):
        rl_record("t", "do X. CWE-22", [22], "CWE-22")
