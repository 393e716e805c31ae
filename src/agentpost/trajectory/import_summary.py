"""What `agentpost import` does, as one function: files or folders in, one canonical JSONL file
out, and the summary it prints with ``--json`` (and writes with ``--summary``); the demo's import
stage calls the same function, so its ``import.json`` is this document.

Layer: io.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentpost.documents import formats as documents  # not `fmt`: a parameter here
from agentpost.errors import InputError
from agentpost.trajectory.coverage import Tally, coverage, import_info, shortfalls

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
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.imported, "files": self.files, "formats": self.formats,
                "out": self.out, "skipped": self.skipped, "errors": self.errors,
                "coverage": self.coverage, "warnings": self.warnings}  # fmt: skip


def warnings_of(t: Any, n: dict[str, int]) -> list[str]:
    """One line per thing the import of ``t`` did not fully understand, naming the file (and
    record), the place or field, and the trajectory: its importer's cross-check findings, then
    where its coverage falls short of what its layout promises."""
    src = t.source
    head = (
        f"{src.path}: {src.record}: "
        if src is not None and src.record
        else (f"{src.path}: " if src is not None else "")
    )
    found = [
        f"{w[0]}: {w[1]}"
        for w in import_info(t).get("warnings") or []
        if isinstance(w, list) and len(w) == 2
    ]
    return [f"{head}{w} (trajectory {t.id})" for w in found + shortfalls(t, n)]


def grouped(warnings: list[str]) -> list[str]:
    """The warnings with those that differ only in their record and trajectory (the same
    finding on many lines of one file) said once, with how many there were."""
    key = re.compile(r"^(.*?): (?:line \d+: )?(.*?) \(trajectory .*\)$", re.S)
    groups: dict[tuple[str, str], list[str]] = {}
    for w in warnings:
        m = key.match(w)
        k = (m.group(1), m.group(2)) if m else (w, "")
        groups.setdefault(k, []).append(w)
    out = []
    for (path, what), ws in groups.items():
        out.append(ws[0] if len(ws) == 1 else f"{path}: {what} (in {len(ws)} trajectories)")
    return out


def import_to_file(
    paths: list[Path],
    out: Path,
    fmt: str | None = None,
    keep_raw: bool = False,
    workers: int = 1,
    skip_hidden: bool = False,
    run_id: str | None = None,
) -> ImportSummary:
    """Import every trajectory file under ``paths`` into ``out`` (streamed, written atomically).
    Raises ``InputError`` for an unknown ``fmt`` or when no file is found; bad files are counted
    in ``errors`` and the good ones are still written. ``coverage`` adds up, per source format,
    what the files held (``trajectory.coverage``); ``warnings`` says, per file, what was only
    partly understood. ``skip_hidden`` leaves dot-folders under ``paths`` out of the walk.
    ``run_id`` (``import --name``) names the source: every trajectory gets it as its run id."""
    from agentpost.trajectory.importers import get_importer
    from agentpost.trajectory.importing import SUFFIXES, ImportReport, iter_files, iter_import
    from agentpost.trajectory.io import write_jsonl

    if fmt is not None:
        get_importer(fmt)  # fail early on an unknown name
    files = iter_files(paths, exclude=out, skip_hidden=skip_hidden)
    if not files:
        where = " ".join(map(str, paths))
        raise InputError(where, None, f"no trajectory files here ({', '.join(SUFFIXES)})")
    report = ImportReport()
    formats: dict[str, int] = {}
    tally = Tally()
    warnings: list[str] = []

    def counted():
        for t in iter_import(files, report, fmt, keep_raw, workers):
            if run_id is not None:
                t.run_id = run_id
            key = t.source.format if t.source else "agentpost"  # written by agentpost itself
            formats[key] = formats.get(key, 0) + 1
            n = coverage(t)
            tally.add(key, t.source.path if t.source else None, n)
            warnings.extend(warnings_of(t, n))
            yield t

    n = write_jsonl(out, counted())
    if n == 0 and report.errors and out.is_file():  # never unlink a device (-o /dev/null)
        out.unlink(missing_ok=True)  # nothing good to keep
    return ImportSummary(
        imported=n, files=report.files, formats=formats,
        out=str(out) if out.exists() else None,
        skipped=[{"path": str(p), "reason": r} for p, r in report.skipped],
        errors=[e.one_line() for e in report.errors],
        coverage=tally.to_json(), warnings=warnings,
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
