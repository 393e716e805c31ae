"""Components by name: one loader for every family (sandbox backends, executors, judge kinds,
importers, agent action formats).

Each family keeps a literal table ``{"name": "package.module:attr"}`` beside its code (the
mini-swe-agent way: the names a reader can choose from sit in one dict); a name that is not in
the table is taken as a path itself, so a user's own component needs no edit here:

- ``package.module:attr``: ``attr`` of that module (a class or a factory function);
- ``package.module`` (no colon, at least one dot): the module itself, for families whose
  components are modules (importers); other families refuse it.

``resolve`` returns the object; ``load_named`` calls it with the family's one signature. Errors
are ``ValueError`` naming the family (``what``), the name and the choices; the CLI turns them
into one-line input errors.

Layer: io.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def resolve(table: dict[str, str], name: str, what: str, modules: bool = False) -> Any:
    """The object ``table[name]`` (or ``name`` as a path) names; ``modules`` lets a plain dotted
    path name a module."""
    target = table.get(name, name)
    module, sep, attr = target.partition(":")
    if not sep and not (modules and "." in target):
        path = "a dotted module path" if modules else "a module:Class path"
        raise ValueError(
            f"unknown {what} {name!r}; choose from {', '.join(sorted(table))} or {path}"
        )
    try:
        found = importlib.import_module(module)
        return getattr(found, attr) if attr else found
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot load {what} {name!r}: {e}") from None


def load_named(table: dict[str, str], name: str, what: str, **kwargs: Any) -> Any:
    """An instance: ``resolve(table, name, what)`` called with ``kwargs``."""
    factory = resolve(table, name, what)
    if isinstance(factory, ModuleType) or not callable(factory):
        raise ValueError(f"cannot load {what} {name!r}: it names no class or function")
    return factory(**kwargs)
