"""`stats` and `show` on bad canonical files, `import` output edge cases, and what `show` and
`stats` look like in a 100-column terminal. Runs the installed ``agentpost`` script, as a user
would: one error line naming file and place, a non-zero exit, never a traceback."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRAJECTORIES  # noqa: E402

DATA = TRAJECTORIES
BIN = Path(sys.executable).with_name("agentpost")
GEMINI = DATA / "gemini-cli" / "harbor-rfc-0001" / "gemini-cli-trajectory.json"
EVAL = DATA / "openhands" / "v0" / "evaluation" / "benchmarks" / "multi_swe_bench" / "examples"
ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}


def run(*args):
    return subprocess.run(
        [str(BIN), *map(str, args)], capture_output=True, text=True, env=ENV, timeout=120
    )


@pytest.fixture(scope="module")
def canonical(shared_data, tmp_path_factory):
    """The multi-SWE-bench eval output (3 long real trajectories) as canonical JSONL."""
    out = tmp_path_factory.mktemp("canon") / "eval.jsonl"
    r = run("import", EVAL / "output.jsonl", "-o", out)
    assert r.returncode == 0, r.stderr
    return out


def _bad_canonical(d: Path, good: Path) -> dict[str, tuple[Path, str]]:
    """case → (file, the place its one-line error must name)."""
    first = good.read_bytes().splitlines()[0]
    (d / "truncated.jsonl").write_bytes(first[:3000])
    (d / "empty.jsonl").write_bytes(b"")
    (d / "garbage.jsonl").write_bytes(b"\x00\x01\x02" * 50)
    doc = json.loads(first)
    del doc["turns"][2]["index"]
    (d / "noindex.jsonl").write_text(json.dumps(doc) + "\n")
    return {
        "missing": (d / "missing.jsonl", "cannot read"),
        "folder": (d, "cannot read"),
        "empty": (d / "empty.jsonl", "byte 0: no trajectories"),
        "truncated": (d / "truncated.jsonl", "line 1 column "),
        "garbage": (d / "garbage.jsonl", "line 1 column 1: binary data"),
        "missing field": (d / "noindex.jsonl", "line 1: $.turns[2].index: Field required"),
        "scaffold log": (EVAL / "output.jsonl", "line 1: $.id: Field required (not an agentpost"),
        "pretty-printed log": (
            GEMINI,
            "line 1 column 1: invalid JSON: unexpected end of data (a multi-line JSON document, "
            "not agentpost.trajectory/1 JSONL; convert logs with `agentpost import`)",
        ),
    }


@pytest.mark.parametrize("command", ["stats", "show"])
def test_bad_canonical_files_give_one_line_errors(shared_data, command, canonical, tmp_path):
    for case, (path, place) in _bad_canonical(tmp_path, canonical).items():
        r = run(command, path)
        assert r.returncode != 0, case
        assert "Traceback" not in r.stderr and r.stdout == "", case
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, (case, lines)
        assert lines[0].startswith(f"error: {path}: {place}"), (case, lines[0])


def test_output_inside_the_walked_folder_is_not_reimported(shared_data, tmp_path):
    shutil.copy(GEMINI, tmp_path / "g.json")
    for _ in range(2):
        r = run("import", tmp_path, "-o", tmp_path / "out.jsonl")
        assert r.returncode == 0 and "imported 1 trajectories from 1 files" in r.stdout
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "out.jsonl"]  # no temp left


def test_folder_without_candidate_files_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a trajectory")
    r = run("import", tmp_path, "-o", tmp_path / "out.jsonl")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"error: {tmp_path}: no trajectory files here (.json," in r.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_unwritable_output_is_one_line_error_and_leaves_nothing(shared_data, tmp_path):
    (tmp_path / "taken").mkdir()
    for out, why in ((tmp_path / "taken", "Is a directory"), (GEMINI / "x.jsonl", "File exists")):
        r = run("import", GEMINI, "-o", out)
        assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.strip() == f"error: {out}: cannot write: {why}"
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


def test_stats_json_totals_exact(canonical):
    doc = json.loads(run("stats", canonical, "--json").stdout)
    assert [r["turns"] for r in doc["trajectories"]] == [23, 34, 50]
    assert doc["totals"] == {
        "trajectories": 3,
        "turns": 107,
        "tool_calls": 105,
        "input_tokens": 565158 + 410169 + 938015,
        "cached_tokens": 0,
        "output_tokens": 2558 + 5156 + 5627,
        # failed calls (a reply with a bad tool call) have no usage: the sums are partial
        "partial": ["input_tokens", "cached_tokens", "output_tokens"],
        "labelled": 0,
        "resolved": None,  # inference output: nothing says resolved or not (not "0")
    }


def test_stats_table_fits_100_columns_with_whole_numbers(canonical):
    r = run("stats", canonical)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "ponylang__ponyc-4593" in r.stdout and "openhands-eval" in r.stdout
    assert any("1913342" in line and "total (3)" in line for line in lines)


def test_show_fits_100_columns_and_clips_long_output(canonical):
    r = run("show", canonical, "--id", "ponylang__ponyc-4593")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    text = r.stdout
    assert "resolved  –" in text and "turns     34 (33 tool calls)" in text
    assert "in 5549 · cached 0 · out 88 · reported" in text  # turn 0 usage in the border
    assert '{"command":"view","path":' in text  # arguments print as JSON, not a Python repr
    assert "{'command'" not in text
    assert "more lines]" in text  # the long cat -n output is clipped
    assert "◀ error Parameter 'command'" in text and "turn 12 ──" in text
    full = run("show", canonical, "--id", "ponylang__ponyc-4593", "--full")
    assert full.returncode == 0 and len(full.stdout.splitlines()) > len(lines)


def test_a_run_folder_imports_cleanly_and_skips_agentpost_outputs(tmp_path):
    """`agentpost import RUN_DIR`: agentpost's own trajectories count as format `agentpost`, and
    its other outputs (run.json, metrics, judge answers, ...) are skipped, not failures."""
    from agentpost.trajectory.io import write_jsonl
    from agentpost.trajectory.model import Producer, Trajectory

    folder = tmp_path / "run"
    folder.mkdir()
    own = Trajectory(id="t::a::0", turns=[], producer=Producer(name="agentpost run", version="0"))
    write_jsonl(folder / "trajectories.jsonl", [own])
    (folder / "run.json").write_text('{\n  "format": "agentpost.run/1",\n  "agents": {}\n}\n')
    (folder / "records.jsonl").write_text('{"format":"agentpost.scvd.record/1","case_id":"x"}\n')
    (folder / "judge_answers.jsonl").write_text('{"judge":"h","case_id":"x","raw":"{}"}\n')
    r = run("import", folder, "-o", tmp_path / "out.jsonl")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("imported 1 trajectories from 4 files (agentpost 1); skipped 3;")
    assert (
        f"skipped: {folder / 'run.json'}: agentpost output (agentpost.run/1), not a trajectory"
        in lines
    )
    assert any("judge_answers.jsonl: agentpost diagnose judge answers" in x for x in lines)
