"""The table of every document format agentpost writes or ships, and the ``producer`` block.

Adding a document is one row here: its name and version, the file it is written to by default,
the command that writes it and, when the report reads it, the report section's kind
(``report.scan.KINDS``). The report classifies a file by this table (``kind_of``), never by a
substring of its format, and ``tests/test_documents.py`` fails on a format string in ``src/``
that is not a row, or a producer name that does not resolve to a module and function.

A producer block says what wrote a document: ``{"name": "<module>.<function>", "version",
"args"}``, built by ``producer(function, **args)`` so that the name is always a real function.
Canonical trajectories keep their importer's name (``agentpost.import.<format>``, resolved
through the importer table) and the agent loop's module name, as golden files pin them.

Layer: model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentpost import __version__


@dataclass(frozen=True)
class Format:
    """One document format: ``name/version`` is what its ``format`` field holds."""

    name: str  # e.g. "agentpost.efficiency"
    version: int
    files: str  # the default file name (a glob when it varies)
    writer: str  # the command that writes it ("bundled" for data shipped in the package)
    kind: str | None = None  # the report section that reads it (report.scan.KINDS)

    @property
    def id(self) -> str:
        return f"{self.name}/{self.version}"


_ROWS = [
    Format("agentpost.trajectory", 1, "trajectories.jsonl", "agentpost import | run", "trajectories"),
    Format("agentpost.run", 1, "run.json", "agentpost run", "run_summary"),
    Format("agentpost.import", 1, "import.json", "agentpost demo", "import"),
    Format("agentpost.efficiency", 1, "efficiency.json", "agentpost efficiency -o", "efficiency"),
    Format("agentpost.hero-groups", 1, "hero_groups.json", "agentpost hero groups -o", "hero_groups"),
    Format("agentpost.hero-advantages", 1, "hero_advantages.json", "agentpost hero advantages -o",
           "advantages"),
    Format("agentpost.scvd.metrics", 1, "metrics.json", "agentpost diagnose | scvd metrics",
           "scvd_metrics"),
    Format("agentpost.scvd.record", 1, "records.jsonl", "agentpost diagnose", "scvd_records"),
    Format("agentpost.scvd.collect", 1, "scvd.json | ftd.json", "agentpost scvd collect | ftd"),
    Format("agentpost.scvd.match", 1, "match.json", "agentpost scvd match"),
    Format("agentpost.scvd.sample", 1, "*.parquet (meta)", "agentpost scvd collect | ftd"),
    Format("agentpost.scvd.real-calibration", 1, "scvd/data/real-calibration.json",
           "bundled"),
    Format("agentpost.scvd.real-labels-calibration", 2, "scvd/data/real-labels-calibration.json",
           "bundled"),
    Format("agentpost.replay", 1, "(stdout)", "agentpost replay --json"),
    Format("agentpost.replay-fidelity", 1, "fidelity.json", "agentpost replay --fidelity"),
    Format("agentpost.security.check", 1, "(stdout)", "agentpost security check --json",
           "security_check"),
    Format("agentpost.security.grade", 1, "(stdout)", "agentpost security grade --json",
           "security_grade"),
    Format("agentpost.security.demo-summary", 1, "summary.json", "agentpost security demo | demo",
           "security_summary"),
    Format("agentpost.security.metrics", 1, "(stdout)", "agentpost security metrics --json",
           "security_summary"),
    Format("agentpost.security.attribution", 1, "(stdout)", "agentpost security attribute",
           "security_attribute"),
    Format("agentpost.security.behaviour_labels", 1, "labels.jsonl", "agentpost security annotate"),
    Format("agentpost.security.route", 1, "(stdout)", "agentpost security route"),
    Format("agentpost.security.suite-build", 1, "manifest.json", "agentpost security build-suite"),
    Format("agentpost.security.train", 1, "summary.json", "agentpost security rl | hg"),
    Format("agentpost.security.split", 1, "security/suites/secure/split.json", "bundled"),
    Format("agentpost.security.cwe_names", 2, "security/data/cwe_names.json", "bundled"),
    Format("agentpost.security.cwe-plan-match", 2, "security/data/cwe_plan_match.json", "bundled"),
    Format("agentpost.security.markers", 1, "security/data/markers_v1.json", "bundled"),
    Format("agentpost.security.markers", 2, "security/data/markers_v2.json", "bundled"),
    Format("agentpost.sft", 1, "*.parquet", "agentpost scvd collect | ftd | match"),
    Format("agentpost.train.sft", 1, "train.json", "agentpost train sft"),
    Format("agentpost.lab-family", 1, "family.json", "agentpost lab hero"),
    Format("agentpost.lab-hero", 1, "hero_lab.json", "agentpost lab hero", "lab_hero"),
    Format("agentpost.lab-scvd", 1, "scvd_lab.json", "agentpost lab scvd", "lab_scvd"),
    Format("agentpost.lab-results", 1, "results.json", "agentpost lab results"),
    Format("agentpost.lab-preflight", 1, "preflight.json", "agentpost lab preflight"),
    Format("agentpost.tasks-check", 1, "(stdout)", "agentpost tasks check --json"),
    Format("agentpost.swebench-gate", 1, "<cache>/gates/<image>.json", "agentpost tasks check"),
    Format("agentpost.compare", 1, "compare.json", "agentpost compare"),
    Format("agentpost.verdict", 1, "(inside the report)", "agentpost report | summary"),
    Format("agentpost.report", 1, "report.html", "agentpost report"),
    Format("agentpost.demo", 1, "demo.json", "agentpost demo", "demo"),
]  # fmt: skip
FORMATS: dict[str, Format] = {f.id: f for f in _ROWS}
# A format written by a newer version still classifies by its name (its reader says if it can).
_BY_NAME: dict[str, Format] = {f.name: f for f in _ROWS}


def fmt(name: str, version: int = 1) -> str:
    """The ``format`` value of a document in the table; a name or version not in it is a bug."""
    value = f"{name}/{version}"
    if value not in FORMATS:
        raise KeyError(f"{value} is not in documents.formats.FORMATS; add a row")
    return value


def lookup(value: Any) -> Format | None:
    """The row of a ``format`` value (``agentpost.x/N``; any N of a known name), else None."""
    if not isinstance(value, str):
        return None
    return FORMATS.get(value) or _BY_NAME.get(value.rpartition("/")[0])


def kind_of(doc: Any) -> str | None:
    """The report kind of a document, from its ``format`` field alone (None: not in the table
    or not read by the report)."""
    row = lookup(doc.get("format")) if isinstance(doc, dict) else None
    return row.kind if row else None


def producer(fn: Callable[..., Any], /, **args: Any) -> dict[str, Any]:
    """The producer block of a document ``fn`` wrote with ``args``: ``name`` is the function's
    module and qualified name, so a reader can find the code that made every number."""
    return {"name": f"{fn.__module__}.{fn.__qualname__}", "version": __version__, "args": args}
