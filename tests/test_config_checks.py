"""Every config dataclass validates itself (issue 21 item 1): an out-of-range value fails at
construction with ``Cls.field must be ...``, and the CLI turns that into one ``error:`` line
naming the flag, before any work (judge calls, replays, training) has run."""

from __future__ import annotations

import pytest

from agentpost.agent.loop import LoopConfig
from agentpost.agent.transport import TransportConfig
from agentpost.cli import main
from agentpost.hero.config import HeroConfig
from agentpost.judges.base import HeuristicSeat
from agentpost.judges.config import Panel
from agentpost.lab.hero_lab import HeroLabConfig
from agentpost.lab.policy import PolicySize
from agentpost.lab.scvd_lab import ScvdLabConfig
from agentpost.lab.stages import PolicyConfig
from agentpost.prices import Prices
from agentpost.scvd.distill.collect import CollectOptions
from agentpost.scvd.pipeline import DiagnoseOptions
from agentpost.scvd.protocol import Truncation
from agentpost.train.securevibe_train import SecureVibeTrainConfig
from agentpost.train.trl_sft import SFTDefaults

NAN = float("nan")
BAD = [
    (TransportConfig, {"model": ""}, "model"),
    (TransportConfig, {"model": "m", "timeout_s": 0}, "timeout_s"),
    (TransportConfig, {"model": "m", "top_p": 1.5}, "top_p"),
    (TransportConfig, {"model": "m", "temperature": -0.1}, "temperature"),
    (TransportConfig, {"model": "m", "concurrency": 0}, "concurrency"),
    (TransportConfig, {"model": "m", "backoff_s": 5.0, "backoff_max_s": 1.0}, "backoff_max_s"),
    (TransportConfig, {"model": "m", "max_cost_usd": NAN}, "max_cost_usd"),
    (TransportConfig, {"model": "m", "max_total_tokens": 0}, "max_total_tokens"),
    (DiagnoseOptions, {"ica_population": "everyone"}, "ica_population"),
    (DiagnoseOptions, {"n_boot": -1}, "n_boot"),
    (DiagnoseOptions, {"replay_concurrency": 0}, "replay_concurrency"),
    (Truncation, {"observation": 0}, "observation"),
    (Truncation, {"floor": 5000}, "floor"),
    (CollectOptions, {"handoff": "turn"}, "handoff"),
    (CollectOptions, {"max_retries": -1}, "max_retries"),
    (CollectOptions, {"command_timeout_s": float("inf")}, "command_timeout_s"),
    (CollectOptions, {"teacher_steps": 0}, "teacher_steps"),
    (SFTDefaults, {"truncation": "right"}, "truncation"),
    (SFTDefaults, {"learning_rate": 0.0}, "learning_rate"),
    (SFTDefaults, {"warmup_ratio": 2.0}, "warmup_ratio"),
    (SFTDefaults, {"gradient_accumulation_steps": 0}, "gradient_accumulation_steps"),
    (PolicySize, {"hidden": 30, "heads": 4}, "hidden"),
    (PolicySize, {"layers": 0}, "layers"),
    (PolicyConfig, {"vocab_size": 3}, "vocab_size"),
    (PolicyConfig, {"sft_lr": NAN}, "sft_lr"),
    (PolicyConfig, {"copy_rows": -1}, "copy_rows"),
    (HeroLabConfig, {"variants": ("hero", "nope")}, "variants"),
    (HeroLabConfig, {"group": 1}, "group"),
    (HeroLabConfig, {"seeds": ()}, "seeds"),
    (ScvdLabConfig, {"eval_samples": 0}, "eval_samples"),
    (ScvdLabConfig, {"lr": 0.0}, "lr"),
    (ScvdLabConfig, {"seeds": (-1,)}, "seeds"),
    (LoopConfig, {"mode": "txt"}, "mode"),
    (HeroConfig, {"tau": 2.0}, "tau"),
    (Prices, {"input": -1.0}, "input"),
    (SecureVibeTrainConfig, {"reward_mode": "five"}, "reward_mode"),
    (SecureVibeTrainConfig, {"hint_level": "L5"}, "hint_level"),
    (SecureVibeTrainConfig, {"lam": 0.0}, "lam"),
    (SecureVibeTrainConfig, {"group_size": 1}, "group_size"),
    (SecureVibeTrainConfig, {"teacher": "oracle"}, "teacher"),
    (SecureVibeTrainConfig, {"divergence": "kl"}, "divergence"),
]


@pytest.mark.parametrize("cls, kw, field", BAD, ids=[f"{c.__name__}.{f}" for c, _, f in BAD])
def test_an_out_of_range_value_fails_at_construction_naming_the_field(cls, kw, field) -> None:
    with pytest.raises(ValueError, match=rf"^{cls.__name__}\.{field} must be "):
        cls(**kw)


@pytest.mark.parametrize("cls", sorted({c for c, _, _ in BAD} - {TransportConfig}, key=str))
def test_the_defaults_construct(cls) -> None:
    cls()


def test_the_lab_smoke_config_and_a_transport_construct() -> None:
    from agentpost.lab.presets import hero_config

    assert hero_config("smoke").steps == 1
    assert TransportConfig(model="m", temperature=0.0, top_p=1.0, max_tokens=1).top_p == 1.0


def test_a_panel_needs_three_judges_and_an_arbiter_among_them() -> None:
    judges = [HeuristicSeat(f"h{i}", "artifact") for i in range(3)]
    assert Panel(judges, 2).arbiter == 2
    for kw, field in (({"judges": judges[:2], "arbiter": 0}, "judges"),
                      ({"judges": judges, "arbiter": 3}, "arbiter"),
                      ({"judges": judges, "arbiter": 0, "concurrency": 0}, "concurrency")):  # fmt: skip
        with pytest.raises(ValueError, match=rf"^Panel\.{field} "):
            Panel(**kw)


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["diagnose", "missing.jsonl", "--ica-population", "all"], "--ica-population"),
        (["scvd", "collect", "missing.jsonl", "--handoff", "turn"], "--handoff"),
        (
            ["train", "sft", "missing.parquet", "--model", "tiny", "-o", "x", "--truncation", "r"],
            "--truncation",
        ),
        (["train", "sft", "missing.parquet", "--model", "tiny", "-o", "x", "--lr", "0"], "--lr"),
        (["run", "-o", "OUT", "--policy", "all", "--mode", "txt"], "--mode"),
        (["security", "hg", "-o", "OUT", "--lambda", "2"], "--lambda"),
        (["security", "rl", "-o", "OUT", "--reward", "five"], "--reward"),
        (["security", "hg", "-o", "OUT", "--hint-level", "l9"], "--hint-level"),
        (["hero", "advantages", "missing.json", "--tau", "1.5"], "--tau"),
        (["efficiency", "missing.jsonl", "--price-in", "1", "--price-out", "-2"], "--price-out"),
    ],
)
def test_the_cli_gives_one_line_naming_the_flag_before_reading_inputs(
    argv, flag, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing here: a config error must come first
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(f"error: {flag}: ") and err.count("\n") == 1, err
    assert not (tmp_path / "OUT").exists()
