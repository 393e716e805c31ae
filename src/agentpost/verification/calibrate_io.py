"""Read calibration inputs and run ``calibration.calibrate``.

Labels: JSONL, one hand-checked annotation per line (the eight fields), optionally with
``call_order`` ([[step, index], ...] in trajectory order, for the ±1-call boundary match) and
``trajectory`` (the canonical trajectory, so offline judges can be run on the labelled set).

Annotations, one or more files, each either
- JSONL of eight-field annotations (the judge is the line's ``judge`` field, else the file stem;
  a line with ``"annotation": null`` or ``"valid": false`` is an abstention), or
- a diagnose run's ``records.jsonl`` (every judge of the panel, by its id).

``heuristic=True`` also runs the three heuristic variants on the labels' embedded trajectories.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from agentpost.errors import InputError
from agentpost.trajectory.model import Trajectory
from agentpost.verification import heuristic
from agentpost.verification.calibration import calibrate
from agentpost.verification.protocol import AnnotationError, parse_annotation
from agentpost.verification.records import FIELDS, Annotation

DATA = Path(__file__).resolve().parent / "data"
BUNDLED_LABELS = DATA / "calibration.jsonl"


def _rows(path: Path) -> list[dict]:
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e}") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if line.strip():
            try:
                out.append((n, orjson.loads(line)))
            except orjson.JSONDecodeError as e:
                raise InputError(path, f"line {n}", f"invalid JSON: {e}") from None
    return out


def _annotation(row: dict, path: Path, n: int) -> Annotation:
    try:
        return parse_annotation(orjson.dumps({k: row.get(k) for k in FIELDS}).decode())
    except AnnotationError as e:
        raise InputError(path, f"line {n}", str(e)) from None


def read_labels(path: Path) -> tuple[dict[str, Annotation], dict[str, list], dict[str, Trajectory]]:
    labels, orders, trajs = {}, {}, {}
    for n, row in _rows(path):
        lab = _annotation(row, path, n)
        labels[lab.case_id] = lab
        if row.get("call_order"):
            orders[lab.case_id] = [tuple(x) for x in row["call_order"]]
        if row.get("trajectory"):
            trajs[lab.case_id] = Trajectory.model_validate(row["trajectory"])
    return labels, orders, trajs


def read_annotations(path: Path) -> dict[str, dict[str, Annotation | None]]:
    """judge → case_id → annotation (None = abstained)."""
    out: dict[str, dict[str, Annotation | None]] = {}
    for n, row in _rows(path):
        if "judges" in row and "case_id" in row:  # a diagnose records.jsonl line
            for jr in row["judges"]:
                ann = jr.get("annotation")
                out.setdefault(jr["judge"], {})[row["case_id"]] = (
                    Annotation.from_json(ann) if ann else None
                )
            continue
        judge = str(row.get("judge") or Path(path).stem)
        if row.get("annotation", True) is None or row.get("valid") is False:
            out.setdefault(judge, {})[str(row.get("case_id"))] = None
            continue
        src = row.get("annotation") if isinstance(row.get("annotation"), dict) else row
        ann = _annotation(src, path, n)
        out.setdefault(judge, {})[ann.case_id] = ann
    return out


def heuristic_annotations(trajs: dict[str, Trajectory]) -> dict[str, dict[str, Annotation]]:
    return {f"heuristic-{v}": {cid: heuristic.annotate(t, cid, v) for cid, t in trajs.items()}
            for v in heuristic.VARIANTS}  # fmt: skip


def calibrate_files(
    labels_path: Path, annotation_paths: list[Path], heuristic_judges: bool = False
) -> dict:
    labels, orders, trajs = read_labels(labels_path)
    judges: dict[str, dict] = {}
    for p in annotation_paths:
        for name, anns in read_annotations(p).items():
            judges.setdefault(name, {}).update(anns)
    if heuristic_judges:
        if len(trajs) != len(labels):
            raise InputError(
                labels_path, None, "--heuristic needs a 'trajectory' on every label line"
            )
        judges.update(heuristic_annotations(trajs))
    if not judges:
        raise InputError(None, "ANNOTATIONS", "give annotation files or --heuristic")
    doc = calibrate(labels, judges, orders)
    doc["labels"] = {"path": str(labels_path), "n": len(labels)}
    return doc
