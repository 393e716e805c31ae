"""Token prices: the one ``Prices`` behind every cost agentpost computes (the run ledger and its
``--max-cost`` budget, judge-panel budgets, and the HERO cost metrics of spec b.10).

Unit: a price is **per million tokens**, in ``unit`` (``"USD"`` for real money, ``"relative"``
when only ratios matter, as in ``agentpost efficiency`` without prices). Every ``--price-*``
flag means that, and ``commands._options.prices`` parses them for every command.

    cost = ((prompt - cached) * input + cached * cached_price + completion * output) / 1e6

``cached=None`` means ``0.1 * input`` (spec b.10's default c_cache; most providers discount
cached prefix tokens by 50-90%). Set ``cached`` to ``input`` for a server without a discount.

Departure from the two classes this replaces: the efficiency metrics keep the spec's 0.1 x
default, while budgets (``agent.ledger.usage_cost``: ``--max-cost``, judge budgets) still charge
cached tokens the full input price unless ``cached`` is given, so that they never undercount; and ``efficiency.cost.Prices`` was per token (now per million, like provider price lists).
Fields are keyword-only, so the two old argument orders cannot be confused.

Layer: model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from agentpost.config_checks import check, non_negative

PER = 1_000_000  # tokens per price unit
CACHED_SHARE = 0.1  # default price of a cached token, as a share of an uncached one (spec b.10)


@dataclass(frozen=True, kw_only=True)
class Prices:
    """Prices per million tokens, in ``unit``; the defaults are relative (input = output = 1)."""

    input: float = 1.0
    output: float = 1.0
    cached: float | None = None  # None: CACHED_SHARE * input
    unit: str = "relative"

    def __post_init__(self) -> None:
        """A negative, infinite or NaN price (or a bool) fails here, naming the field."""
        price = "a number >= 0"
        check(
            self,
            {
                "input": (non_negative(self.input), price),
                "output": (non_negative(self.output), price),
                "cached": (self.cached is None or non_negative(self.cached), price),
                "unit": (isinstance(self.unit, str) and bool(self.unit), "a non-empty label"),
            },
        )

    @property
    def cached_price(self) -> float:
        return CACHED_SHARE * self.input if self.cached is None else self.cached

    def cost(self, prompt: int | None, cached: int | None, completion: int | None) -> float | None:
        """Cost of ``prompt`` input tokens (``cached`` of them cached) and ``completion`` output
        tokens, in ``unit``; None when any count is unknown (never a guessed 0)."""
        if prompt is None or cached is None or completion is None:
            return None
        uncached = (prompt - cached) * self.input + cached * self.cached_price
        return (uncached + completion * self.output) / PER

    def to_json(self) -> dict:
        """The prices as written into documents (``cached`` resolved to its price)."""
        return {**asdict(self), "cached": self.cached_price, "per_tokens": PER}
