"""The replay fidelity report: per trajectory, how faithfully its recorded run replays into its
task, and a readable table.

Per trajectory (``row``), from its replay result (``ReplayResult.to_json()``) and, when given, the
official grade:
- exit codes: of the replayed calls whose exit code was recorded, how many returned it again
  (``exit_codes_matched`` of ``exit_codes_compared``; the mismatching calls, first ten);
- output similarity: the mean normalised text similarity of replayed vs recorded observations
  (``replay.fidelity``);
- the final diff: the candidate patch the evaluator took from the replayed state
  (``details.evaluator.patch``, SWE-bench tasks) against the submission the trajectory recorded
  (``outcome.details``: ``submission`` for mini-swe-agent and SWE-agent, ``git_patch`` for
  OpenHands): ``diff_equal`` byte for byte, ``diff_equal_content`` with ``index``/mode lines,
  carriage returns and blank ends set aside (they differ between git versions and scaffolds,
  the changes do not);
- the grade: the replay's ``resolved`` against the official one (``official``: SWE-bench's
  ``report.json``), else against the trajectory's recorded outcome (``grade_reference`` says
  which).

``None`` means "nothing to compare" (no recorded submission, no grade on either side), never a
match. The summary counts (k of n); it draws no interval (a handful of trajectories per run).

Layer: pure.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from agentpost.documents.formats import fmt
from agentpost.trajectory.model import Trajectory

SUBMISSION_KEYS = ("submission", "git_patch", "model_patch")
_HEADER = re.compile(r"^(index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?|(old|new) mode [0-7]+)$")
MISMATCHES_SHOWN = 10


def recorded_submission(traj: Trajectory) -> str | None:
    """The patch the trajectory says its run submitted (None when it records none)."""
    details = traj.outcome.details if traj.outcome else {}
    for key in SUBMISSION_KEYS:
        value = details.get(key)
        if isinstance(value, str):
            return value
    return None


def diff_content(diff: str) -> str:
    """``diff`` without ``index`` and file-mode lines, carriage returns and blank ends."""
    lines = diff.replace("\r\n", "\n").split("\n")
    return "\n".join(ln for ln in lines if not _HEADER.match(ln)).strip("\n")


def compare_diffs(replayed: str | None, recorded: str | None) -> tuple[bool | None, bool | None]:
    """(byte for byte, same content) of the replayed final diff and the recorded submission."""
    if replayed is None or recorded is None:
        return None, None
    return replayed == recorded, diff_content(replayed) == diff_content(recorded)


def row(traj: Trajectory, task_id: str, result: dict[str, Any], official: bool | None) -> dict:
    """One trajectory's line of the report (``result``: its ``ReplayResult.to_json()``)."""
    fid = result.get("fidelity") or {}
    details = result.get("details") or {}
    evaluator = details.get("evaluator") or {}
    patch = evaluator.get("patch") if isinstance(evaluator.get("patch"), str) else None
    submission = recorded_submission(traj)
    exact, content = compare_diffs(patch, submission)
    recorded = traj.outcome.resolved if traj.outcome else None
    reference, ref_name = (official, "official") if official is not None else (recorded, "recorded")
    resolved = result.get("resolved")
    grade_match = None if reference is None or resolved is None else resolved == reference
    return {
        "trajectory": traj.id,
        "task": task_id,
        "agent": traj.agent,
        "source_format": traj.source.format if traj.source else None,
        "status": result.get("status"),
        "message": (result.get("message") or "")[:300],
        "calls_replayed": result.get("calls_replayed", 0),
        "calls_skipped": result.get("calls_skipped", 0),
        "exit_codes_compared": fid.get("exit_codes_compared", 0),
        "exit_codes_matched": fid.get("exit_codes_matched", 0),
        "exit_mismatches": (details.get("exit_mismatches") or [])[:MISMATCHES_SHOWN],
        "text_similarity": fid.get("text_similarity"),
        "diff_equal": exact,
        "diff_equal_content": content,
        "diff_chars": [
            None if patch is None else len(patch),
            None if submission is None else len(submission),
        ],  # fmt: skip
        "resolved": resolved,
        "recorded_resolved": recorded,
        "official_resolved": official,
        "grade_reference": ref_name if reference is not None else None,
        "grade_match": grade_match,
        "duration_s": result.get("duration_s"),
    }


def _count(rows: list[dict], key: str) -> dict[str, int]:
    known = [r[key] for r in rows if r[key] is not None]
    return {"yes": sum(1 for v in known if v), "of": len(known)}


def summary(rows: list[dict]) -> dict[str, Any]:
    """Counts over the rows: statuses, exit codes, equal diffs, matching grades."""
    compared = sum(r["exit_codes_compared"] for r in rows)
    return {
        "trajectories": len(rows),
        "status": dict(Counter(r["status"] for r in rows)),
        "exit_codes": {"matched": sum(r["exit_codes_matched"] for r in rows), "of": compared},
        "all_exit_codes_match": {
            "yes": sum(
                1
                for r in rows
                if r["exit_codes_compared"] and r["exit_codes_matched"] == r["exit_codes_compared"]
            ),
            "of": sum(1 for r in rows if r["exit_codes_compared"]),
        },  # fmt: skip
        "diff_equal": _count(rows, "diff_equal"),
        "diff_equal_content": _count(rows, "diff_equal_content"),
        "grade_match": _count(rows, "grade_match"),
    }


def document(rows: list[dict], producer: dict[str, Any]) -> dict[str, Any]:
    """The report as written to ``fidelity.json``."""
    return {"format": fmt("agentpost.replay-fidelity"), "producer": producer,
            "summary": summary(rows), "trajectories": rows}  # fmt: skip


def _yn(v: bool | None) -> str:
    return "-" if v is None else ("yes" if v else "NO")


def table(rows: list[dict]) -> str:
    """The rows as a plain-text table, one trajectory a line, and a total line."""
    head = ["trajectory", "status", "exit codes", "similarity", "diff", "resolved", "grade"]
    lines = [head]
    for r in rows:
        diff = _yn(r["diff_equal"])
        if r["diff_equal"] is False and r["diff_equal_content"]:
            diff = "content"
        ref = {"official": "=official", "recorded": "=recorded"}.get(r["grade_reference"] or "", "")
        sim = r["text_similarity"]
        lines.append([
            str(r["trajectory"])[:48], str(r["status"]),
            f"{r['exit_codes_matched']}/{r['exit_codes_compared']}",
            "-" if sim is None else f"{sim:.3f}", diff, _yn(r["resolved"]),
            f"{_yn(r['grade_match'])}{ref if r['grade_match'] is not None else ''}",
        ])  # fmt: skip
    s = summary(rows)
    lines.append([
        f"all ({s['trajectories']})", ",".join(f"{k}:{v}" for k, v in sorted(s["status"].items())),
        f"{s['exit_codes']['matched']}/{s['exit_codes']['of']}", "",
        f"{s['diff_equal']['yes']}/{s['diff_equal']['of']}", "",
        f"{s['grade_match']['yes']}/{s['grade_match']['of']}",
    ])  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )
