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
