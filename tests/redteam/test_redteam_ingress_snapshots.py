"""Red team, issue 26 part A: a shared run folder may not write, change or read a host file,
and may not choose the state a case is graded on.

A real rollout is recorded with ``--snapshots`` (explore, a wrong candidate, the oracle,
submit); each attack then edits a copy of its run folder, as someone sharing it could: forged
archives (with the run's manifest forged to match), a reference moved to another call's archive
with its true hash. The consumers are the real ones: ``diagnose``'s candidate state
(``candidate_result``) and ``scvd collect``'s (``snapshot_or_replay_state``). On main each attack
rewrote or created a host file, or had the wrong state graded; canaries sit outside the run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.agent.loop import AgentLoop, LoopConfig
from agentpost.agent.policies import write_and_run
from agentpost.agent.scripted import ScriptedModel
from agentpost.replay.state import candidate_result
from agentpost.sandbox.registry import get_backend
from agentpost.scvd.distill.sources import snapshot_or_replay_state
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.io import read_jsonl, write_jsonl

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
TASK = load_task(bundled_suite_path() / "csv-to-json")
ESCAPED = ("infra_error", "timeout", "evaluator_invalid", "aborted")
WRONG, RIGHT = (1, 0), (2, 0)  # (step, call) of the wrong candidate and of the oracle


def _bash(cmd: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]}


def _record(run: Path, extra: str | None = None, spec=None) -> Path:
    replies = [_bash("ls -la"), _bash(write_and_run(TASK.wrong_solutions[0], "w")),
               _bash(write_and_run(TASK.solution_script, "s"))]  # fmt: skip
    if extra:
        replies.append(_bash(extra))
    replies.append({"tool_calls": [{"name": "submit", "arguments": {}}]})
    cfg = LoopConfig(snapshot_dir=str(run / "snapshots"))
    with BACKEND.create(spec or spec_for(TASK)) as box:
        prepare(TASK, box)
        traj = AgentLoop(ScriptedModel(replies), box, cfg).run(
            TASK.instruction, workdir=TASK.workdir, task_id=TASK.id, traj_id="redteam::1"
        )
        res = evaluate(TASK, box)
    traj.outcome.resolved, traj.outcome.reward = res.resolved, res.reward
    write_jsonl(run / "trajectories.jsonl", [traj])
    return run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    return _record(tmp_path_factory.mktemp("run"))


def _copy(recorded: Path, tmp: Path) -> Path:
    run = tmp / "run"
    shutil.copytree(recorded, run)
    return run


def _ref(traj, step: int) -> dict:
    return next(t for t in traj.turns if t.index == step).extra["snapshots"][0]


def _point(run: Path, step: int, ref: dict, forge_manifest: bool) -> object:
    """Make the trajectory's reference at ``step`` be ``ref``; with ``forge_manifest``, make the
    run's manifest agree (a writer of the whole folder)."""
    traj = read_jsonl(run / "trajectories.jsonl")[0]
    next(t for t in traj.turns if t.index == step).extra["snapshots"] = [{**ref, "call": 0}]
    write_jsonl(run / "trajectories.jsonl", [traj])
    if forge_manifest:
        for m in (run / "snapshots" / "manifest").glob("*.jsonl"):
            lines = [json.loads(x) for x in m.read_text().splitlines()]
            for rec in lines:
                if rec["step"] == step:
                    rec["sha256"] = ref["sha256"]
            m.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return traj


def _plant(run: Path, tar: Path, step: int) -> object:
    data = tar.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (run / "snapshots" / f"{digest[:32]}.tar").write_bytes(data)
    ref = {"path": f"snapshots/{digest[:32]}.tar", "sha256": digest, "bytes": len(data)}
    return _point(run, step, ref, forge_manifest=True)


def _add(tar, name, *, kind="file", target=None, data=b""):
    ti = tarfile.TarInfo(name)
    if kind == "dir":
        ti.type, ti.mode = tarfile.DIRTYPE, 0o777
    elif kind == "sym":
        ti.type, ti.linkname = tarfile.SYMTYPE, target
    elif kind == "hard":
        ti.type, ti.linkname = tarfile.LNKTYPE, target
    else:
        ti.size = len(data)
    tar.addfile(ti, io.BytesIO(data) if kind == "file" else None)


def _symlink_hardlink(path: Path, host: Path) -> Path:
    with tarfile.open(path, "w") as tar:
        _add(tar, "app", kind="dir")
        _add(tar, "app/l", kind="sym", target=str(host))
        _add(tar, "app/h", kind="hard", target="app/l/canary.txt")
        _add(tar, "app/h", data=b"pwned by a run folder\n")
    return path


def _cve_2025_4517(path: Path, host: Path) -> Path:
    """The published shape: short symlinks to long dir names, so ``os.path.realpath`` gives up
    past PATH_MAX and judges lexically, while the kernel follows the links out."""
    steps, comp = (
        "abcdefghijklmnop",
        "d" * 245,
    )  # 16 x 246 + a short tmp dir: under PATH_MAX; + 255 over it
    with tarfile.open(path, "w") as tar:
        _add(tar, "app", kind="dir")
        at = "app"
        for s in steps:
            _add(tar, f"{at}/{comp}", kind="dir")
            _add(tar, f"{at}/{s}", kind="sym", target=comp)
            at = f"{at}/{comp}"
        link = "/".join(steps) + "/" + "l" * 254
        _add(tar, f"app/{link}", kind="sym", target="/".join([".."] * 40))
        _add(tar, "app/escape", kind="sym", target=link + str(host))
        _add(tar, "app/escape/created.txt", data=b"created by a run folder\n")
        _add(tar, "app/h", kind="hard", target="app/escape/canary.txt")
        _add(tar, "app/h", data=b"pwned by a run folder\n")
    return path


def _top_level_link(path: Path, host: Path) -> Path:
    """A sandbox dir itself (``app``) as a link to a host dir: the unpacked tree is then copied
    into the sandbox by path, which reads (follows) the host dir."""
    with tarfile.open(path, "w") as tar:
        _add(tar, "app", kind="sym", target=str(host))
    return path


def _logs_link(path: Path, host: Path) -> Path:
    """``logs`` as a link to the host dir above ``host`` (named ``verifier``): the verifier's
    part of the unpacked tree is removed by path before grading, which removed the host dir."""
    with tarfile.open(path, "w") as tar:
        _add(tar, "app", kind="dir")
        _add(tar, "logs", kind="sym", target=str(host.parent))
    return path


def _consume(consumer: str, traj, run: Path, upto: tuple[int, int]) -> dict:
    if consumer == "diagnose":
        return candidate_result(traj, TASK, upto, BACKEND, run)
    from agentpost.scvd.distill.collect import CollectOptions

    opts = CollectOptions(progress=False, concurrency=1, snapshot_roots={traj.id: str(run)})
    with BACKEND.create(spec_for(TASK)) as sb:
        prepare(TASK, sb)
        state = snapshot_or_replay_state(traj, TASK, upto, sb, opts)
        res = evaluate(TASK, sb)
    return {"status": state.status, "source": state.source, "resolved": res.resolved}


@pytest.mark.parametrize("consumer", ["diagnose", "collect"])
@pytest.mark.parametrize(
    "make", [_symlink_hardlink, _cve_2025_4517], ids=["symlink+hardlink", "cve-2025-4517"]
)
def test_a_forged_archive_writes_nothing_on_the_host(recorded, tmp_path, consumer, make):
    canaries = HostCanaries(tmp_path / "host")
    run = _copy(recorded, tmp_path)
    traj = _plant(run, make(tmp_path / "forged.tar", canaries.root), WRONG[0])
    found = _consume(consumer, traj, run, WRONG)
    assert canaries.untouched(), canaries.changes()
    assert found["status"] not in ESCAPED and found["source"] == "replay", found
    assert found["resolved"] is False  # the replayed state: the wrong candidate


@pytest.mark.parametrize("consumer", ["diagnose", "collect"])
@pytest.mark.parametrize("make", [_top_level_link, _logs_link], ids=["app-link", "logs-link"])
def test_a_forged_archive_whose_sandbox_dir_is_a_link_reads_and_removes_nothing(
    recorded, tmp_path, consumer, make
):
    canaries = HostCanaries(tmp_path / "host" / "verifier")
    run = _copy(recorded, tmp_path)
    traj = _plant(run, make(tmp_path / "forged.tar", canaries.root), WRONG[0])
    found = _consume(consumer, traj, run, WRONG)
    assert canaries.root.is_dir() and canaries.untouched(), canaries.changes()
    assert found["status"] not in ESCAPED and found["source"] == "replay", found
    assert found["resolved"] is False


@pytest.mark.parametrize("consumer", ["diagnose", "collect"])
def test_a_reference_to_another_calls_archive_is_not_believed(recorded, tmp_path, consumer):
    run = _copy(recorded, tmp_path)
    traj0 = read_jsonl(run / "trajectories.jsonl")[0]
    traj = _point(run, WRONG[0], _ref(traj0, RIGHT[0]), forge_manifest=False)  # its true hash
    found = _consume(consumer, traj, run, WRONG)
    assert found["source"] == "replay" and found["resolved"] is False, found
    if consumer == "diagnose":
        assert "manifest" in found["snapshot_untrusted"]


def test_a_snapshot_its_replay_contradicts_is_used_for_neither_side(recorded, tmp_path):
    run = _copy(recorded, tmp_path)
    traj0 = read_jsonl(run / "trajectories.jsonl")[0]
    traj = _point(run, WRONG[0], _ref(traj0, RIGHT[0]), forge_manifest=True)
    found = candidate_result(traj, TASK, WRONG, BACKEND, run)
    assert found["status"] == "state_conflict" and found.get("resolved") is None, found
    check = found["fidelity_check"]
    assert check["y_c_agree"] is False and check["replay_resolved"] is False


def test_a_sparse_file_makes_no_big_archive_and_the_rollout_is_graded(tmp_path):
    spec = spec_for(TASK)
    spec = dataclasses.replace(spec, limits=dataclasses.replace(spec.limits, disk_bytes=64 << 20))
    run = _record(
        tmp_path / "run", extra="truncate -s 300M /app/sparse.bin && ls -ls /app", spec=spec
    )
    stored = sum(p.stat().st_size for p in (run / "snapshots").rglob("*") if p.is_file())
    assert stored < 64 << 20, stored
    traj = read_jsonl(run / "trajectories.jsonl")[0]
    last = next(t for t in traj.turns if t.index == 3).extra["snapshots"][0]
    assert "refused" in last and "path" not in last
    assert traj.outcome.resolved is True  # graded as it is
    found = candidate_result(traj, TASK, (3, 0), BACKEND, run)
    assert found["source"] == "replay" and found["status"] not in ESCAPED
    assert "not archived" in found["snapshot_untrusted"]


def test_a_sparse_member_in_a_forged_archive_is_bounded(recorded, tmp_path):
    if not shutil.which("tar"):
        pytest.skip("GNU tar not available to build a sparse archive")
    src = tmp_path / "src" / "app"
    src.mkdir(parents=True)
    with open(src / "big", "wb") as f:
        f.truncate(2 << 30)  # 2 GiB of holes, over the sandbox's 1 GiB bound
    tar = tmp_path / "sparse.tar"
    subprocess.run(
        ["tar", "--sparse", "-cf", str(tar), "-C", str(tmp_path / "src"), "app"], check=True
    )
    run = _copy(recorded, tmp_path)
    traj = _plant(run, tar, WRONG[0])
    found = candidate_result(traj, TASK, WRONG, BACKEND, run)
    assert found["source"] == "replay" and found["status"] not in ESCAPED, found
    assert "bytes" in found["snapshot_untrusted"]


def test_a_planted_snapshots_link_in_a_shared_run_folder_is_not_written_through(tmp_path):
    from agentpost.ingress.keys import LinkRefused

    canaries = HostCanaries(tmp_path / "host")
    run = tmp_path / "run"
    run.mkdir()
    (run / "snapshots").symlink_to(canaries.root)  # planted before `run --snapshots` resumes
    with pytest.raises(LinkRefused):
        _record(run)
    assert canaries.untouched(), canaries.changes()
