"""`agentpost report RUN_DIR` on directories that hold only some stages' outputs.

Inputs come from the real pieces: a real mini-swe-agent trajectory set from ../shared/data
imported with agentpost's importer, the efficiency analysis and the SCVD metrics functions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRAJECTORIES

from agentpost.report.build import render_run_dir
from agentpost.report.scan import classify_json, scan
from agentpost.trajectory.io import write_jsonl

MINI = TRAJECTORIES / "mini-swe-agent" / "swebench-bash-only_gemini-3-pro" / "trajs"
CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]


@pytest.fixture(scope="module")
def imported(shared_data) -> list:
    from agentpost.trajectory.importing import import_file

    return [t for p in sorted(MINI.glob("*/*.traj.json")) for t in import_file(p)]


def test_efficiency_only_directory_renders_efficiency_and_says_what_was_not_run(
    tmp_path: Path, imported: list
) -> None:
    from agentpost.hero.analyze import analyze

    (tmp_path / "eff.json").write_text(json.dumps(analyze(imported, n_boot=50)))
    found = scan(tmp_path)
    assert [rel for rel, _ in found.files["efficiency"]] == ["eff.json"]
    html = render_run_dir(tmp_path).read_text()
    assert "Unproductive turns by kind, and check runs" in html and "per model" in html
    assert "No logprobs in these trajectories" in html  # mini-swe-agent records none
    assert html.count("Not run:") == 5  # runs, tokens, verification, security, trajectories
    assert "agentpost.hero.analyze.analyze 0.1.0" in html


def test_trajectories_and_scvd_metrics_directory(tmp_path: Path, imported: list) -> None:
    from agentpost.scvd.metrics import compute, from_dicts

    write_jsonl(tmp_path / "imported.jsonl", imported)
    rows = [{"model": t.model or "m", "run": "r1", "task": t.task_id, "I_c": True, "I_v": True,
             "z": "error" if i % 2 else "no-error", "y_c": i % 2, "y_f": int(bool(t.outcome.resolved))}
            for i, t in enumerate(imported)]  # fmt: skip
    doc = compute(from_dicts(rows), n_boot=50)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    with open(tmp_path / "records.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    assert classify_json(doc) == "scvd_metrics"
    html = render_run_dir(tmp_path, tmp_path / "out.html").read_text()
    assert "Tokens per trajectory" in html and imported[0].id in html
    assert "Seven SCVD metrics, macro over models" in html and "Verification outcome matrix" in html
    assert 'Token efficiency (HERO)</h2><p class="skip">Not run' in html


def test_unrecognised_and_broken_files_are_listed_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "broken.json").write_text('{"format": ')
    (tmp_path / "x.jsonl").write_text("not json\n")
    found = scan(tmp_path)
    assert sorted(found.unrecognised) == ["broken.json", "notes.json", "x.jsonl"]
    html = render_run_dir(tmp_path).read_text()
    assert "not recognised (ignored)" in html and html.count("Not run:") == 6


def test_report_cli_prints_the_path_and_rejects_a_missing_directory(tmp_path: Path) -> None:
    """...and a folder with nothing to report (raw logs, say): one line and a non-zero exit."""
    (tmp_path / "session.json").write_text('{"messages": []}')
    proc = subprocess.run(
        [*CLI, "report", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "nothing to analyse; it holds 1 file(s)" in proc.stderr
    assert "agentpost import" in proc.stderr and not (tmp_path / "report.html").exists()
    from agentpost.trajectory.io import write_jsonl
    from agentpost.trajectory.model import Producer, Trajectory

    made = Producer(name="tests", version="0", args={})
    write_jsonl(tmp_path / "t.jsonl", [Trajectory(id="a", task_id="k", turns=[], producer=made)])
    proc = subprocess.run(
        [*CLI, "report", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "report.html")
    proc = subprocess.run(
        [*CLI, "report", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope'}: not a directory"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_security_check_and_grade_outputs_of_the_cli(tmp_path: Path) -> None:
    from agentpost.security.suite import bundled_suite_dir

    suite = tmp_path / "suite"
    suite.mkdir()
    src = bundled_suite_dir()
    shutil.copy(src / "_harness.py", suite / "_harness.py")
    shutil.copytree(src / "calculator", suite / "calculator")
    # a broken copy: its "secure" reference is the vulnerable one, so the check fails on it
    broken = suite / "calculator-broken"
    shutil.copytree(src / "calculator", broken)
    toml = broken / "task.toml"
    toml.write_text(toml.read_text().replace('id = "calculator"', 'id = "calculator-broken"'))
    shutil.rmtree(broken / "reference" / "secure")
    shutil.copytree(broken / "reference" / "vulnerable", broken / "reference" / "secure")
    run = tmp_path / "run"
    run.mkdir()
    for name, args, rc in (
        ("check.json", ["security", "check", str(suite), "--json", "--workers", "2"], 1),
        ("grade.json", ["security", "grade", "calculator", str(suite / "calculator" / "reference" / "secure"),
                        "--suite", str(suite), "--json"], 0),
    ):  # fmt: skip
        proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == rc, proc.stderr
        (run / name).write_text(proc.stdout)
    assert list(json.loads((run / "check.json").read_text())["problems"]) == ["calculator-broken"]
    html = render_run_dir(run).read_text()
    assert "Reference implementations of the suite" in html and "Graded candidates" in html
    assert "agentpost.security.grade.check_suite" in html
    assert "agentpost.security.grade.grade_candidate" in html
    assert "1 of 2 tasks fail the check" in html
    why = html[html.index("Why the failing tasks fail") :]
    assert why.count('<td class="l">calculator-broken</td>') == 2  # both references' grades
    assert "calculator</td>" not in why.split("</table>")[0]  # the passing task is not listed


def test_names_from_the_data_are_escaped(tmp_path: Path, imported: list) -> None:
    from agentpost.hero.analyze import analyze

    hostile = "<img src=x onerror=alert(1)>"
    trajs = [t.model_copy(update={"model": hostile, "task_id": hostile}) for t in imported]
    write_jsonl(tmp_path / "t.jsonl", trajs)
    (tmp_path / "eff.json").write_text(json.dumps(analyze(trajs, n_boot=20)))
    html = render_run_dir(tmp_path).read_text()
    assert hostile not in html and "&lt;img src=x" in html


def test_a_recognised_file_of_the_wrong_shape_costs_its_section_not_the_report(
    tmp_path: Path,
) -> None:
    (tmp_path / "eff.json").write_text('{"format": "agentpost.efficiency/1", "models": 3, "trajectories": []}')  # fmt: skip
    proc = subprocess.run([*CLI, "report", str(tmp_path)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "report.html")
    assert "warning: Token efficiency (HERO): Could not render this section from eff.json" in proc.stderr  # fmt: skip
    html = (tmp_path / "report.html").read_text()
    assert "Could not render this section from eff.json: TypeError" in html


def test_security_metrics_output_is_shown_as_a_funcpass_secpass_table(tmp_path: Path) -> None:
    """`security metrics --json` names its per-agent block `agents`; it renders like a summary
    (and in the glance table), not as an unrecognised file."""
    from agentpost.security.metrics import per_cwe, summary

    rows = [{"task": "t", "func": True, "sec": s, "cwes": [89], "agent": "a"} for s in (1, 0)]
    doc = {"format": "agentpost.security.metrics/1", "agents": {"a": summary(rows)},
           "per_cwe": per_cwe(rows)}  # fmt: skip
    (tmp_path / "metrics.json").write_text(json.dumps(doc))
    assert not scan(tmp_path).unrecognised
    html = render_run_dir(tmp_path).read_text()
    assert "<h3>FuncPass and SecPass</h3>" in html and "<h3>Security agents</h3>" in html
    assert "FuncPass and SecPass per CWE" in html  # the per-CWE chart


def test_out_naming_a_directory_writes_report_html_inside_it(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    assert (
        render_run_dir(tmp_path, tmp_path / "elsewhere") == tmp_path / "elsewhere" / "report.html"
    )
    assert (tmp_path / "elsewhere" / "report.html").read_text().startswith("<!doctype html>")
