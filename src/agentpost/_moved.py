"""Import paths that moved in 0.1 → 0.2, kept working for one release with a DeprecationWarning.

``MOVED`` maps each old module path to its new one, ``OLD_PACKAGES`` the packages that are gone.
``install()`` (called by ``agentpost/__init__.py``) puts a finder last on ``sys.meta_path`` (it is
asked only for names no file answers, so it costs nothing on every other import) that answers
only those names: an old package is an empty placeholder, an old module path is the new
module itself (the same object, so ``isinstance`` checks and monkeypatches agree), each after a
DeprecationWarning. A module that lost a function to another room (``SPLIT``) is answered by a
copy of the new module that also resolves the departed names. No file stands at an old path, so
git follows the moves and nothing inside the package can import an old path by accident;
``tests/test_layers.py`` fails on a package module that names one anyway.

Layer: model.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

REMOVED_IN = "0.3"

_REPLAY = {
    "replay": "run",
    "replay_calls": "calls",
    "replay_types": "model",
    "edits": "edits",
    "tmux": "tmux",
    "fidelity": "fidelity",
    "snapshots": "snapshots",
}
_SCVD = ("calibrate_io calibration diagnose_out examples heuristic judging metrics panel "
         "pipeline protocol records shell").split()  # fmt: skip
_DISTILL = {
    "collect": "collect",
    "collect_out": "collect_out",
    "ftd": "ftd",
    "matching": "matching",
    "teacher": "teacher",
    "distill": "samples",
}
_HERO = ("advantage advantages_out analyze association behaviours config cost entropy groups "
         "reference tables terms variation").split()  # fmt: skip

MOVED: dict[str, str] = {
    **{f"agentpost.verification.{o}": f"agentpost.replay.{n}" for o, n in _REPLAY.items()},
    **{f"agentpost.verification.{m}": f"agentpost.scvd.{m}" for m in _SCVD},
    **{f"agentpost.verification.{o}": f"agentpost.scvd.distill.{n}" for o, n in _DISTILL.items()},
    **{f"agentpost.efficiency.{m}": f"agentpost.hero.{m}" for m in _HERO},
    "agentpost.train.sft_data": "agentpost.sft.rows",
    "agentpost.train.sft_io": "agentpost.sft.io",
}
# Packages that are gone: importing one warns; its submodules are the entries above.
OLD_PACKAGES = {
    "agentpost.verification": "agentpost.scvd",
    "agentpost.efficiency": "agentpost.hero",
}
# Old module → {name: the module it lives in now} for names that left with another room.
SPLIT: dict[str, dict[str, str]] = {
    "agentpost.verification.snapshots": {
        "snapshot_or_replay_state": "agentpost.scvd.distill.sources",
        "candidate_result": "agentpost.replay.state",
    },
}


def warn(old: str) -> None:
    """The DeprecationWarning for ``old``, pointed at the importing module (importlib's own
    frames are skipped by ``warnings``)."""
    new = MOVED.get(old) or OLD_PACKAGES[old]
    warnings.warn(
        f"{old} moved to {new}; the old path goes in agentpost {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old path with the module at its new path (or a placeholder package)."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001
        if fullname in OLD_PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname in MOVED:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module; exec_module fills it or puts the real one in its place

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        warn(old)
        if old in OLD_PACKAGES:
            module.__doc__ = f"Deprecated: moved to {OLD_PACKAGES[old]} (agentpost._moved)."
            module.__path__ = []  # its submodules are answered by this finder only
            return
        new = importlib.import_module(MOVED[old])
        if old in SPLIT:
            module.__dict__.update((k, v) for k, v in vars(new).items() if not k.startswith("__"))
            module.__getattr__ = _departed(old)  # type: ignore[method-assign]
            return
        # the import system returns what sys.modules holds under the name after exec_module
        sys.modules[old] = new


def _departed(old: str):  # noqa: ANN202
    def __getattr__(name: str):  # noqa: ANN202, N807
        if name in SPLIT[old]:
            return getattr(importlib.import_module(SPLIT[old][name]), name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


_FINDER = _Alias()


def install() -> None:
    """Put the alias finder last on ``sys.meta_path`` (once): no file stands at an old path,
    so the path finders pass every old name on to it, and it shadows nothing."""
    if not any(f is _FINDER for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
