"""Unvalidated model constructors for the import hot path, one generated per model class.

Layer: io (beside the importers, its only users; it builds models and touches nothing else,
but generating code with ``exec`` is kept out of the model layer).

``maker(cls)`` returns a function taking every field of ``cls`` as a keyword argument and
returning an instance built the way pydantic's ``model_construct`` would (defaults filled,
factories called, nothing validated), without its per-field Python loop and without packing
keywords into a dict: the function body is one dict display in field order (the serializer
writes keys in ``__dict__`` order), generated once per class like ``dataclasses`` does. An
import builds several of these per model call, so this is where its time went: the previous
``model_construct``-style helper took 1.4 µs per ``Turn`` and 1.1 µs per ``Observation``
(CPU time, loaded machine), these 0.86 and 0.58 µs. The hottest four (``Turn``,
``Observation``, ``ToolCall``, ``Usage``) are written out in ``_common.py`` instead, so that the
compiled build compiles them (generated code stays interpreted); a test compares the two.

Departure from ``model_construct``: ``model_fields_set`` starts empty (nothing was validated
or set by a caller; filling it costs a fifth of the construction), so ``exclude_unset`` dumps
of these models are empty; nothing in agentpost reads it. BaseModel's three slots
(``__pydantic_fields_set__``, ``__pydantic_extra__``, ``__pydantic_private__``) are left unset:
the model's ``__getattr__`` gives them ``model_construct``'s values (an empty set, None, None)
on first read, which serialisation never does. Setting them took a quarter of a ``Turn``'s
construction (1.69 against 1.37 µs; ``Observation`` 1.02 against 0.61 µs, CPU time, loaded
machine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MISSING = object()  # "not given" for fields with a default factory (None may be a value)
_DISPLAYS = {list: "[]", dict: "{}"}
_MAKERS: dict[type, Callable[..., Any]] = {}


def _source(cls: type, coerce: dict[str, tuple[type, Callable]]) -> tuple[str, dict[str, Any]]:
    """The text of ``make`` for ``cls`` and the names it refers to."""
    env: dict[str, Any] = {
        "_new": object.__new__,
        "_cls": cls,
        "_set_dict": object.__setattr__,
        "_MISSING": MISSING,
    }
    if getattr(cls, "__private_attributes__", None):
        raise TypeError(f"{cls.__name__} has private attributes; use model_construct")
    fields = cls.__pydantic_fields__  # type: ignore[attr-defined]  # a pydantic model class
    unknown = set(coerce) - set(fields)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    # positional parameters in field order while every required field comes first
    required = [f.is_required() for f in fields.values()]
    positional = required == sorted(required, reverse=True)
    params, items = [], []
    for i, (name, f) in enumerate(fields.items()):
        if f.alias not in (None, name):
            raise TypeError(f"{cls.__name__}.{name} has an alias; use model_validate")
        value = name
        if name in coerce:  # the common type passes; anything else goes through the function
            env[f"_t{i}"], env[f"_c{i}"] = coerce[name]
            value = f"{name} if {name} is None or {name}.__class__ is _t{i} else _c{i}({name})"
        if f.default_factory is not None:
            env[f"_f{i}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            # a display builds the empty list or dict without calling the type
            new = _DISPLAYS.get(f.default_factory, f"_f{i}()")
            value = f"{new} if {name} is _MISSING else {name}"
        elif f.is_required():
            params.append(name)
        else:
            env[f"_d{i}"] = f.default
            params.append(f"{name}=_d{i}")
        items.append(f"{name!r}: {value}")
    body = (
        f"def make({'' if positional else '*, '}{', '.join(params)}):\n"
        "    m = _new(_cls)\n"
        f"    _set_dict(m, '__dict__', {{{', '.join(items)}}})\n"
        "    return m\n"
    )
    return body, env


def maker(cls: type, coerce: dict[str, tuple[type, Callable]] | None = None) -> Callable[..., Any]:
    """The unvalidated constructor of ``cls`` (a pydantic model without aliases or private
    attributes), generated on first use. Its parameters follow the field order (positional
    too, while every required field comes first). ``coerce`` maps a field to ``(type,
    function)``: a value of exactly that type, or None, is stored as given, anything else as
    ``function(value)`` (an importer's coercion, inlined so a helper costs one call)."""
    make = _MAKERS.get(cls) if coerce is None else None
    if make is None:
        body, env = _source(cls, coerce or {})
        exec(body, env)  # noqa: S102 - our own text, built from the model's field names
        make = env["make"]
        make.__qualname__ = f"make_{cls.__name__}"
        if coerce is None:
            _MAKERS[cls] = make
    return make


def construct(cls: type, **values: Any) -> Any:
    """``cls.model_construct(**values)``, faster; hot loops call ``maker(cls)`` directly."""
    return maker(cls)(**values)
