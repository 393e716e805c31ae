"""How a config dataclass checks itself: one ``ValueError`` naming the class, field and bound.

Every config (``LoopConfig``, ``TransportConfig``, ``DiagnoseOptions``, ``CollectOptions``,
``SFTDefaults``, the lab configs ...) calls :func:`check` from ``__post_init__`` so that a bad
value fails at construction, not after a run has used it. The message always reads
``Cls.field must be <bound>, got <value>``; ``commands._options.config`` turns it into a
one-line ``InputError`` placed at the field's flag.

Layer: model.
"""

from __future__ import annotations

import math
from typing import Any


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v)


def positive(v: Any) -> bool:
    """A finite number > 0 (NaN and infinity fail)."""
    return _number(v) and 0 < v < math.inf


def non_negative(v: Any) -> bool:
    """A finite number >= 0."""
    return _number(v) and 0 <= v < math.inf


def at_least(v: Any, low: int) -> bool:
    """An integer >= ``low``."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= low


def in_unit(v: Any, *, open_low: bool = False) -> bool:
    """A number in [0, 1] (or (0, 1] with ``open_low``)."""
    return _number(v) and (0 < v if open_low else 0 <= v) and v <= 1


def check(obj: Any, rules: dict[str, tuple[bool, str]]) -> None:
    """``ValueError`` for the first rule that fails: ``{field: (ok, bound in words)}``."""
    for name, (ok, bound) in rules.items():
        if not ok:
            raise ValueError(
                f"{type(obj).__name__}.{name} must be {bound}, got {getattr(obj, name)!r}"
            )


def one_of(allowed: tuple[str, ...] | list[str] | set[str] | dict) -> str:
    """The bound of an enumerated field, in words."""
    return "one of " + ", ".join(map(str, allowed))
