"""Red team, issue 26 (round three): writing into a shared run folder never follows what someone
planted there (docs/threat-model.md, "Run folders (writes)").

``agentpost run -o RUN`` resumes into a folder another local user can write. On main each of its
outputs followed a planted link: the lock file (``.agentpost.lock``) was opened through it and
truncated (the canary emptied), the resumed ``trajectories.jsonl`` was read through it (and a
torn last line cut off: ``truncate`` on the host file), ``run.json`` was written through it (the
canary replaced). The result store (``store.Store``: ``diagnose``, ``scvd collect``, ``replay``)
opened ``store.sqlite`` through a link and wrote its tables into another SQLite file. Now each
is refused with an ``InputError`` naming the file, and what was done stays done.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InputError
from agentpost.sandbox.registry import get_backend
from agentpost.store import Store

CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
RUN = ["run", "--policy", "careful", "--task", "csv-to-json", "--workers", "1"]
bwrap = pytest.mark.skipif(not get_backend("bwrap").available(), reason="bubblewrap unavailable")


def _run(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *RUN, "-o", str(out)], capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@bwrap
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", [".agentpost.lock", "trajectories.jsonl", "run.json"])
def test_a_link_planted_in_a_run_folder_is_not_followed_by_run(tmp_path: Path, name: str):
    canaries = HostCanaries(tmp_path / "host")
    run = tmp_path / "shared" / "run"
    run.mkdir(parents=True)
    os.symlink(canaries.root / "canary.txt", run / name)
    proc = _run(run)
    assert canaries.untouched(), canaries.changes()
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert name in proc.stderr and "symbolic link" in proc.stderr, proc.stderr[-2000:]
    assert (run / name).is_symlink()  # the link itself is left for its owner to see
    if name == "run.json":  # refused at the end: the rollout it ran is kept
        assert (run / "trajectories.jsonl").read_text().count("\n") == 1


def _canary_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE mine (x)")
    con.commit()
    con.close()
    os.utime(path, (0, 0))


def test_the_store_refuses_a_planted_sqlite_link(tmp_path: Path):
    victim = tmp_path / "host" / "someone.sqlite"
    victim.parent.mkdir()
    _canary_db(victim)
    before = victim.read_bytes()
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(victim, run / "store.sqlite")
    with pytest.raises(InputError, match="store.sqlite.*symbolic link"):
        Store(run / "store.sqlite").put("scvd-ftd:x", {"a": 1})
    assert victim.read_bytes() == before and victim.stat().st_mtime == 0
    os.unlink(run / "store.sqlite")
    os.link(victim, run / "store.sqlite")  # a hard link to someone else's database: refused too
    with pytest.raises(InputError, match="hard link"):
        Store(run / "store.sqlite")
    assert victim.read_bytes() == before


def test_the_stores_journal_files_are_not_followed(tmp_path: Path):
    """SQLite opens its ``-wal``, ``-shm`` and ``-journal`` files with ``O_NOFOLLOW`` itself:
    a link planted under those names is not written through (here as a regression test)."""
    canaries = HostCanaries(tmp_path / "host")
    run = tmp_path / "run"
    run.mkdir()
    for suffix, target in (("-wal", "canary.txt"), ("-shm", "passwd"),
                           ("-journal", "dir/inner.txt")):  # fmt: skip
        os.symlink(canaries.root / target, run / f"store.sqlite{suffix}")
    try:
        store = Store(run / "store.sqlite")
        store.put("k:1", {"v": 1})
        assert store.get("k:1") == {"v": 1}
    except InputError:
        pass  # refused: as good
    assert canaries.untouched(), canaries.changes()


@pytest.mark.parametrize("how", ["file", "dir", "readme"])
def test_lab_tasks_writes_nothing_through_a_link_planted_in_its_folder(tmp_path: Path, how):
    """``agentpost lab tasks -o OUT`` (and the lab's ``tasks/`` stage) rewrite a family folder
    that may already exist. On main each task file was written by path (``Path.write_text``,
    then ``chmod``): ``OUT/train/<id>/tests/test.sh -> a host file`` overwrote that file and
    made it executable, a planted ``OUT/train -> a host dir`` got the tasks written into it."""
    from agentpost.lab.taskgen import FAMILIES, family_split
    from agentpost.lab.tasks import write_family

    canaries = HostCanaries(tmp_path / "host")
    out = tmp_path / "shared" / "tasks"
    tid = family_split(2, 1, 1, tuple(FAMILIES), True)["train"][0].id
    if how == "file":
        (out / "train" / tid / "tests").mkdir(parents=True)
        os.symlink(canaries.root / "passwd", out / "train" / tid / "tests" / "test.sh")
    elif how == "dir":
        out.mkdir(parents=True)
        os.symlink(canaries.root / "dir", out / "train")
    else:
        (out / "heldout").mkdir(parents=True)
        os.symlink(canaries.root / "canary.txt", out / "heldout" / "README.md")
    with pytest.raises(InputError, match="link"):
        write_family(out, 2, 1, 1, one_slot=True)
    assert canaries.untouched(), canaries.changes()


@pytest.mark.parametrize("name", ["corpus", "sft", "memo.sqlite"])
def test_a_lab_experiment_folder_with_a_planted_link_is_refused(tmp_path: Path, name):
    """``agentpost lab preflight|hero|scvd -o OUT`` resume in OUT, and their stages write data
    and checkpoints by path (JSONL, torch, transformers): on main a planted
    ``OUT/corpus -> a host dir`` received the corpus files. The experiment folder may hold no
    link below it: refused before any stage runs, naming the link."""
    from agentpost.lab.presets import hero_config
    from agentpost.lab.stages import student

    canaries = HostCanaries(tmp_path / "host")
    out = tmp_path / "shared" / "lab"
    out.mkdir(parents=True)
    target = canaries.root / ("canary.txt" if "." in name else "dir")
    os.symlink(target, out / name)
    with pytest.raises(InputError, match="link") as e:
        student(out, hero_config("smoke").policy, get_backend("bwrap"), progress=lambda m: None)
    assert str(out / name) in str(e.value)
    assert canaries.untouched(), canaries.changes()
