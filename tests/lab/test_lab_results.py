"""docs/lab/results.json lists every pre-registered direction: one whose arms did not run is
there with verdict 'not run' and the arms it lacked, never silently dropped."""

from __future__ import annotations

from agentpost.lab import directions
from agentpost.report.lab import hero_dynamics_markdown, results_doc, runs_markdown


def test_a_direction_whose_arm_did_not_run_is_listed_as_not_run():
    registered = {"hero": [d.to_json() for d in directions.HERO],
                  "scvd": [d.to_json() for d in directions.SCVD]}  # fmt: skip
    ran = {"name": "hero_vs_grpo:resolved", "expected": "x", "metric": "resolved",
           "estimate": {"mean": 0.01, "ci95": [-0.1, 0.1]}, "verdict": "inconclusive"}  # fmt: skip
    hero = {"table": {"base": {}, "grpo": {}, "hero": {}}, "directions": [ran], "seeds": [0, 1, 2]}
    scvd = {"table": {}, "directions": [], "seeds": [0, 1, 2]}
    doc = results_doc(hero, scvd, registered=registered)
    names = [d["name"] for d in doc["directions"]]
    assert len(names) == len(directions.HERO) + len(directions.SCVD) == len(set(names))
    by = {d["name"]: d for d in doc["directions"]}
    assert by["hero_vs_grpo:resolved"]["verdict"] == "inconclusive"
    gated = by["no_gating_vs_hero:resolved"]
    assert gated["verdict"] == "not run" and gated["reason"] == "arm(s) not run: no_gating"
    assert by["scvd:R2W"]["reason"] == "arm(s) not run: scvd"
    # the pre-registered arms that ran but gave no estimate say so too
    assert by["grpo_vs_base:tokens"]["reason"] == "no estimate in the experiment's document"


def test_the_runs_section_says_which_arms_ran_and_where():
    hero = {"table": {"base": {}, "grpo": {}, "hero": {}}, "seeds": [0, 1, 2], "wall_s": 9.0,
            "runs": [{"train_s": 100.0}, {"train_s": 50.5}]}  # fmt: skip
    scvd = {"table": {"base": {}, "ftd": {}, "scvd": {}}, "seeds": [0, 1, 2], "runs": []}
    text = runs_markdown(results_doc(hero, scvd, load="17 18 19", code="abc1234"))
    assert "hero: arms base, grpo, hero; seeds [0, 1, 2]; training 150.5 s" in text
    assert "load average (1, 5, 15 min): 17 18 19; code: abc1234" in text
    assert "policy: not recorded" in text  # neither document says which


def test_the_document_says_whether_both_experiments_started_from_one_policy():
    sft = {"params": 10, "supervised_tokens": 99, "loss_last": 0.05, "config": {"sft_epochs": 3}}
    hero = {"table": {}, "seeds": [0], "sft": sft}
    doc = results_doc(hero, {"table": {}, "seeds": [0], "sft": dict(sft)})
    assert doc["policy"]["same"] is True and doc["policy"]["hero"]["stage1_epochs"] == 3
    assert "the same SFT checkpoint in both" in runs_markdown(doc)
    other = results_doc(hero, {"table": {}, "seeds": [0], "sft": dict(sft, loss_last=0.06)})
    assert other["policy"]["same"] is False
    assert "policy: DIFFERENT SFT checkpoints" in runs_markdown(other)


def test_the_dynamics_table_says_how_often_the_gate_was_open():
    steps = [
        {"gate_mean": 0.1, "frac_gated": 0.5, "frac_groups_kept": 1.0, "resolution_rate": 0.6},
        {"gate_mean": 0.0, "frac_gated": 0.0, "frac_groups_kept": 0.5, "resolution_rate": 0.2},
    ]
    text = hero_dynamics_markdown({"runs": [{"variant": "hero", "dynamics": steps}]})
    assert "| hero | 2 | 0.50 | 0.25 | 0.050 | 0.75 | 0.40 |" in text
