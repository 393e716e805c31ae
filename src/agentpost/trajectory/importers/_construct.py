"""Unvalidated model constructors for the import hot path, one generated per model class.

Layer: io (beside the importers, its only users; it builds models and touches nothing else,
but generating code with ``exec`` is kept out of the model layer).

``maker(cls)`` returns a function taking every field of ``cls`` as a keyword argument and
returning an instance built the way pydantic's ``model_construct`` would (defaults filled,
factories called, nothing validated), without its per-field Python loop and without packing
keywords into a dict: the function body is one dict display in field order (the serializer
writes keys in ``__dict__`` order), generated once per class like ``dataclasses`` does. An
import builds several of these per model call, so this is where its time went: 2.1 µs for a
``Turn`` through ``model_construct``-style code against about 0.6 µs here.

Departure from ``model_construct``: ``model_fields_set`` starts empty (nothing was validated
or set by a caller; filling it costs a fifth of the construction), so ``exclude_unset`` dumps
of these models are empty; nothing in agentpost reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

MISSING = object()  # "not given" for fields with a default factory (None may be a value)
_MAKERS: dict[type, Callable[..., Any]] = {}
# BaseModel's slots, set through their descriptors (cheaper than ``object.__setattr__``)
_SLOTS = {
    n: BaseModel.__dict__[f"__pydantic_{n}__"].__set__ for n in ("fields_set", "extra", "private")
}


def _source(cls: type) -> tuple[str, dict[str, Any]]:
    """The text of ``make`` for ``cls`` and the names it refers to."""
    env: dict[str, Any] = {
        "_new": object.__new__,
        "_cls": cls,
        "_set_dict": object.__setattr__,
        "_MISSING": MISSING,
        "_fs": _SLOTS["fields_set"],
        "_ex": _SLOTS["extra"],
        "_pr": _SLOTS["private"],
    }
    if getattr(cls, "__private_attributes__", None):
        raise TypeError(f"{cls.__name__} has private attributes; use model_construct")
    params, items = [], []
    for i, (name, f) in enumerate(cls.__pydantic_fields__.items()):
        if f.alias not in (None, name):
            raise TypeError(f"{cls.__name__}.{name} has an alias; use model_validate")
        if f.default_factory is not None:
            env[f"_f{i}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            items.append(f"{name!r}: _f{i}() if {name} is _MISSING else {name}")
        elif f.is_required():
            params.append(name)
            items.append(f"{name!r}: {name}")
        else:
            env[f"_d{i}"] = f.default
            params.append(f"{name}=_d{i}")
            items.append(f"{name!r}: {name}")
    body = (
        f"def make(*, {', '.join(params)}):\n"
        "    m = _new(_cls)\n"
        f"    _set_dict(m, '__dict__', {{{', '.join(items)}}})\n"
        "    _fs(m, set())\n"
        "    _ex(m, None)\n"
        "    _pr(m, None)\n"
        "    return m\n"
    )
    return body, env


def maker(cls: type) -> Callable[..., Any]:
    """The unvalidated constructor of ``cls`` (a pydantic model without aliases or private
    attributes), generated on first use."""
    make = _MAKERS.get(cls)
    if make is None:
        body, env = _source(cls)
        exec(body, env)  # noqa: S102 - our own text, built from the model's field names
        make = _MAKERS[cls] = env["make"]
        make.__qualname__ = f"make_{cls.__name__}"
    return make


def construct(cls: type, **values: Any) -> Any:
    """``cls.model_construct(**values)``, faster; hot loops call ``maker(cls)`` directly."""
    return maker(cls)(**values)
