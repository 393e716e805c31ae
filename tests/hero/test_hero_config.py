"""HeroConfig validates itself on construction, naming the field (issue 21: `HeroConfig(tau=2.0,
lam=-1.0)` used to construct)."""

from __future__ import annotations

import pytest

from agentpost.hero.config import ABLATIONS, PAPER_INDEX, HeroConfig


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"tau": 2.0}, "tau"),
        ({"lam": -1.0}, "lam"),
        ({"tau": float("nan")}, "tau"),
        ({"penalty_percentile": 0.0}, "penalty_percentile"),
        ({"clip_low": 0.3, "clip_high": 0.2}, "clip_high"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"entropy_topk": 0}, "entropy_topk"),
    ],
)
def test_an_out_of_range_value_fails_at_construction_naming_the_field(kw, field) -> None:
    with pytest.raises(ValueError, match=f"HeroConfig.{field} "):
        HeroConfig(**kw)


def test_an_unknown_option_value_is_refused_with_its_choices() -> None:
    with pytest.raises(ValueError, match="selection must be one of low, random, highest"):
        HeroConfig(selection="lowest")


def test_every_paper_setting_and_ablation_is_valid() -> None:
    assert len(PAPER_INDEX) >= 3 + len(ABLATIONS)
    for name in ABLATIONS:
        HeroConfig().with_ablation(name)  # each variant stays in range
