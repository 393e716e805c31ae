"""The import path's compiled build (mypyc), used only while it matches the source beside it.

``scripts/compile_native.py`` compiles the modules in ``COMPILED`` (the importers, format
detection, one file's import, the totals pass, file reading) with mypyc: the same ``.py``
files, type-checked and turned into C, plus the C helper in ``C_EXTENSIONS`` (detection's
``memmem``), into ``_build/`` beside this file, with a ``manifest.json`` that records the
SHA-256 of every source they are built from or import from agentpost (``SOURCES``). When
``agentpost.trajectory`` is first imported, ``install()`` compares those hashes with the files
here: when every one matches (and ``AGENTPOST_PURE_IMPORT`` is unset), a meta-path finder
serves the compiled modules from ``_build/``; otherwise nothing changes and the ``.py`` files
run. So an edited module never runs a stale binary, and a machine without a C compiler runs the
same code interpreted.

Why mypyc (not Cython or a Rust extension): it compiles the importers' own Python, so there is
one source to read and to test, and the interpreted path stays the reference. Measured with
``bench/import.py``: the bench corpus imports at about 0.5x ``orjson.loads`` compiled against
0.4x interpreted; the output is the same byte for byte (``tests/trajectory/
test_import_native.py`` compares the two on every sample and on mutated ones).

One difference: compiled code checks the declared types of parameters and attributes at run
time, so a value of the wrong type reaches an importer's catch-all as a ``TypeError`` where the
interpreter may raise an ``AttributeError``; both are the same ``InputError`` ("not a valid ...
file") with another detail in parentheses. JSON-derived values are typed ``Any`` in these
modules, so that no input that imports interpreted fails compiled (the test above).

Layer: io.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json  # (not orjson: importing this module stays light)
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent  # src/agentpost/trajectory
BUILD = HERE / "_build"
MANIFEST = BUILD / "manifest.json"
PACKAGE = "agentpost.trajectory"
# the hot modules (relative to PACKAGE): every importer the bench corpus reaches, their shared
# helpers, detection, one file's import, the totals pass and reading files (io)
COMPILED = (
    "importers._common",
    "importers._detect",
    "importers._file",
    "importers.agentpost_format",
    "importers.atif",
    "importers.claude_code",
    "importers.codex",
    "importers.gemini_cli",
    "importers.harbor",
    "importers.mini_swe_agent",
    "importers.openai_chat",
    "importers.openhands",
    "importers.openhands_eval",
    "importers.openhands_session",
    "importers.openhands_v1",
    "importers.swe_agent",
    "totals",
    "io",
)
C_EXTENSIONS = ("importers._findc",)  # C sources (``.c``) built beside them
# what they import from agentpost (mypy reads their types): a change to any of these, or to a
# compiled module, makes the build stale (a test checks this list against their imports)
DEPENDS = (
    "importers.__init__",
    "importers._construct",
    "model",
    "../__init__",
    "../errors",
    "../components",
    "../documents/write",
    "../ingress/__init__",
    "../ingress/hostdir",
    "../ingress/keys",
)
SOURCES = (*COMPILED, *C_EXTENSIONS, *DEPENDS)
OFF = "AGENTPOST_PURE_IMPORT"


def source_path(name: str, root: Path = HERE) -> Path:
    """The source file of a ``SOURCES`` entry (``importers._file``, ``../errors``)."""
    suffix = ".c" if name in C_EXTENSIONS else ".py"
    if name.startswith("../"):
        return root.parent / (name[3:] + suffix)
    return root / (name.replace(".", "/") + suffix)


def source_hashes(root: Path = HERE) -> dict[str, str]:
    """SHA-256 of each file in ``SOURCES`` under ``root`` (the trajectory package folder)."""
    return {n: hashlib.sha256(source_path(n, root).read_bytes()).hexdigest() for n in SOURCES}


def fresh(manifest: dict[str, Any], hashes: dict[str, str], suffix: str) -> bool:
    """Whether a build's manifest matches the sources and this interpreter: the same hash for
    every source, a file for every compiled module, built for this extension suffix."""
    return (
        manifest.get("sources") == hashes
        and manifest.get("suffix") == suffix
        and set(manifest.get("modules") or {})
        == {f"{PACKAGE}.{m}" for m in (*COMPILED, *C_EXTENSIONS)}
        and bool(manifest.get("runtime"))
    )


class _Finder:
    """Serves the compiled modules (and mypyc's shared runtime module) from ``_build/``."""

    def __init__(self, files: dict[str, Path]):
        self.files = files

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        f = self.files.get(name)
        if f is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, str(f))
        return importlib.util.spec_from_file_location(name, f, loader=loader)


def status() -> str:
    """``compiled (mypyc)`` when the build is in use, else ``interpreted (why)``."""
    return _STATUS


_STATUS = "interpreted (not installed yet)"


def install() -> None:
    """Put the compiled build in front of the sources when it matches them; idempotent."""
    global _STATUS
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    if os.environ.get(OFF):
        _STATUS = f"interpreted ({OFF} is set)"
        return
    try:
        manifest = json.loads(MANIFEST.read_bytes())
    except (OSError, ValueError):
        _STATUS = "interpreted (no compiled build: scripts/compile_native.py makes one)"
        return
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if not isinstance(manifest, dict) or not fresh(manifest, source_hashes(), suffix):
        _STATUS = "interpreted (the compiled build is stale: rerun scripts/compile_native.py)"
        return
    names = {**manifest["modules"], manifest["runtime"][0]: manifest["runtime"][1]}
    files = {name: BUILD / f for name, f in names.items()}
    if not all(f.parent == BUILD and f.is_file() for f in files.values()):
        _STATUS = "interpreted (the compiled build is incomplete)"
        return
    sys.meta_path.insert(0, _Finder(files))
    _STATUS = "compiled (mypyc)"
