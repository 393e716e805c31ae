"""Canonical trajectories: the model, importers from real scaffolds, and JSONL I/O.

Importing this package first puts the import path's compiled build in place when it matches
the sources (``_native.py``), before any module it compiles is imported.

Layer: io (this file only; the modules below keep their own layers).
"""

from agentpost.trajectory import _native

_native.install()
