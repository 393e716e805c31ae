"""What `scvd collect` and `scvd ftd` write: ``<name>.parquet`` (the kept rows, ``agentpost.sft/1``)
and ``<name>.json`` (counts by status, teacher usage, one line per case, the producer block).

Layer: io.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from agentpost.documents.formats import fmt
from agentpost.documents.write import write_json
from agentpost.scvd.distill.teacher import Teacher
from agentpost.sft.io import write_rows
from agentpost.sft.rows import from_record

FORMAT = fmt("agentpost.scvd.collect")


def summary(results: list[dict], teacher: Teacher, producer: dict[str, Any]) -> dict[str, Any]:
    """The ``<name>.json`` document: counts by status, usage, and one line per case."""
    usage: Counter = Counter()
    for r in results:
        usage.update(r.get("usage") or {})
    return {
        "format": FORMAT,
        "producer": producer,
        "teacher": {"label": teacher.label, **teacher.fingerprint},
        "status": dict(Counter(r["status"] for r in results)),
        "kept": sum(r["status"] == "kept" for r in results),
        "teacher_usage": dict(usage),
        "cases": [{k: v for k, v in r.items() if k != "row"} for r in results],
    }


def write_outputs(run_dir: Path, results: list[dict], doc: dict[str, Any], name: str) -> Path:
    """``<name>.parquet`` (the kept rows) and ``<name>.json`` under ``run_dir``, each replaced
    atomically."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rows = [from_record(r["row"]) for r in results if r["status"] == "kept"]
    path = write_rows(rows, run_dir / f"{name}.parquet")
    write_json(run_dir / f"{name}.json", doc)
    return path
