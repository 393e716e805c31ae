"""Issue 28: what an import could read is said, per format and per file, and ``stats`` never
shows a partial sum as a total or a missing label as "0 resolved"."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from agentpost.trajectory.coverage import coverage, shortfalls
from agentpost.trajectory.importing import import_file, iter_files
from agentpost.trajectory.model import Observation, Trajectory

SYN = Path(__file__).resolve().parents[1] / "data" / "synthetic"
BIN = Path(sys.executable).with_name("agentpost")
CLAUDE_10 = next((SYN / "claude-code/-tmp-stats").glob("*.jsonl"))
CODEX_104 = next((SYN / "codex/sessions/2025/11/12").glob("rollout-*.jsonl"))


def run(*args):
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)


def test_coverage_counts_and_shortfalls():
    (t,) = import_file(CODEX_104)
    n = coverage(t)
    assert (n["turns"], n["usage"], n["calls"], n["arguments"]) == (4, 4, 3, 3)
    assert (n["answered"], n["observations"], n["text"]) == (3, 3, 3)
    assert (n["shell"], n["exit_codes"], n["orphans"]) == (2, 2, 0)
    assert shortfalls(t, n) == []
    # the same file with a result lost, an exit code lost and a stray result
    data = t.model_dump()
    tr = Trajectory.model_validate(data)
    tr.turns[0].observations = []
    tr.turns[2].observations[0].exit_code = None
    tr.turns[1].observations.append(Observation(call_id="nobody", text="x"))
    n = coverage(tr)
    assert shortfalls(tr, n) == [
        "observations: 1 of 3 tool calls have no result",
        "observations: 1 results answer no tool call of this trajectory",
        "exit_codes: 1 of 1 shell results have no exit code",
    ]


def test_a_layout_that_promises_nothing_is_never_warned():
    (t,) = import_file(CODEX_104)
    t.metadata["import"] = {"layout": "someone-else/custom"}
    t.turns[0].observations = []
    assert shortfalls(t, coverage(t)) == []


def test_import_prints_coverage_per_format_and_warnings_naming_file_and_field(tmp_path):
    outs = tmp_path / "outs"
    outs.mkdir()
    tmp_path = tmp_path / "in"
    tmp_path.mkdir()
    shutil.copy(CLAUDE_10, tmp_path / "s.jsonl")
    lines = [json.loads(x) for x in CODEX_104.read_text().splitlines()]
    lines = [x for x in lines if x["payload"].get("call_id") != "call_A3" or "name" in x["payload"]]
    (tmp_path / "rollout-cut.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = run("import", tmp_path, "-o", outs / "out.jsonl")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = r.stdout.splitlines()
    cov = {x.split(" ")[1]: x for x in out if x.startswith("coverage ")}
    assert set(cov) == {"claude-code", "codex"}
    assert "calls with a result 2/3" in cov["codex"] and "turns with usage 4/4" in cov["codex"]
    assert "(1 files)" in cov["codex"] and "outcome 0/1" in cov["codex"]
    warned = [x for x in out if x.startswith("warning: ")]
    assert f"warning: {tmp_path / 'rollout-cut.jsonl'}: observations: 1 of 3 tool calls have" in (
        "\n".join(warned)
    )
    assert any(
        x.startswith(f"warning: {tmp_path / 's.jsonl'}: usage: the token sums cover only some")
        and x.endswith("(in 3 trajectories)")
        for x in warned
    )
    doc = json.loads(run("import", tmp_path, "-o", outs / "o2.jsonl", "--json").stdout)
    assert doc["coverage"]["codex"]["answered"] == 2 and len(doc["warnings"]) == 4


def test_dot_folders_are_imported_unless_skipped(tmp_path):
    store = tmp_path / "home" / ".claude" / "projects" / "-tmp-stats"
    store.mkdir(parents=True)
    shutil.copy(CLAUDE_10, store / CLAUDE_10.name)
    assert iter_files([tmp_path / "home"]) == [store / CLAUDE_10.name]
    assert iter_files([tmp_path / "home"], skip_hidden=True) == []
    r = run("import", tmp_path / "home", "-o", tmp_path / "out.jsonl")
    assert r.returncode == 0 and "imported 3 trajectories from 1 files" in r.stdout
    r = run("import", tmp_path / "home", "-o", tmp_path / "out2.jsonl", "--skip-hidden")
    assert r.returncode != 0 and "no trajectory files here" in r.stderr


def test_stats_marks_partial_sums_and_says_no_labels(tmp_path):
    out = tmp_path / "out.jsonl"
    assert run("import", CLAUDE_10, "-o", out).returncode == 0
    doc = json.loads(run("stats", out, "--json").stdout)
    assert [r["partial"] for r in doc["trajectories"]] == [["output_tokens"]] * 3
    assert doc["totals"]["partial"] == ["output_tokens"]
    assert (doc["totals"]["resolved"], doc["totals"]["labelled"]) == (None, 0)
    table = run("stats", out).stdout
    assert "≥180" in table and "≥256" in table and "no labels" in table and " 0 true" not in table
