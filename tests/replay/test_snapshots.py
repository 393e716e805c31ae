"""Snapshot mode end to end: diagnose grades the recorded state at the boundary, not a replay.

The rollout's candidate command depends on something no snapshot holds: it writes the oracle
solution when a marker is in the sandbox's private /tmp (put there before the recording, as a
clock, a random seed or a background process would differ), the wrong one otherwise. The
recorded run is correct; a replay, in a fresh sandbox without the marker, rebuilds the wrong
state (no clock involved, so a busy machine cannot turn the recording wrong). Diagnose must report the disagreement and use neither state for y_c (``state_conflict``,
issue 26); with the fidelity check off, y_c comes from the snapshot alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentpost.agent.loop import AgentLoop, LoopConfig
from agentpost.agent.policies import write_and_run
from agentpost.agent.scripted import ScriptedModel
from agentpost.judges.config import DEFAULT_CONFIG, build_panel
from agentpost.replay.state import candidate_result
from agentpost.sandbox import snapshot_store
from agentpost.sandbox.registry import get_backend
from agentpost.scvd.pipeline import DiagnoseOptions, diagnose
from agentpost.tasks.evaluate import evaluate, prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.io import read_jsonl, write_jsonl
from agentpost.trajectory.model import Outcome

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")
TASK = load_task(bundled_suite_path() / "csv-to-json")


def _bash(cmd: str) -> dict:
    return {"name": "bash", "arguments": {"command": cmd}}


MARKER = "/tmp/.recording-only"  # private /tmp: never part of a snapshot


def _record(run_dir: Path) -> Path:
    """A rollout with snapshots: explore, the marker-gated candidate, the check, submit."""
    oracle = write_and_run(TASK.solution_script, "s")
    wrong = write_and_run(TASK.wrong_solutions[0], "w")
    gated = f"if [ -e {MARKER} ]; then\n{oracle}\nelse\n{wrong}\nfi"
    replies = [
        {"content": "Let me look first.", "tool_calls": [_bash("ls -la")]},
        {"content": "Writing the converter.", "tool_calls": [_bash(gated)]},
        {"content": "Checking the output.", "tool_calls": [_bash(TASK.check)]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]},
    ]
    cfg = LoopConfig(snapshot_dir=str(run_dir / "snapshots"))
    with BACKEND.create(spec_for(TASK)) as box:
        prepare(TASK, box)
        box.put(MARKER, b"1")
        traj = AgentLoop(ScriptedModel(replies), box, cfg).run(
            TASK.instruction, workdir=TASK.workdir, task_id=TASK.id, traj_id="snap::1"
        )
        res = evaluate(TASK, box)
    traj.outcome = Outcome(resolved=res.resolved, reward=res.reward, evaluator="test")
    path = run_dir / "trajectories.jsonl"
    write_jsonl(path, [traj])
    return path


def _diagnose(path: Path, out: Path, fidelity: bool = True) -> tuple[dict, dict]:
    trajs = read_jsonl(path)
    roots = {t.id: str(path.resolve().parent) for t in trajs}
    opts = DiagnoseOptions(
        n_boot=0, progress=False, snapshot_roots=roots, snapshot_fidelity=fidelity
    )
    doc = diagnose(trajs, [TASK], build_panel(DEFAULT_CONFIG), out, opts)
    line = read_lines(out / "records.jsonl")[0]
    return doc, line


def read_lines(path: Path) -> list[dict]:
    import orjson

    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    return _record(tmp_path_factory.mktemp("run"))


def test_references_are_relative_content_addressed_and_deduplicated(recorded):
    traj = read_jsonl(recorded)[0]
    refs = [r for t in traj.turns for r in t.extra.get("snapshots", [])]
    assert len(refs) == 3 and all(not Path(r["path"]).is_absolute() for r in refs)
    assert all(r["path"].startswith("snapshots/") and len(r["sha256"]) == 64 for r in refs)
    # the check reads files and writes none: its archive is the candidate's, stored once
    assert refs[1]["sha256"] == refs[2]["sha256"]
    stored = list((recorded.parent / "snapshots").glob("*.tar"))
    assert len(stored) == len({r["sha256"] for r in refs}) < len(refs)
    assert traj.outcome.resolved is True


def test_a_snapshot_its_replay_contradicts_gives_no_y_c_and_says_so(recorded, tmp_path):
    doc, line = _diagnose(recorded, tmp_path / "diag")
    assert line["decision"]["candidate_formed"] and line["decision"]["verification_triggered"]
    assert line["replay"]["source"] == "snapshot" and line["replay"]["status"] == "state_conflict"
    assert line["y_c_source"] is None and line["record"]["y_c"] is None  # neither side is used
    # the boundary was decided from what the call changed between its snapshot and the one before
    assert line["boundary_evidence"]["evidence"] == "state-diff", line["boundary_evidence"]
    assert line["judge_kinds"] == {
        j: "rule" for j in ("rules-changes", "rules-commands", "rules-narration")
    }
    check = line["replay"]["fidelity_check"]
    assert check["replay_status"] == "ok" and check["replay_resolved"] is False
    assert check["y_c_agree"] is False and check["files_agree"] is False
    assert any(name.endswith("people.json") for name in check["files_differing"])
    fid = doc["replay"]["snapshot_fidelity"]
    assert fid["y_c_compared"] == 1 and fid["y_c_agree"] == 0
    summary = (tmp_path / "diag" / "summary.md").read_text()
    assert "1 from recorded snapshots" in summary and "y_c agrees in 0/1" in summary
    assert "state_conflict" in summary


def test_without_the_fidelity_check_y_c_comes_from_the_snapshot(recorded, tmp_path):
    _, line = _diagnose(recorded, tmp_path / "diag", fidelity=False)
    assert line["y_c_source"] == "snapshot" and line["replay"]["source"] == "snapshot"
    assert line["record"]["y_c"] == 1  # the recorded state was correct; the replay drifts


def test_a_copied_run_folder_still_diagnoses_from_its_snapshots(recorded, tmp_path):
    moved = tmp_path / "elsewhere" / "run"
    shutil.copytree(recorded.parent, moved)
    hidden = recorded.parent.with_name(recorded.parent.name + "-gone")
    recorded.parent.rename(hidden)  # the original folder is no longer there
    try:
        _, line = _diagnose(moved / "trajectories.jsonl", tmp_path / "diag", fidelity=False)
    finally:
        hidden.rename(recorded.parent)
    assert line["y_c_source"] == "snapshot" and line["record"]["y_c"] == 1


def test_a_tampered_archive_is_not_graded_and_the_case_is_replayed(recorded, tmp_path):
    moved = tmp_path / "run"
    shutil.copytree(recorded.parent, moved)
    for tar in (moved / "snapshots").glob("*.tar"):
        tar.write_bytes(tar.read_bytes() + b"\0" * 512)  # content no longer matches its hash
    traj = read_jsonl(moved / "trajectories.jsonl")[0]
    found = candidate_result(traj, TASK, (1, 0), BACKEND, moved)
    assert found["source"] == "replay" and "does not match its hash" in found["snapshot_untrusted"]
    assert found["status"] == "ok" and found["resolved"] is False  # the replay: no marker


def test_references_without_the_runs_manifest_are_never_opened(recorded, tmp_path):
    run = tmp_path / "run"
    (run / "snapshots").mkdir(parents=True)
    tar = run / "snapshots" / "a_b-t1-c0.tar"
    tar.write_bytes(b"x")
    digest = snapshot_store.sha256_file(tar)
    assert snapshot_store.ref_call(str(tar)) == 0
    for ref in (
        str(tar),
        "/nonexistent/old-host/snapshots/a_b-t1-c0.tar",  # before manifests
        {"path": "snapshots/a_b-t1-c0.tar", "sha256": digest, "call": 0},  # not listed
        {"path": str(tar), "sha256": digest, "call": 0},
        {"path": "snapshots/../snapshots/a_b-t1-c0.tar", "sha256": digest, "call": 0},
    ):
        with snapshot_store.trusted(ref, run, "a/b", (1, 0)) as found:
            assert found.path is None and found.why, ref
    traj = read_jsonl(recorded)[0]
    ref = traj.turns[1].extra["snapshots"][0]
    with snapshot_store.trusted(ref, recorded.parent, traj.id, (1, 0)) as found:
        assert (
            found.path is not None
            and found.path.read_bytes() == (recorded.parent / ref["path"]).read_bytes()
        )
        assert not found.path.is_relative_to(recorded.parent)  # a private copy
    assert not found.path.exists()
    with snapshot_store.trusted(ref, recorded.parent, traj.id, (0, 0)) as found:  # another call
        assert found.path is None and "manifest" in found.why


def test_scvd_collect_hands_off_from_the_recorded_snapshot(recorded, tmp_path):
    from agentpost.scvd.distill.collect import CollectOptions, collect, replay_state
    from agentpost.scvd.distill.sources import snapshot_or_replay_state
    from agentpost.scvd.distill.teacher import make_teacher
    from agentpost.store import Store

    traj = read_jsonl(recorded)[0]
    opts = CollectOptions(progress=False, concurrency=1,
                          snapshot_roots={traj.id: str(recorded.parent)})  # fmt: skip
    runs = {}
    for name, source in (("snapshot", snapshot_or_replay_state), ("replay", replay_state)):
        teacher = make_teacher("scripted", "verify-repair")
        store = Store(tmp_path / f"{name}.sqlite")
        try:
            runs[name] = collect([traj], [TASK], build_panel(DEFAULT_CONFIG), teacher, store, opts,
                                 source=source)[0]  # fmt: skip
        finally:
            store.close()
    snap, rep = runs["snapshot"], runs["replay"]
    assert snap["status"] == "kept" and snap["state_source"] == "snapshot"
    assert rep["state_source"] == "replay"
    # the recorded state was right: the teacher's check passes at once; the drifted replay state
    # is the wrong candidate, which the teacher has to repair first
    assert snap["teacher_turns"] < rep["teacher_turns"]
