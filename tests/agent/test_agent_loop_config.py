"""LoopConfig validates itself: a value that could only fail every turn is rejected at
construction, naming the field (issue 21: `LoopConfig(mode="txt")` used to fail every turn)."""

from __future__ import annotations

import pytest

from agentpost.agent.loop import LoopConfig


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"mode": "txt"}, "mode"),
        ({"step_limit": 0}, "step_limit"),
        ({"timeout_s": float("nan")}, "timeout_s"),
        ({"command_timeout_s": 0}, "command_timeout_s"),
        ({"cost_limit_usd": -1.0}, "cost_limit_usd"),
        ({"observation_chars": 0}, "observation_chars"),
    ],
)
def test_an_out_of_range_value_fails_at_construction_naming_the_field(kw, field) -> None:
    with pytest.raises(ValueError, match=f"LoopConfig.{field} "):
        LoopConfig(**kw)


def test_the_defaults_and_text_mode_construct() -> None:
    assert LoopConfig().mode == "tools" and LoopConfig(mode="text", timeout_s=5).timeout_s == 5


def test_a_bad_mode_names_the_action_formats_and_why_a_path_did_not_load() -> None:
    with pytest.raises(
        ValueError, match=r"^LoopConfig\.mode must be an action format: text, tools"
    ):
        LoopConfig(mode="txt")
    with pytest.raises(ValueError, match=r"cannot load action format 'no_such_pkg\.mod:Cls'"):
        LoopConfig(mode="no_such_pkg.mod:Cls")
