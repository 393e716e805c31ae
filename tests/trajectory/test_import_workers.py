"""Multiprocess import: the same trajectories, ids, order, skips and errors as one process.

Imports the real samples (../shared/data/trajectories, provenance beside them) plus two broken
files, once serially and once in 2 spawned workers, and compares the canonical bytes."""

import shutil

from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_paths
from agentpost.trajectory.io import dumps

DATA = TRAJECTORIES


def test_two_workers_match_one_process(shared_data, tmp_path):
    shutil.copytree(DATA, tmp_path / "data")
    (tmp_path / "data" / "broken.json").write_bytes(b'{"messages": [')
    (tmp_path / "data" / "empty.jsonl").write_bytes(b"\n \n")
    # a duplicate copy makes ids clash, so the dedup suffixes must come out the same too
    shutil.copytree(DATA / "gemini-cli", tmp_path / "data" / "gemini-cli-again")
    serial = import_paths([tmp_path / "data"])
    parallel = import_paths([tmp_path / "data"], workers=2)
    assert len(serial.trajectories) >= 27
    assert [dumps(t) for t in parallel.trajectories] == [dumps(t) for t in serial.trajectories]
    assert any(":" in t.id for t in serial.trajectories)  # the clash happened
    assert parallel.skipped == serial.skipped and parallel.files == serial.files
    assert [e.one_line() for e in parallel.errors] == [e.one_line() for e in serial.errors]
    lines = [e.one_line() for e in serial.errors]
    assert any("broken.json" in x and "invalid JSON" in x for x in lines)
    assert any("empty.jsonl" in x and "empty file" in x for x in lines)


def test_a_killed_worker_costs_speed_not_output(shared_data, monkeypatch):
    """SIGKILL every worker mid-import (what the OOM killer does): the chunks in flight and
    all later ones are imported in the parent, and the results are still the serial ones."""
    import multiprocessing
    import os
    import signal
    from functools import partial

    from agentpost.trajectory import import_workers, importing
    from agentpost.trajectory.importing import _units, import_chunk, iter_files, unit_result

    units = _units(iter_files([DATA]), None)
    assert len(units) > 8  # more chunks (of one unit) than the 8 kept in flight

    def canon(r):
        return (r[0], [dumps(t) for t in r[1]] if r[0] == "ok" else r[1])

    serial = [canon(unit_result(u, None, False)) for u in units]
    local = []  # units imported in this process (spawned workers keep the real function)
    monkeypatch.setattr(importing, "unit_result", lambda *a: local.append(1) or unit_result(*a))
    out, killed = [], 0
    run = partial(import_chunk, fmt=None, keep_raw=False)
    for r in import_workers.parallel(units, run, workers=2, chunk=1):
        out.append(canon(r))
        if not killed:
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
                killed += 1
    assert killed >= 1 and local  # the pool broke and the parent took over
    assert out == serial
