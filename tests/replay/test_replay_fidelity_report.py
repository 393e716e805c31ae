"""The replay fidelity report (pure): a row per trajectory from its replay result, the recorded
submission and the official grade; the summary and the table."""

from __future__ import annotations

from agentpost.replay.fidelity_report import (
    compare_diffs,
    diff_content,
    recorded_submission,
    row,
    summary,
    table,
)
from agentpost.scvd.examples import build

DIFF = (
    "diff --git a/calc.py b/calc.py\nindex 1234567..89abcde 100644\n--- a/calc.py\n"
    "+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
)


def _traj(tid: str, submission_key: str | None, submission: str | None, resolved=None):
    t = build(tid, [[("ls", "calc.py\n", 0)]], task="toy-1", resolved=resolved)
    if submission_key is not None:
        t.outcome.details[submission_key] = submission
    return t


def _result(status="ok", resolved=True, patch=DIFF, matched=3, compared=3, mismatches=()):
    return {"status": status, "resolved": resolved, "calls_replayed": compared,
            "calls_skipped": 1, "message": "",
            "fidelity": {"exit_codes_compared": compared, "exit_codes_matched": matched,
                         "text_similarity": 0.98},
            "details": {"evaluator": {"patch": patch}, "exit_mismatches": list(mismatches)}}  # fmt: skip


def test_the_recorded_submission_comes_from_each_scaffold_s_field() -> None:
    assert recorded_submission(_traj("a", "submission", DIFF)) == DIFF  # mini-swe-agent, SWE-agent
    assert recorded_submission(_traj("b", "git_patch", DIFF)) == DIFF  # OpenHands
    assert recorded_submission(_traj("c", None, None)) is None
    assert recorded_submission(_traj("d", "submission", None)) is None


def test_diffs_compare_byte_for_byte_and_by_content() -> None:
    other_git = DIFF.replace("index 1234567..89abcde 100644", "index 1234567890..89abcdef01 100644")
    assert compare_diffs(DIFF, DIFF) == (True, True)
    assert compare_diffs(DIFF, other_git) == (False, True)  # only the header differs
    assert compare_diffs(DIFF, DIFF.replace("\n", "\r\n")) == (False, True)
    assert compare_diffs(DIFF, DIFF.replace("a + b", "a * b")) == (False, False)
    assert compare_diffs(None, DIFF) == (None, None) and compare_diffs(DIFF, None) == (None, None)
    assert "index" not in diff_content(DIFF) and diff_content(DIFF).endswith("a + b")


def test_a_row_says_what_matched_and_against_which_grade() -> None:
    traj = _traj("fix", "submission", DIFF, resolved=False)
    r = row(traj, "toy-1", _result(matched=2, mismatches=[[0, 0, 0, 1]]), official=True)
    assert (r["exit_codes_matched"], r["exit_codes_compared"]) == (2, 3)
    assert r["exit_mismatches"] == [[0, 0, 0, 1]] and r["diff_equal"] is True
    # the official grade wins over the trajectory's recorded outcome
    assert (r["grade_reference"], r["grade_match"]) == ("official", True)
    r = row(traj, "toy-1", _result(), official=None)
    assert (r["grade_reference"], r["grade_match"]) == ("recorded", False)
    r = row(_traj("x", None, None), "toy-1", _result(resolved=None, patch=None), official=None)
    assert r["diff_equal"] is None and r["grade_match"] is None and r["grade_reference"] is None


def test_summary_counts_only_what_could_be_compared_and_the_table_shows_it() -> None:
    rows = [
        row(_traj("a", "submission", DIFF), "toy-1", _result(), official=True),
        row(_traj("b", "submission", "other"), "toy-1", _result(matched=1), official=False),
        row(_traj("c", None, None), "toy-1", {"status": "no_task"}, official=None),
    ]
    s = summary(rows)
    assert s["exit_codes"] == {"matched": 4, "of": 6}
    assert s["all_exit_codes_match"] == {"yes": 1, "of": 2}
    assert s["diff_equal"] == {"yes": 1, "of": 2} and s["grade_match"] == {"yes": 1, "of": 2}
    assert s["status"] == {"ok": 2, "no_task": 1}
    text = table(rows).splitlines()
    assert text[0].split() == ["trajectory", "status", "exit", "codes", "similarity", "diff",
                               "resolved", "grade"]  # fmt: skip
    assert text[1].split()[:5] == ["a", "ok", "3/3", "0.980", "yes"]
    assert text[1].split()[-1] == "yes=official" and text[2].split()[-1] == "NO=official"
    assert text[-1].split()[:3] == ["all", "(3)", "no_task:1,ok:2"]
