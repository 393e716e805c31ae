"""Red team, issue 26 part A: a trajectory file may not make ``agentpost import`` read a host
file. Two importers followed a name written in the file to another file: ATIF's
``continued_trajectory_ref`` (read whole and imported as more steps of the trajectory, so a host
file's text became the trajectory's) and mini-swe-agent's ``instance_id`` (the SWE-bench report
at ``logs/<instance_id>/report.json``: its test names and ``resolved`` became the outcome). On
main an absolute name, a ``..`` climb or a symlink in the trajectory's folder read the host
file, and a FIFO named as the continuation hung the import."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InputError
from agentpost.trajectory.importing import import_file

LEAK = "LEAKED-FROM-THE-HOST-51d0"


@pytest.fixture()
def host(tmp_path) -> HostCanaries:
    """A host dir outside the trajectory's folder: an ATIF file and a SWE-bench report in it."""
    root = tmp_path / "host"
    (root / "inst").mkdir(parents=True)
    step = {"step_id": 1, "source": "agent", "message": LEAK}
    (root / "secret.json").write_text(json.dumps({"schema_version": "ATIF-v1.6", "steps": [step]}))
    report = {
        "resolved": True,
        "tests_status": {"FAIL_TO_PASS": {"success": [LEAK], "failure": []}},
    }
    (root / "inst" / "report.json").write_text(json.dumps(report))
    return HostCanaries(root)


def _atif(folder: Path, ref: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    step = {"step_id": 1, "source": "user", "message": "hi"}
    doc = {"schema_version": "ATIF-v1.6", "steps": [step], "continued_trajectory_ref": ref}
    (folder / "trajectory.json").write_text(json.dumps(doc))
    return folder / "trajectory.json"


class Blocked(Exception):  # not an OSError: no handler of the importer may turn it into a verdict
    pass


def _alarm(signum, frame):
    raise Blocked("the import blocked")


@pytest.mark.parametrize("how", ["absolute", "dotdot", "linked-dir", "linked-file", "fifo"])
def test_a_continuation_reference_reads_no_host_file(tmp_path, host, how):
    run = tmp_path / "run"
    run.mkdir()
    ref = {"absolute": str(host.root / "secret.json"), "dotdot": "../host/secret.json",
           "linked-dir": "h/secret.json", "linked-file": "more.json", "fifo": "pipe.json"}[how]  # fmt: skip
    if how == "linked-dir":
        os.symlink(host.root, run / "h")
    elif how == "linked-file":
        os.symlink(host.root / "secret.json", run / "more.json")
    elif how == "fifo":
        os.mkfifo(run / "pipe.json")
    path = _atif(run, ref)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        with pytest.raises(InputError) as e:
            import_file(path)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert "$.continued_trajectory_ref" in e.value.one_line() and LEAK not in e.value.one_line()
    assert host.untouched(), host.changes()


def test_an_honest_continuation_beside_the_file_still_imports(tmp_path):
    run = tmp_path / "run"
    path = _atif(run, "trajectory.cont-1.json")
    step = {"step_id": 2, "source": "agent", "message": "second part"}
    (run / "trajectory.cont-1.json").write_text(
        json.dumps({"schema_version": "ATIF-v1.6", "steps": [step]})
    )
    (t,) = import_file(path)
    assert [x.text for x in t.turns] == ["second part"]
    assert t.metadata["continuations"] == ["trajectory.cont-1.json"]


def _mini(folder: Path, instance: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"info": {"exit_status": "Submitted"}, "instance_id": instance,
           "trajectory_format": "mini-swe-agent-1",
           "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}  # fmt: skip
    (folder / "x.traj.json").write_text(json.dumps(doc))
    return folder / "x.traj.json"


@pytest.mark.parametrize("how", ["absolute", "dotdot", "linked-logs"])
def test_an_instance_id_reads_no_host_report(tmp_path, host, how):
    run = tmp_path / "run"
    instance = {"absolute": str(host.root / "inst"), "dotdot": "../../host/inst",
                "linked-logs": "inst"}[how]  # fmt: skip
    path = _mini(run / "trajs", instance)
    if how == "linked-logs":
        os.symlink(host.root, run / "logs")
    elif how == "dotdot":
        (run / "logs").mkdir()  # run/logs/../../host is the host dir
    (t,) = import_file(path)
    assert LEAK not in t.outcome.model_dump_json() if t.outcome else ""
    assert t.outcome is None or t.outcome.resolved is None, t.outcome
    assert host.untouched(), host.changes()


def test_an_honest_report_beside_the_run_is_still_read(tmp_path):
    run = tmp_path / "run"
    path = _mini(run / "trajs", "astropy__astropy-1")
    (run / "logs" / "astropy__astropy-1").mkdir(parents=True)
    report = {"astropy__astropy-1": {"resolved": False,
                                     "tests_status": {"P2P": {"success": ["t1"], "failure": ["t2"]}}}}  # fmt: skip
    (run / "logs" / "astropy__astropy-1" / "report.json").write_text(json.dumps(report))
    (t,) = import_file(path)
    assert t.outcome.resolved is False and t.outcome.tests == {"t1": "PASSED", "t2": "FAILED"}


def test_a_file_link_in_an_imported_folder_reads_no_host_file(tmp_path, host):
    """``agentpost import DIR`` walks the folder for scaffold logs. On main the walk kept every
    name that ``is_file()`` (which follows a link): a co-writer of a shared runs folder who
    planted ``trial/trajectory.json -> a host file`` had that host file read and imported into
    the output. Now the folder is walked by descent (``ingress.hostdir.walk``): a link is
    named in a warning and never read; the honest file beside it is imported."""
    import subprocess
    import sys

    runs = tmp_path / "runs"
    _atif(runs / "mine", "")
    doc = json.loads((runs / "mine" / "trajectory.json").read_text())
    doc.pop("continued_trajectory_ref")
    (runs / "mine" / "trajectory.json").write_text(json.dumps(doc))
    (runs / "theirs").mkdir()
    os.symlink(host.root / "secret.json", runs / "theirs" / "trajectory.json")
    out = tmp_path / "out.jsonl"
    res = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()", "import",
                          str(runs), "-o", str(out)], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert host.untouched(), host.changes()
    assert res.returncode == 0, res.stderr[-2000:]
    assert out.read_text().count("\n") == 1 and LEAK not in out.read_text()
    assert "theirs/trajectory.json" in res.stderr and "link" in res.stderr, res.stderr[-2000:]
