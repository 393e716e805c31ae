"""Red team, issue 26 part A: what a policy or a trajectory writes may not reach the host.

The security rollout environment (``security rl`` / ``hg``, and ``security route``'s probe
rollouts with an endpoint) reads the candidate's final ``/app`` out of its sandbox and writes it
to a host dir for grading; ``security annotate`` does the same with a trajectory's
``metadata.final_files``. Each attack below worked on main (a host file written as root, or an
honest rollout ``aborted``); the canaries sit outside every dir a run may touch.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.agent.scripted import ScriptedModel
from agentpost.security.probe import rollout_reward
from agentpost.security.suite import load_suite
from agentpost.train.securevibe_rl import SecurityTaskEnv

TASKS = {t.id: t for t in load_suite()}
ESCAPED = ("infra_error", "timeout", "evaluator_invalid", "aborted")


def _write(path: str, data: bytes) -> str:
    quoted = "'" + path.replace("'", "'\\''") + "'"
    return (f"mkdir -p \"$(dirname {quoted})\" && "
            f"printf %s {base64.b64encode(data).decode()} | base64 -d > {quoted}")  # fmt: skip


def _newline_attack(host_dir: Path) -> list[str]:
    """``find /app -type f`` prints ``/app/q\\n/root/<host dir>/pwned``: split on whitespace,
    the second token is a readable file in the sandbox's home whose key, cut after ``/app/``,
    is the absolute host path ``<host dir>/pwned``."""
    inside = "root" + str(host_dir)
    return [f"mkdir -p \"/app/q\"$'\\n'\"/{inside}\" && echo decoy > \"/app/q\"$'\\n'\"/{inside}/pwned\"",
            f"mkdir -p /{inside} && echo PWNED-BY-NEWLINE > /{inside}/pwned"]  # fmt: skip


def _run(path: str, task, actions: list[str], backend):
    """One rollout of ``actions`` through the RL env (``env``) or the probe's agent loop
    (``probe``, what ``security route --endpoint`` runs) → (status, func, sec, reward)."""
    if path == "env":
        env = SecurityTaskEnv(task, backend=backend, timeout_s=30)
        try:
            for a in actions:
                env.step(a)
            env.resolved()
        finally:
            env.close()
        g = env.grade
        return g.status, g.func, g.sec, g.reward
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": a}}]} for a in actions]
    replies.append({"tool_calls": [{"name": "submit", "arguments": {}}]})
    res = rollout_reward(task, ScriptedModel(replies, estimate_usage=False), backend)
    return res["status"], None, None, res["reward"]


@pytest.mark.parametrize("path", ["env", "probe"])
def test_a_newline_in_a_dir_name_writes_no_host_file(backend, tmp_path, path):
    canaries = HostCanaries(tmp_path / "host")
    status, _, _, _ = _run(path, TASKS["calculator"], _newline_attack(canaries.root), backend)
    assert not (canaries.root / "pwned").exists()
    assert canaries.untouched(), canaries.changes()
    assert status not in ESCAPED


ODD_NAMES = {"notes/my plan.md": b"plan\n", "r\u00e9sum\u00e9 \u2603.txt": b"unicode\n",
             "line\nbreak.txt": b"newline\n", " lead and trail ": b"spaces\n"}  # fmt: skip


@pytest.mark.parametrize("path", ["env", "probe"])
def test_an_honest_rollout_with_odd_file_names_is_graded_as_it_is(backend, path):
    task = TASKS["calculator"]
    ref = task.references["secure"]
    actions = [
        _write(f"/app/{p.relative_to(ref)}", p.read_bytes())
        for p in sorted(ref.rglob("*"))
        if p.is_file()
    ]
    actions += [_write(f"/app/{name}", data) for name, data in ODD_NAMES.items()]
    status, func, sec, reward = _run(path, task, actions, backend)
    assert (status, reward) == ("ok", 1.0)
    if path == "env":
        assert (func, sec) == (True, True)


def _trajectory(files: dict[str, str]) -> dict:
    return {"format": "agentpost.trajectory/1", "id": "forged-1", "task_id": "calculator",
            "producer": {"name": "redteam", "version": "0"}, "turns": [],
            "metadata": {"final_files": files}}  # fmt: skip


@pytest.mark.parametrize("kind", ["absolute", "dotdot"])
def test_a_final_files_key_naming_a_host_path_is_refused_before_anything_runs(tmp_path, kind):
    canaries = HostCanaries(tmp_path / "host")
    run = tmp_path / "run" / "deep"
    run.mkdir(parents=True)
    target = canaries.root / "pwned.py"
    key = str(target) if kind == "absolute" else "../../host/pwned.py"  # from $TMPDIR/<its dir>
    (tmp_path / "tmp").mkdir()
    calc = (TASKS["calculator"].references["secure"] / "calc.py").read_text()
    traj = run / "trajs.jsonl"
    traj.write_text(json.dumps(_trajectory({"calc.py": calc, key: "PWNED"})) + "\n")
    res = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()", "security", "annotate", str(traj),
                          "-o", str(run / "labels.jsonl")], capture_output=True, text=True,
                         cwd=run, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})  # fmt: skip
    assert not target.exists() and canaries.untouched(), canaries.changes()
    assert res.returncode != 0
    err = res.stderr.strip().splitlines()
    assert (
        len(err) == 1 and str(traj) in err[0] and "record 1" in err[0] and "final_files" in err[0]
    )
    assert not (run / "labels.jsonl").exists()


@pytest.mark.parametrize("path", ["env", "probe"])
def test_a_sparse_file_in_app_is_the_candidates_result_not_a_host_load(backend, path):
    """A 100 MB hole costs the sandbox nothing; main read it whole into the trainer's memory
    and wrote it to a host dir. Now the listing's apparent sizes are checked before any read:
    the candidate is ``unusable`` (its own state), never ``aborted``."""
    task = TASKS["calculator"]
    ref = task.references["secure"]
    actions = [
        _write(f"/app/{p.relative_to(ref)}", p.read_bytes())
        for p in sorted(ref.rglob("*"))
        if p.is_file()
    ]
    actions.append("truncate -s 100M /app/blob.bin")
    status, _, _, reward = _run(path, task, actions, backend)
    assert (status, reward) == ("unusable", -0.75)
