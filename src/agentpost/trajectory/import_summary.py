"""What `agentpost import` does, as one function: files or folders in, one canonical JSONL file
out, and the summary it prints with ``--json`` (and writes with ``--summary``); the demo's import
stage calls the same function, so its ``import.json`` is this document.

Layer: io.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentpost.documents import formats as documents  # not `fmt`: a parameter here
from agentpost.errors import InputError

SUMMARY_FORMAT = documents.fmt("agentpost.import")


@dataclass
class ImportSummary:
    """Counts of one import: trajectories written, files read, trajectories per source format,
    the output (None when nothing was written), skipped companion files and one-line errors."""

    imported: int = 0
    files: int = 0
    formats: dict[str, int] = field(default_factory=dict)
    out: str | None = None
    skipped: list[dict[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.imported, "files": self.files, "formats": self.formats,
                "out": self.out, "skipped": self.skipped, "errors": self.errors}  # fmt: skip


def import_to_file(
    paths: list[Path],
    out: Path,
    fmt: str | None = None,
    keep_raw: bool = False,
    workers: int = 1,
) -> ImportSummary:
    """Import every trajectory file under ``paths`` into ``out`` (streamed, written atomically).
    Raises ``InputError`` for an unknown ``fmt`` or when no file is found; bad files are counted
    in ``errors`` and the good ones are still written."""
    from agentpost.trajectory.importers import get_importer
    from agentpost.trajectory.importing import SUFFIXES, ImportReport, iter_files, iter_import
    from agentpost.trajectory.io import write_jsonl

    if fmt is not None:
        get_importer(fmt)  # fail early on an unknown name
    files = iter_files(paths, exclude=out)
    if not files:
        where = " ".join(map(str, paths))
        raise InputError(where, None, f"no trajectory files here ({', '.join(SUFFIXES)})")
    report = ImportReport()
    formats: dict[str, int] = {}

    def counted():
        for t in iter_import(files, report, fmt, keep_raw, workers):
            key = t.source.format if t.source else "agentpost"  # written by agentpost itself
            formats[key] = formats.get(key, 0) + 1
            yield t

    n = write_jsonl(out, counted())
    if n == 0 and report.errors and out.is_file():  # never unlink a device (-o /dev/null)
        out.unlink(missing_ok=True)  # nothing good to keep
    return ImportSummary(
        imported=n, files=report.files, formats=formats,
        out=str(out) if out.exists() else None,
        skipped=[{"path": str(p), "reason": r} for p, r in report.skipped],
        errors=[e.one_line() for e in report.errors],
    )  # fmt: skip


def summary_document(summary: ImportSummary, args: dict[str, Any]) -> dict[str, Any]:
    """The import summary as a document: format, producer, the counts, the format detected (the
    most common source format; None when nothing was imported)."""
    detected = max(summary.formats, key=summary.formats.__getitem__) if summary.formats else None
    return {
        "format": SUMMARY_FORMAT,
        "producer": documents.producer(import_to_file, **args),
        **summary.to_json(),
        "detected_format": detected,
        "trajectories": summary.imported,
    }


def write_import_summary(
    path: Path, summary: ImportSummary, args: dict[str, Any]
) -> dict[str, Any]:
    """Write ``summary_document(summary, args)`` as indented JSON (``documents.write``: whole
    or absent); returns the document."""
    from agentpost.documents.write import write_json

    doc = summary_document(summary, args)
    write_json(path, doc)
    return doc
