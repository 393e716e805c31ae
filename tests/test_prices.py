"""One ``Prices`` (issue 21): per million tokens everywhere, one cached default, keyword-only,
validated at construction; the run ledger and the HERO cost metric price the same call alike,
and every command's ``--price-*`` flags parse through ``commands._options.prices``."""

from __future__ import annotations

import pytest

from agentpost.agent.ledger import usage_cost
from agentpost.commands._options import prices
from agentpost.errors import InputError
from agentpost.hero.cost import effective_token_price, trajectory_cost
from agentpost.prices import Prices
from agentpost.trajectory.model import Outcome, Producer, Trajectory, Turn, Usage


def _traj(inp: int, cached: int | None, out: int) -> Trajectory:
    usage = Usage(input_tokens=inp, cached_tokens=cached, output_tokens=out)
    return Trajectory(id="t", task_id="x", model="m", outcome=Outcome(resolved=True),
                      producer=Producer(name="agentpost.tests", version="0"),
                      turns=[Turn(index=0, usage=usage)])  # fmt: skip


def test_cost_is_per_million_tokens_with_cached_at_a_tenth_of_input() -> None:
    p = Prices(input=3.0, output=15.0, unit="USD")
    assert p.cached_price == pytest.approx(0.3)
    assert p.cost(1_000_000, 400_000, 100_000) == pytest.approx(0.6 * 3 + 0.4 * 0.3 + 0.1 * 15)
    assert p.cost(None, 0, 1) is None and p.cost(1, None, 1) is None  # unknown, never 0
    assert Prices(input=2.0, output=1.0, cached=2.0).cost(10, 10, 0) == pytest.approx(20 / 1e6)
    assert p.to_json() == {"input": 3.0, "output": 15.0, "cached": pytest.approx(0.3),
                           "unit": "USD", "per_tokens": 1_000_000}  # fmt: skip


def test_the_ledger_and_the_hero_cost_metric_price_one_call_alike() -> None:
    p = Prices(input=0.5, output=2.0, cached=0.05, unit="USD")
    usage = Usage(input_tokens=12_000, cached_tokens=9_000, output_tokens=800)
    traj = _traj(12_000, 9_000, 800)
    assert usage_cost(p, usage) == pytest.approx(trajectory_cost(traj, p))
    # the effective price is in the prices' own unit: per million tokens
    assert effective_token_price([traj], p) == pytest.approx(
        trajectory_cost(traj, p) / 12_800 * 1e6
    )
    # a budget never undercounts: an unreported cached count is priced as uncached
    blind = Usage(input_tokens=12_000, cached_tokens=None, output_tokens=800)
    assert usage_cost(p, blind) == pytest.approx((12_000 * 0.5 + 800 * 2.0) / 1e6)
    assert trajectory_cost(_traj(12_000, None, 800), p) is None  # the metric says unknown
    assert usage_cost(None, usage) is None
    # nor does it assume a discount nobody stated: without a cached price, the input price
    plain = Prices(input=0.5, output=2.0, unit="USD")
    assert usage_cost(plain, usage) == pytest.approx((12_000 * 0.5 + 800 * 2.0) / 1e6)
    assert trajectory_cost(traj, plain) < usage_cost(plain, usage)  # the metric: 0.1 x input


def test_fields_are_keyword_only_so_the_old_argument_orders_cannot_mix() -> None:
    with pytest.raises(TypeError):
        Prices(1.0, 2.0)  # type: ignore[misc]


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"input": -1.0}, "input"),
        ({"output": float("nan")}, "output"),
        ({"cached": float("inf")}, "cached"),
        ({"input": "1"}, "input"),
        ({"output": True}, "output"),
        ({"unit": ""}, "unit"),
    ],
)
def test_an_out_of_range_price_fails_at_construction_naming_the_field(kw, field) -> None:
    with pytest.raises(ValueError, match=f"Prices.{field} "):
        Prices(**kw)


def test_the_price_flags_parse_in_one_place() -> None:
    assert prices(None, None, None) is None  # unknown prices: cost stays null
    got = prices(0.5, None, 2.0)
    assert got == Prices(input=0.5, output=2.0, unit="USD")
    assert prices(1.0, 0.2, 1.0, "relative") == Prices(input=1.0, output=1.0, cached=0.2)
    with pytest.raises(InputError, match="give both"):
        prices(0.5, None, None)
    for args, flag in (((-1.0, None, 1.0), "--price-in"), ((1.0, -0.1, 1.0), "--price-cached"),
                       ((1.0, None, float("nan")), "--price-out")):  # fmt: skip
        with pytest.raises(InputError) as e:
            prices(*args)
        assert e.value.where == flag and "Prices." in e.value.message
