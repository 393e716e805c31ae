"""SCVD data types: the eight-field annotation, one judge's result, the panel decision and the
per-trajectory record that the metrics read.

Formats: annotations follow spec b.2 (snake_case names); a record line of
``records.jsonl`` is ``agentpost.scvd.record/1``; the metric input line is the flat
``{"model", "run", "task", "I_c", "I_v", "z", "y_c", "y_f"}`` (``MetricRecord``), read by
``from_dicts``, which refuses records that contradict themselves (``record_errors``) rather than
let the metric masks read them silently.

Layer: model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

RECORD_FORMAT = "agentpost.scvd.record/1"
METRICS_FORMAT = "agentpost.scvd.metrics/1"

BoundaryType = Literal["clean", "includes_first_verification"]
Outcome = Literal["exposes_error", "supports_pass", "no_effective_result"]
Z = Literal["error", "no-error", "unresolved"]

FIELDS = (
    "case_id",
    "task_name",
    "candidate_formed",
    "candidate_step",
    "candidate_tool_call_index",
    "boundary_type",
    "verification_triggered",
    "verification_outcome",
)
BOUNDARY_TYPES = ("clean", "includes_first_verification")
OUTCOMES = ("exposes_error", "supports_pass", "no_effective_result")
OUTCOME_TO_Z: dict[str, str] = {
    "exposes_error": "error",
    "supports_pass": "no-error",
    "no_effective_result": "unresolved",
}
Z_TO_OUTCOME = {v: k for k, v in OUTCOME_TO_Z.items()}


@dataclass(frozen=True)
class Annotation:
    """One parsed annotation with the eight fields of spec b.2 (validity is checked elsewhere)."""

    case_id: str
    task_name: str
    candidate_formed: bool
    candidate_step: int | None
    candidate_tool_call_index: int | None
    boundary_type: str | None
    verification_triggered: bool
    verification_outcome: str | None

    @property
    def z(self) -> str | None:
        """The outcome as z (error / no-error / unresolved), None when no verification."""
        return OUTCOME_TO_Z.get(self.verification_outcome or "")

    def boundary_tuple(self) -> tuple:
        """B = (I_c, candidate_step, candidate_tool_call_index, boundary_type)."""
        return (
            self.candidate_formed,
            self.candidate_step,
            self.candidate_tool_call_index,
            self.boundary_type,
        )

    def semantics_tuple(self) -> tuple:
        """S = (I_c, I_v, z)."""
        return (self.candidate_formed, self.verification_triggered, self.z)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Annotation:
        return cls(**{k: data.get(k) for k in FIELDS})


@dataclass
class JudgeResult:
    """What one judge said about one trajectory after at most two re-asks.

    ``status``: ``valid`` (annotation passed parsing and rules 1–5), ``abstained`` (still invalid
    after the re-asks; ``errors`` says why), ``infra_error`` (the endpoint failed after the
    transport's retries; never cached, so a rerun tries again), ``budget`` (a budget stopped it).
    """

    judge: str
    status: Literal["valid", "abstained", "infra_error", "budget"]
    annotation: Annotation | None = None
    raw: list[str | None] = field(default_factory=list)  # per attempt; None: no usable body
    errors: list[str] = field(default_factory=list)
    attempts: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    request_keys: list[str] = field(default_factory=list)  # sha256 of each request's messages

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["annotation"] = self.annotation.to_json() if self.annotation else None
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeResult:
        ann = data.get("annotation")
        return cls(
            judge=data["judge"],
            status=data["status"],
            annotation=Annotation.from_json(ann) if ann else None,
            raw=list(data.get("raw", [])),
            errors=list(data.get("errors", [])),
            attempts=int(data.get("attempts", 0)),
            usage=dict(data.get("usage", {})),
            request_keys=list(data.get("request_keys", [])),
        )


@dataclass(frozen=True)
class PanelDecision:
    """The panel's decision (spec b.3). ``resolved_by`` is ``vote``, ``arbiter`` or
    ``unannotated`` (no usable decision; excluded from the metrics). ``agreement_*``: how many
    judges gave the majority tuple (3 or 2 on the three-judge panel; 0 = no majority)."""

    resolved_by: Literal["vote", "arbiter", "unannotated"]
    candidate_formed: bool | None
    candidate_step: int | None
    candidate_tool_call_index: int | None
    boundary_type: str | None
    verification_triggered: bool | None
    z: str | None
    agreement_boundary: int
    agreement_semantics: int
    n_valid: int
    arbiter: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MetricRecord:
    """One trajectory as the metrics see it. ``I_c``/``I_v`` are None when unannotated; ``y_c`` is
    None when not replayed or the replay failed; ``y_f`` None when the run has no grade."""

    model: str
    run: str
    task: str
    I_c: bool | None
    I_v: bool | None
    z: str | None
    y_c: int | None
    y_f: int | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_Z = {"error": "error", "no-error": "no-error", "no_error": "no-error", "no error": "no-error",
      "unresolved": "unresolved"}  # fmt: skip


def normalise_z(z: str | None) -> str | None:
    if z is None:
        return None
    if z not in _Z:
        raise ValueError(f"z must be error, no-error, unresolved or null, not {z!r}")
    return _Z[z]


def from_dicts(rows: Iterable[dict]) -> list[MetricRecord]:
    """Metric records from ``{"model","run","task","I_c","I_v","z","y_c","y_f"}`` dicts, or from
    the per-trajectory lines ``agentpost diagnose`` writes (their ``record`` field); raises
    ``ValueError`` for a missing key, a bad value or a record that breaks ``record_errors``."""
    out = []
    for row in rows:
        if isinstance(row.get("record"), dict):
            row = row["record"]
        missing = [k for k in ("model", "run", "task") if row.get(k) is None]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        rec = MetricRecord(
            model=str(row["model"]), run=str(row["run"]), task=str(row["task"]),
            I_c=_opt_bool(row.get("I_c")), I_v=_opt_bool(row.get("I_v")),
            z=normalise_z(row.get("z")), y_c=_opt01(row.get("y_c")), y_f=_opt01(row.get("y_f")),
        )  # fmt: skip
        errs = record_errors(rec)
        if errs:
            raise ValueError("; ".join(errs))
        out.append(rec)
    return out


def record_errors(r: MetricRecord) -> list[str]:
    """Contradictions the masks would otherwise read silently (the b.2 consistency rules in
    record form, plus: y_c is measured only for I_c = I_v = 1, spec b.5)."""
    errs = []
    if r.I_c is None and (r.I_v is not None or r.z is not None):
        errs.append("unannotated (I_c null) needs I_v and z null")
    if r.I_c is False and (r.I_v or r.z is not None):
        errs.append("I_c false needs I_v false and z null")
    if r.I_v and r.z is None:
        errs.append("I_v true needs z (error, no-error or unresolved)")
    if r.I_c and r.I_v is None:
        errs.append("I_c true needs I_v true or false")
    if r.I_v is False and r.z is not None:
        errs.append("I_v false needs z null")
    if r.y_c is not None and not (r.I_c and r.I_v):
        errs.append("y_c is replayed only for I_c = I_v = true; give null")
    return errs


def _opt_bool(v) -> bool | None:
    if v is None:
        return None
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    raise ValueError(f"expected true/false/0/1/null, got {v!r}")


def _opt01(v) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or v in (0, 1):
        return int(v)
    raise ValueError(f"expected 0/1/null, got {v!r}")
