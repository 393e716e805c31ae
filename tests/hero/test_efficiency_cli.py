"""`agentpost efficiency` and `agentpost hero advantages` end to end, through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hero_traj_factory import shell, traj, turn

from agentpost.hero.analyze import analyze
from agentpost.trajectory.io import write_jsonl


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from agentpost.cli import main; sys.argv[0] = 'agentpost'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


def fleet():
    """Two models, two tasks, four rollouts each; model b uses fewer tokens."""
    out = []
    for model, scale in (("a", 3), ("b", 1)):
        for task in ("t1", "t2"):
            for r in range(4):
                n = 2 + r * scale
                turns = [
                    turn(
                        k,
                        [shell("cat a.py" if k % 2 else "ls", exit_code=k % 3 and 0)],
                        inp=10_000 * (k + 1),
                        cached=9_000 * (k + 1),
                        out=100,
                        p_top=0.95 if k % 2 else 0.4,
                    )
                    for k in range(n)
                ]
                out.append(traj(f"{model}-{task}-{r}", task, model, r != 3, turns))
    return out


def test_analyze_document_has_stable_keys_and_numbers():
    doc = analyze(fleet(), baseline="a", n_boot=50)
    assert doc["format"] == "agentpost.efficiency/1"
    assert doc["producer"]["args"]["classifiers_version"] == doc["classifiers"]["version"]
    models = {m["model"]: m for m in doc["models"]}
    for m in models.values():
        for key in (
            "trs",
            "resolution_rate",
            "mean_tokens_m",
            "cache_hit_rate",
            "unproductive_turn_rate",
            "behaviour_counts",
            "relative_inference_cost",
        ):
            assert key in m
        assert m["resolution_rate"] == 0.75
        assert m["cache_hit_rate"] == pytest.approx(0.9)
        assert m["trs"] == pytest.approx(75 / (1 + m["mean_tokens_m"]) ** 0.5)
    assert models["a"]["relative_inference_cost"] == 1.0
    assert models["b"]["mean_tokens_m"] < models["a"]["mean_tokens_m"]
    assert models["a"]["behaviour_counts"]["repeated_call"] > 0
    assert doc["runs"][0]["trs"] is not None and len(doc["runs"]) == 2
    run_a = next(r for r in doc["runs"] if r["model"] == "a")
    assert run_a["turns"] == models["a"]["turns"]
    assert run_a["read_only_share"] == pytest.approx(models["a"]["read_only_share"])
    g = next(x for x in doc["groups"] if x["model"] == "a" and x["task_id"] == "t1")
    assert g["variation"]["n_resolved"] == 3 and g["variation"]["cmax_cmin"] > 1
    row = doc["trajectories"][0]
    assert len(row["turn_entropy"]) == row["turns"] == len(row["turn_flags"])
    assert models["a"]["association"]["buckets"]["low"]["turns"] > 0


def test_efficiency_cli_json_and_tables(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, fleet())
    res = cli("efficiency", str(path), "--json", "--baseline", "a", "--bootstrap", "20")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert {m["model"] for m in doc["models"]} == {"a", "b"}
    res = cli("efficiency", str(path))
    assert res.returncode == 0 and "Efficiency per model" in res.stdout
    assert "Turns per behaviour" in res.stdout and "Cmax/Cmin" in res.stdout
    res = cli("efficiency", str(tmp_path / "missing.jsonl"))
    assert res.returncode != 0 and "missing.jsonl" in res.stderr and "Traceback" not in res.stderr
    for bad, where in (
        ((str(tmp_path),), "not a file"),
        ((str(path), "--entropy-topk", "0"), "--entropy-topk"),
        ((str(path), "--repeat-window", "-2"), "--repeat-window"),
        ((str(path), "--price-in", "-1"), "--price-in"),
    ):
        res = cli("efficiency", *bad)
        assert res.returncode != 0 and where in res.stderr and "Traceback" not in res.stderr


def test_hero_advantages_cli(tmp_path):
    rollouts = [
        {
            "group": "x",
            "resolved": r,
            "tokens": c,
            "turns": [{"entropy": h, "tokens": 3} for h in (0.1, 0.5, 0.9, 1.2)],
        }
        for r, c in ((True, 100), (True, 300), (True, 200), (True, 500), (False, 900))
    ]
    path = tmp_path / "groups.json"
    path.write_text(json.dumps({"rollouts": rollouts}))
    res = cli("hero", "advantages", str(path), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["rollouts"]
    assert out[0]["gate"] == pytest.approx(0.3 * (0.8 - 0.6) / 0.4)
    assert all(len(r["turn_advantages"]) == 4 for r in out)
    assert all(a <= 0 for a in out[4]["turn_advantages"])
    assert [r["resolved"] for r in out] == [True] * 4 + [False]
    assert out[1]["tokens"] == 300 and out[0]["p"] == pytest.approx(0.8)
    grpo = cli("hero", "advantages", str(path), "--ablation", "grpo", "--json")
    grpo = json.loads(grpo.stdout)["rollouts"]
    assert all(len(set(r["turn_advantages"])) == 1 for r in grpo)
    t = cli("hero", "advantages", str(path), "--tau", "0.8", "--lam", "0.1", "--json")
    assert json.loads(t.stdout)["rollouts"][0]["gate"] == pytest.approx(0.0)
    # the spec's spelling of a b.11 variant works as well as the config key
    hyphen = cli("hero", "advantages", str(path), "--ablation", "random-20%", "--json")
    under = cli("hero", "advantages", str(path), "--ablation", "random_20", "--json")
    assert json.loads(hyphen.stdout)["rollouts"] == json.loads(under.stdout)["rollouts"]
    table = cli("hero", "advantages", str(path))  # without --json: a readable table
    assert table.returncode == 0 and "gate w" in table.stdout
    assert f"{out[0]['turn_advantages'][0]:+.3f}" in table.stdout
    for bad, where in (
        (("--tau", "1.5"), "--tau"),
        (("--lam", "-1"), "--lam"),
        (("--ablation", "no-such"), "--ablation"),
    ):
        res = cli("hero", "advantages", str(path), *bad)
        assert res.returncode != 0 and where in res.stderr and "Traceback" not in res.stderr
    res = cli("hero", "advantages", str(tmp_path))
    assert res.returncode != 0 and "not a file" in res.stderr and "Traceback" not in res.stderr
    path.write_text(
        json.dumps(
            {
                "rollouts": [
                    {"group": "x", "resolved": True, "tokens": 1, "turns": [{"entropy": None}]}
                ]
            }
        )
    )
    res = cli("hero", "advantages", str(path))
    assert res.returncode != 0 and "$.rollouts[0].turns[0].entropy" in res.stderr


def test_hero_advantages_says_what_it_reads(tmp_path):
    """Canonical trajectories are grouped on the fly; any other JSONL file gets a hint, and
    --help shows the whole input shape (it used to be clipped in the argument's column)."""
    trajs = tmp_path / "trajs.jsonl"
    write_jsonl(trajs, fleet()[:2])
    res = cli("hero", "advantages", str(trajs), "--json")
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)["rollouts"]) == 2
    path = tmp_path / "other.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    res = cli("hero", "advantages", str(path))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip() == (
        f"error: {path}: line 2: invalid JSON: Extra data"
        ' (expected one JSON document {"rollouts": [...]}, not JSONL; see --help)'
    )
    helped = cli("hero", "advantages", "--help")
    flat = " ".join(helped.stdout.split())
    assert '"turns": [{"entropy", "tokens"}]}]}' in flat and "hero_groups.json" in flat


def test_variation_table_says_unknown_outcomes_are_unknown(tmp_path):
    """Public logs often carry no outcome: the variation table's `res` column shows NA (the
    one rendering of a value not recorded) for such a group, as the R% column does, instead
    of 0 resolved."""
    turns = [turn(0, [shell("ls")], inp=100, cached=0, out=10, p_top=0.9)]
    path = tmp_path / "unknown.jsonl"
    write_jsonl(path, [traj("u1", "t9", "m", None, turns), traj("u2", "t9", "m", None, turns)])
    res = cli("efficiency", str(path))
    assert res.returncode == 0, res.stderr
    row = next(x for x in res.stdout.splitlines() if "m / t9" in x)
    assert [c.strip() for c in row.strip("│ ").split("│")][:3] == ["m / t9", "2", "NA"]


def test_unknown_baseline_is_an_error_naming_the_models(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, fleet())
    res = cli("efficiency", str(path), "--baseline", "c")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == "error: --baseline: no trajectory of model 'c' (models: a, b)\n"


def test_tables_printed_to_a_pipe_are_not_cut_at_80_columns(tmp_path) -> None:
    """Piped (no terminal, no COLUMNS), a table keeps its full width: a long agent name and
    every column appear whole, nothing is cut with '…'."""
    import os
    import subprocess
    import sys

    from hero_traj_factory import shell, traj, turn

    from agentpost.trajectory.io import write_jsonl

    name = "provider/a-rather-long-model-name-that-makes-the-table-wide-2025-11-01"
    write_jsonl(tmp_path / "t.jsonl", [traj("t", "k", name, True, [turn(0, [shell("ls")])])])
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()",
                           "efficiency", str(tmp_path / "t.jsonl")], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout and name in proc.stdout
    assert max(map(len, proc.stdout.splitlines())) > 80
    assert "┃ agent " in proc.stdout and "┃ model " not in proc.stdout  # one name: the agent
