"""`agentpost security hg` and `security rl` on the built-in tiny model over a bundled task: the
policy's random text really runs in the sandbox and its /app is really graded (always −1 or
−0.5 for a random model). So hg trains (its filter keeps zero-variance groups) while rl stops
with a one-line 'dynamic sampling stalled' error after its refills, as b.6 + b.8 predict for a
policy with no positive rewards."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("trl")
CLI = [sys.executable, "-c", "from agentpost.cli import main; main()"]
FAST = ["--task", "calculator", "--steps", "1", "-G", "2", "--prompts-per-step", "1",
        "--max-new-tokens", "6", "--command-timeout", "2", "--max-turns", "1"]  # fmt: skip


def cli(*args):
    return subprocess.run([*CLI, "security", *args], capture_output=True, text=True, timeout=300)


def test_hg_trains_the_tiny_model_and_rl_stalls_without_positive_rewards(tmp_path, backend):
    r = cli("hg", "-o", str(tmp_path / "hg"), *FAST, "--save-steps", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "hg" / "trl" / "checkpoint-1").is_dir()
    assert json.loads(r.stdout.strip().splitlines()[-1])["groups_kept"] == 1
    summary = json.loads((tmp_path / "hg" / "summary.json").read_text())
    (group,) = summary["steps"][0]["groups"]
    assert group["task"] == "calculator" and all(x in (-1.0, -0.5, -0.75) for x in group["rewards"])
    assert any("hg/distill_loss" in e and "hg/reverse_kl" in e for e in summary["log_history"])
    args = summary["producer"]["args"]
    assert (args["hint_level"], args["divergence"], args["lam"], args["hint_template"]) == (
        "L4", "js_skew", 0.5, "release")  # fmt: skip
    assert (tmp_path / "hg" / "model" / "config.json").is_file()
    # resumed: step 1 comes from the checkpoint, only step 2 is rolled out and trained
    two_steps = [*FAST[:2], "--steps", "2", *FAST[4:]]
    r = cli("hg", "-o", str(tmp_path / "hg"), *two_steps, "--resume")
    assert r.returncode == 0, r.stderr[-2000:]
    resumed = json.loads((tmp_path / "hg" / "summary.json").read_text())
    assert resumed["resumed_from"] == "checkpoint-1" and len(resumed["steps"]) == 1
    # TRL restores the log of step 1 from the checkpoint and appends step 2
    assert [e["step"] for e in resumed["log_history"] if "loss" in e] == [1, 2]
    r = cli("rl", "-o", str(tmp_path / "rl"), *FAST, "--max-refills", "1")
    assert r.returncode == 1
    err = [ln for ln in r.stderr.splitlines() if "error:" in ln]  # after a progress bar's \r
    assert len(err) == 1 and "dynamic sampling stalled" in err[0] and "2 groups drawn" in err[0]
    assert "Traceback" not in r.stderr


def test_bad_options_are_one_line_errors(tmp_path):
    bad = tmp_path / "no-placeholder.txt"
    bad.write_text("a template without the hint field\n")
    for args, opt in ((["hg", "--divergence", "kl"], "--divergence"),
                      (["hg", "--hint-level", "L5"], "--hint-level"),
                      (["rl", "--reward", "dense"], "--reward"),
                      (["rl", "--task", "nope"], "--task"),
                      (["rl", "--model", str(tmp_path)], "--model"),
                      (["rl", "--refill", "forever"], "--refill"),
                      (["rl", "--on-grading-failure", "retry"], "--on-grading-failure"),
                      (["hg", "--max-consecutive-aborted", "-1"], "--max-consecutive-aborted"),
                      (["hg", "--hint-template", str(tmp_path / "none.txt")], "--hint-template"),
                      (["hg", "--hint-template", str(bad)], "--hint-template")):  # fmt: skip
        r = cli(*args, "-o", str(tmp_path / "x"))
        assert r.returncode != 0 and opt in r.stderr, (args, r.stderr[-500:])
