"""The analyses on real public trajectories (../shared/data/trajectories), imported by the real importers."""

from __future__ import annotations

import json

import pytest
from shared_data import TRAJECTORIES, needed

from agentpost.hero.analyze import analyze
from agentpost.trajectory.importing import import_paths

DATA = TRAJECTORIES
pytestmark = needed


def test_analyses_on_real_trajectories():
    dirs = [DATA / d for d in ("openhands", "mini-swe-agent", "swe-agent")]
    trajs = import_paths(dirs).trajectories
    assert len(trajs) >= 10
    doc = analyze(trajs, n_boot=20)
    text = json.dumps(doc, allow_nan=False)  # strict JSON: unknowns are null, never NaN
    assert json.loads(text)["format"] == "agentpost.efficiency/1"
    for row in doc["trajectories"]:
        assert len(row["turn_flags"]) == row["turns"] == len(row["turn_entropy"])
    models = {m["model"]: m for m in doc["models"]}
    # the Multi-SWE-bench llama run has failing builds, missing tools and editor errors
    llama = models["openai/openrouter-llama-4-maverick"]
    assert llama["behaviour_counts"]["tool_error"] > 10
    assert llama["behaviour_counts"]["over_exploration"] >= 15
    gemini = models["google/gemini-3-pro-preview"]
    assert gemini["resolution_rate"] == 0.5 and 0 < gemini["cache_hit_rate"] < 1
    assert gemini["trs"] == pytest.approx(50 / (1 + gemini["mean_tokens_m"]) ** 0.5)
