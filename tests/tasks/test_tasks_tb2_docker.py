"""A representative slice of the shared Terminal-Bench 2.0 set, as its authors wrote it, graded
on docker with no network (the whole set runs in ``bench/real_tasks.py``): one task per base the
set asks for and per way it installs at run time.

- ``cobol-modernization``: ``python:3.13-slim-bookworm`` (trixie's Python 3.13), Debian packages
  at build, ``apt-get install gnucobol3`` at solve time, the ``uvx -p 3.13`` verifier;
- ``merge-diff-arc-agi-task``: ``ubuntu:24.04`` (on trixie), ``apt-get install git`` at solve time;
- ``build-pmars``: ``debian:13.0-slim``, a solution pinning Debian point releases since superseded
  (served by the release's own versions, said) and building from ``apt-get source pmars``.

Reads ``../shared/data/tasks/terminal-bench-2`` (the checkout's sibling); skipped without it."""

from __future__ import annotations

from pathlib import Path

import pytest

TB2 = Path(__file__).resolve().parents[3] / "shared" / "data" / "tasks" / "terminal-bench-2"
SLICE = ("cobol-modernization", "merge-diff-arc-agi-task", "build-pmars")

pytestmark = pytest.mark.skipif(not TB2.is_dir(), reason=f"the shared TB2 set is absent ({TB2})")


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("task_id", SLICE)
def test_a_tb2_task_grades_oracle_1_and_nop_0_offline(docker, task_id):
    from agentpost.tasks.check import check_task
    from agentpost.tasks.loader import load_task

    row = check_task(load_task(TB2 / task_id), docker)
    assert (row["oracle_reward"], row["nop_reward"]) == (1.0, 0.0), row.get("errors")
    cannot = [u for u in row["unservable"] if u["what"] != "note"]
    assert cannot == [], cannot
    if task_id == "build-pmars":  # the superseded pins are served, and said so
        notes = " ".join(u["why"] for u in row["unservable"])
        assert "apt ca-certificates=20250419 is not in this release: served" in notes
