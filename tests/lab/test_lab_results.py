"""docs/lab/results.json lists every pre-registered direction: one whose arms did not run is
there with verdict 'not run' and the arms it lacked, never silently dropped."""

from __future__ import annotations

from agentpost.lab import directions
from agentpost.report.lab import results_doc


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
