"""Official SWE-bench grades, read from the harness's own files: per-instance ``report.json``
(``{instance_id: {"resolved": bool, ...}}``, one or many instances; or the bare inner record
``{"resolved": bool, "tests_status": ...}`` in a folder named after its instance, as some
published runs lay them out: ``logs/<instance_id>/report.json``), the run's summary
(``resolved_ids`` beside ``completed_ids`` / ``unresolved_ids``), or a folder holding any of them
(searched for ``report.json`` files).

``official_grades(path) -> {instance_id: resolved}``. A file that is neither shape is an
``InputError`` naming it; two files that disagree on an instance are one too.

Layer: io.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentpost.errors import InputError
from agentpost.tasks.fields import read_text

MAX_FILES = 100_000


def _from_doc(doc: Any, path: Path) -> dict[str, bool]:
    if not isinstance(doc, dict):
        raise InputError(path, None, "not a SWE-bench report (a JSON object)")
    if isinstance(doc.get("resolved_ids"), list):  # the harness's run summary
        done = doc.get("completed_ids") or doc.get("submitted_ids") or []
        unresolved = doc.get("unresolved_ids") or []
        resolved = {str(i) for i in doc["resolved_ids"]}
        out = {str(i): str(i) in resolved for i in [*done, *unresolved]}
        return out | {i: True for i in resolved}
    if isinstance(doc.get("resolved"), bool) and "tests_status" in doc:  # bare: the folder names it
        return {path.parent.name: doc["resolved"]}
    out = {}
    for iid, rep in doc.items():
        if not isinstance(rep, dict) or not isinstance(rep.get("resolved"), bool):
            raise InputError(path, str(iid), "not a SWE-bench report: no boolean 'resolved'")
        out[str(iid)] = rep["resolved"]
    return out


def official_grades(path: Path) -> dict[str, bool]:
    """Instance id -> resolved, from a report file or a folder of them."""
    if not path.exists():
        raise InputError(path, None, "no such file or folder")
    files = [path] if path.is_file() else sorted(path.rglob("report.json"))[: MAX_FILES + 1]
    if not files:
        raise InputError(path, None, "no report.json in this folder")
    if len(files) > MAX_FILES:
        raise InputError(path, None, f"more than {MAX_FILES} report.json files")
    grades: dict[str, bool] = {}
    for f in files:
        try:
            doc = json.loads(read_text(f))
        except ValueError as e:
            raise InputError(f, None, f"not JSON: {e}") from None
        for iid, resolved in _from_doc(doc, f).items():
            if grades.get(iid, resolved) != resolved:
                raise InputError(f, iid, "another report file grades this instance otherwise")
            grades[iid] = resolved
    return grades
