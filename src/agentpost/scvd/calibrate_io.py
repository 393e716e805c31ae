"""Read calibration inputs and run ``calibration.calibrate``.

Labels: JSONL, one hand-checked annotation per line (the eight fields), optionally with
``call_order`` ([[step, index], ...] in trajectory order, for the ±1-call boundary match) and
``trajectory`` (the canonical trajectory, so offline judges can be run on the labelled set).

Annotations, one or more files, each either
- JSONL of eight-field annotations (the judge is the line's ``judge`` field, else the file stem;
  a line with ``"annotation": null`` or ``"valid": false`` is an abstention), or
- a diagnose run's ``records.jsonl`` (every judge of the panel, by its id).

``heuristic=True`` also runs the three heuristic variants on the labels' embedded trajectories
and scores the embedded default panel (their vote). A records.jsonl also scores its panel's
decisions. Panels are reported under ``panels``, apart from the judges (no arbiter, no α).
``read_rows`` is also the JSONL reader of ``agentpost scvd metrics``.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from agentpost.errors import InputError
from agentpost.judges.config import DEFAULT_CONFIG
from agentpost.scvd import heuristic
from agentpost.scvd.calibration import calibrate, judge_report
from agentpost.scvd.panel import decision_annotation, vote
from agentpost.scvd.protocol import AnnotationError, parse_annotation
from agentpost.scvd.records import FIELDS, Annotation, PanelDecision
from agentpost.trajectory.io import validate
from agentpost.trajectory.model import Trajectory

DATA = Path(__file__).resolve().parent / "data"
BUNDLED_LABELS = DATA / "calibration.jsonl"


def read_rows(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) for every non-blank line; ``InputError`` naming file and line."""
    from agentpost.trajectory.io import read_regular

    lines = read_regular(path).splitlines()  # a FIFO or device is refused, not read forever
    out = []
    for n, line in enumerate(lines, start=1):
        if line.strip():
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                hint = ""
                if n == 1 and line.strip() in (b"{", b"["):  # e.g. metrics.json, not records
                    hint = " (a multi-line JSON document; this command reads JSONL)"
                raise InputError(path, f"line {n}", f"invalid JSON: {e.msg}{hint}") from None
            if not isinstance(row, dict):
                raise InputError(path, f"line {n}", "expected a JSON object")
            out.append((n, row))
    return out


def _annotation(row: dict, path: Path, n: int) -> Annotation:
    try:
        return parse_annotation(orjson.dumps({k: row.get(k) for k in FIELDS}).decode())
    except AnnotationError as e:
        raise InputError(path, f"line {n}", str(e)) from None


def read_labels(path: Path) -> tuple[dict[str, Annotation], dict[str, list], dict[str, Trajectory]]:
    labels, orders, trajs = {}, {}, {}
    for n, row in read_rows(path):
        lab = _annotation(row, path, n)
        labels[lab.case_id] = lab
        if row.get("call_order"):
            orders[lab.case_id] = [tuple(x) for x in row["call_order"]]
        if row.get("trajectory"):
            trajs[lab.case_id] = validate(row["trajectory"], path, f"line {n}: trajectory")
    return labels, orders, trajs


def read_annotations(path: Path) -> tuple[dict[str, dict], dict[str, Annotation | None]]:
    """(judge → case_id → annotation (None = abstained), case_id → the panel's decision as an
    annotation, from a diagnose run's records.jsonl lines)."""
    out: dict[str, dict[str, Annotation | None]] = {}
    panel: dict[str, Annotation | None] = {}
    for n, row in read_rows(path):
        if "judges" in row and "case_id" in row:  # a diagnose records.jsonl line
            dec = row.get("decision") or {}
            if dec.get("resolved_by") in ("vote", "arbiter", "unannotated"):
                try:
                    d = PanelDecision(**dec)
                except TypeError as e:
                    raise InputError(path, f"line {n}", f"bad decision: {e}") from None
                task = (row.get("record") or {}).get("task", "")
                panel[str(row["case_id"])] = decision_annotation(d, str(row["case_id"]), task)
            for jr in row["judges"]:
                if not isinstance(jr, dict) or "judge" not in jr:
                    raise InputError(path, f"line {n}", "each of 'judges' needs a 'judge' id")
                ann = jr.get("annotation")
                out.setdefault(str(jr["judge"]), {})[str(row["case_id"])] = (
                    _annotation(ann, path, n) if isinstance(ann, dict) else None
                )
            continue
        judge = str(row.get("judge") or Path(path).stem)
        if row.get("annotation", True) is None or row.get("valid") is False:
            out.setdefault(judge, {})[str(row.get("case_id"))] = None
            continue
        src = row.get("annotation") if isinstance(row.get("annotation"), dict) else row
        ann = _annotation(src, path, n)
        out.setdefault(judge, {})[ann.case_id] = ann
    return out, panel


def heuristic_annotations(trajs: dict[str, Trajectory]) -> dict[str, dict[str, Annotation]]:
    return {f"heuristic-{v}": {cid: heuristic.annotate(t, cid, v) for cid, t in trajs.items()}
            for v in heuristic.VARIANTS}  # fmt: skip


def default_panel(judges: dict[str, dict[str, Annotation]]) -> dict[str, Annotation | None]:
    """The embedded default panel's decisions (the three variants voting, its arbiter)."""
    ids = [j["id"] for j in DEFAULT_CONFIG["judges"]]
    arb = ids.index(DEFAULT_CONFIG["arbiter"])
    out = {}
    for cid, a in judges[ids[0]].items():
        d = vote([judges[j][cid] for j in ids], arb, ids)
        out[cid] = decision_annotation(d, cid, a.task_name)
    return out


def calibrate_files(
    labels_path: Path, annotation_paths: list[Path], heuristic_judges: bool = False
) -> dict:
    labels, orders, trajs = read_labels(labels_path)
    judges: dict[str, dict] = {}
    panels: dict[str, dict] = {}
    for p in annotation_paths:
        anns_by_judge, panel = read_annotations(p)
        for name, anns in anns_by_judge.items():
            judges.setdefault(name, {}).update(anns)
        if panel:
            panels[f"panel ({p})"] = panel
    if heuristic_judges:
        if len(trajs) != len(labels):
            raise InputError(
                labels_path, None, "--heuristic needs a 'trajectory' on every label line"
            )
        heur = heuristic_annotations(trajs)
        judges.update(heur)
        panels["default panel (heuristic vote)"] = default_panel(heur)
    if not judges:
        raise InputError(None, "ANNOTATIONS", "give annotation files or --heuristic")
    doc = calibrate(labels, judges, orders)
    # panels are scored like judges but are not candidates for arbiter nor coders in alpha
    doc["panels"] = {name: judge_report(labels, got, orders) for name, got in panels.items()}
    doc["labels"] = {"path": str(labels_path), "n": len(labels)}
    return doc
