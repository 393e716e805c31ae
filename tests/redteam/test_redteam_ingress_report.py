"""Red team, issue 26 part A: a shared run folder may not make ``agentpost report`` read a host
file. On main the report globbed through symlinks: ``summary.json -> /elsewhere/x.json`` (or a
symlinked subdir) was read and rendered into report.html."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from host_canaries import HostCanaries

LEAK = "LEAKED-FROM-THE-HOST-7c1e"


def test_a_symlink_in_a_run_folder_reads_nothing_outside_it(tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    doc = {"task_id": LEAK, "status": "ok", "func": True, "sec": True, "reward": 1.0}
    (host / "grade.json").write_text(json.dumps(doc))
    (host / "nested").mkdir()
    (host / "nested" / "grade.json").write_text(json.dumps(doc))
    canaries = HostCanaries(host)
    run = tmp_path / "run"
    run.mkdir()
    (run / "mine.json").write_text(json.dumps({**doc, "task_id": "own-task"}))
    os.symlink(host / "grade.json", run / "linked.json")
    os.symlink(host / "nested", run / "sub")
    out = tmp_path / "report.html"
    res = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()", "report", str(run),
                          "-o", str(out)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    html = out.read_text()
    assert "own-task" in html and LEAK not in html
    assert canaries.untouched(), canaries.changes()


def _traj_line(tid: str, task: str) -> bytes:
    from agentpost.trajectory.io import dumps
    from agentpost.trajectory.model import Producer, Trajectory

    t = Trajectory(id=tid, task_id=task, turns=[], producer=Producer(name="t", version="0"))
    return dumps(t) + b"\n"


def test_a_folder_swapped_for_a_link_after_the_scan_reads_nothing_outside(tmp_path):
    """The report scans the run folder (every file reached without a link), then streams the
    trajectory files and reads the grade lines it found. On main that second read reopened each
    file by its path: a writer of the shared folder who swaps ``sub/`` for a link to a host dir
    between the two (here: right after ``scan``, as ``report`` and ``summary`` call them) made
    the report read the host's files, whose trajectories and grades were rendered. Now every
    file is read by descent from the folder's fd the scan held, without a link on the way."""
    import pytest

    from agentpost.errors import InputError
    from agentpost.report.rundata import from_found
    from agentpost.report.scan import scan

    grade = {"agent": "a", "task_id": "own-task", "status": "ok", "func": True, "sec": True}
    host = tmp_path / "host"
    host.mkdir()
    (host / "t.jsonl").write_bytes(_traj_line("host-traj", LEAK))
    (host / "grades.jsonl").write_text(json.dumps({**grade, "task_id": LEAK}) + "\n")
    canaries = HostCanaries(host)
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    (run / "sub" / "t.jsonl").write_bytes(_traj_line("own-traj", "own-task"))
    (run / "sub" / "grades.jsonl").write_text(json.dumps(grade) + "\n")
    found = scan(run)
    assert [rel for rel, _ in found.files["trajectories"]] == ["sub/t.jsonl"]
    os.rename(run / "sub", run / "sub-old")  # the swap, between the scan and the reads
    os.symlink(host, run / "sub")
    try:
        data = from_found(run, found)
    except InputError as e:
        assert "sub" in str(e) and "link" in str(e), e
    else:
        assert LEAK not in json.dumps(data.rows) + json.dumps(data.grades)
        assert "host-traj" not in data.rows
    assert canaries.untouched(), canaries.changes()
    with pytest.raises(InputError, match="link"):
        from_found(run, found)
