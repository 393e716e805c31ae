"""CWE names and the planning candidate list: the package's own text, or a catalog you supply.

The package ships text written for agentpost (``data/cwe_names.json``: a short name and one
sentence per CWE of the bundled suite; ``data/cwe_plan_match.json``: a 40-CWE candidate list,
theme groups and generic parents chosen by us). Neither copies MITRE's catalog or the
SecureVibe release's lists. Where a study needs those (L2 hints "with the official
description", the release's exact allow-list), pass the files:

- ``load_names(catalog)``: a MITRE CWE catalog as JSON lines, one ``{"id": "CWE-22", "name":
  ..., "description": ...}`` per line (the shape of ``../shared/data/security/
  cwe_catalog_v4.14.jsonl``); only the ids the package knows are taken from it.
- ``load_plan_match(path)``: a candidate-set file with ``securegen_planning_allowed_40.ids``,
  ``securegen_theme_groups.groups`` and ``securegen_generic_parent_matches.map`` (the shape of
  ``../shared/data/security/cwe_candidate_sets.json``).

Both fall back to the environment (``AGENTPOST_CWE_CATALOG``, ``AGENTPOST_CWE_PLAN_MATCH``), so
every command that builds hints or planning prompts uses the same text without a flag each.
A file that does not have the expected shape is an ``InputError`` naming it and the field.

Layer: io.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentpost.errors import InputError
from agentpost.security.suite import load_data

NAMES_FILE = "cwe_names.json"
PLAN_MATCH_FILE = "cwe_plan_match.json"


def load_names(catalog: str | Path | None = None) -> dict[str, dict[str, str]]:
    """``{"22": {"name": ..., "description": ...}, ...}`` for the CWEs the package knows.

    With ``catalog`` (or ``AGENTPOST_CWE_CATALOG``), each known id's name and description come
    from that catalog instead; an id the catalog lacks keeps the package's text."""
    names = {k: dict(v) for k, v in load_data(NAMES_FILE)["cwes"].items()}
    catalog = catalog or os.environ.get("AGENTPOST_CWE_CATALOG") or None
    if catalog is None:
        return names
    for number, entry in _catalog_entries(Path(catalog)):
        if number in names:
            names[number] = entry
    return names


def _catalog_entries(path: Path):
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, None, f"cannot read the CWE catalog: {e}") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise InputError(path, f"line {i}", f"not JSON: {e}") from None
        cwe_id, name, desc = (obj.get(k) if isinstance(obj, dict) else None
                              for k in ("id", "name", "description"))  # fmt: skip
        if not (isinstance(cwe_id, str) and cwe_id.startswith("CWE-") and isinstance(name, str)):
            raise InputError(path, f"line {i}", "expected {id: 'CWE-N', name, description}")
        yield cwe_id[4:], {"name": name, "description": desc if isinstance(desc, str) else ""}


def load_plan_match(path: str | Path | None = None) -> dict:
    """``{"allowed": [...], "theme_groups": {...}, "generic_parent": {...}, "source": ...}``.

    With ``path`` (or ``AGENTPOST_CWE_PLAN_MATCH``): the lists of a candidate-set file in the
    shape of SecureVibeEval's (see the module docstring)."""
    path = path or os.environ.get("AGENTPOST_CWE_PLAN_MATCH") or None
    if path is None:
        own = load_data(PLAN_MATCH_FILE)
        return {k: own[k] for k in ("allowed", "theme_groups", "generic_parent", "source")}
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(path, None, f"cannot read the CWE candidate sets: {e}") from None
    fields = {
        "allowed": ("securegen_planning_allowed_40", "ids", list),
        "theme_groups": ("securegen_theme_groups", "groups", dict),
        "generic_parent": ("securegen_generic_parent_matches", "map", dict),
    }
    out: dict = {"source": str(path)}
    for key, (entry, field, kind) in fields.items():
        value = data.get(entry, {}).get(field) if isinstance(data, dict) else None
        if not isinstance(value, kind):
            raise InputError(path, f"$.{entry}.{field}", f"expected a {kind.__name__}")
        out[key] = value
    return out
