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
from agentpost.scvd import heuristic, real_labels, seats
from agentpost.scvd.calibration import calibrate, judge_report
from agentpost.scvd.panel import agreement_stats, decision_annotation, vote
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


def read_annotations(path: Path, with_kinds: bool = False):
    """(judge → case_id → annotation (None = abstained), case_id → the panel's decision as an
    annotation, from a diagnose run's records.jsonl lines); with ``with_kinds`` also judge →
    kind (``rule``/``model``/``recorded``, from a records line's ``judge_kinds`` or an annotation
    line's ``kind``)."""
    out: dict[str, dict[str, Annotation | None]] = {}
    panel: dict[str, Annotation | None] = {}
    kinds: dict[str, str] = {}
    for n, row in read_rows(path):
        if isinstance(row.get("judge_kinds"), dict):
            kinds.update({str(k): str(v) for k, v in row["judge_kinds"].items()})
        elif isinstance(row.get("kind"), str) and row.get("judge"):
            kinds[str(row["judge"])] = row["kind"]
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
    return (out, panel, kinds) if with_kinds else (out, panel)


LEGACY_CONFIG: dict = {
    "judges": [
        {"id": f"heuristic-{v}", "kind": "heuristic", "variant": v} for v in heuristic.VARIANTS
    ],
    "arbiter": "heuristic-artifact",
}


def heuristic_annotations(trajs: dict[str, Trajectory], legacy: bool = False,
                          diffs: dict[str, dict] | None = None) -> dict[str, dict[str, Annotation | None]]:  # fmt: skip
    """The default panel's rule seats on ``trajs`` (and the earlier single-rule heuristic's
    three variants when ``legacy``), by judge id."""
    out: dict[str, dict[str, Annotation | None]] = {}
    for spec in DEFAULT_CONFIG["judges"]:
        out[spec["id"]] = {cid: seats.annotate_seat(t, cid, spec["variant"], (diffs or {}).get(cid))
                           for cid, t in trajs.items()}  # fmt: skip
    if legacy:
        for spec in LEGACY_CONFIG["judges"]:
            out[spec["id"]] = {
                cid: heuristic.annotate(t, cid, spec["variant"]) for cid, t in trajs.items()
            }
    return out


def panel_decisions(judges: dict[str, dict[str, Annotation | None]], config: dict = DEFAULT_CONFIG,
                    ) -> tuple[dict[str, Annotation | None], list[PanelDecision]]:  # fmt: skip
    """A config's panel voting over ``judges`` (spec b.3): each case's decision as an
    annotation, and the raw decisions (for the agreement statistics)."""
    ids = [j["id"] for j in config["judges"]]
    arb = ids.index(config["arbiter"])
    out, decisions = {}, []
    for cid in judges[ids[0]]:
        d = vote([judges[j].get(cid) for j in ids], arb, ids)
        task = next((a.task_name for j in ids if (a := judges[j].get(cid)) is not None), "")
        out[cid] = decision_annotation(d, cid, task)
        decisions.append(d)
    return out, decisions


def default_panel(judges: dict[str, dict[str, Annotation | None]], config: dict = DEFAULT_CONFIG
                  ) -> dict[str, Annotation | None]:  # fmt: skip
    """The panel's decisions as annotations (see ``panel_decisions``)."""
    return panel_decisions(judges, config)[0]


def is_real_labels(path: Path) -> bool:
    """A label file whose lines name their trajectory by ``path`` (``real_labels``)."""
    for _, row in read_rows(path)[:1]:
        return "path" in row and "trajectory" not in row
    return False


def calibrate_files(
    labels_path: Path,
    annotation_paths: list[Path],
    heuristic_judges: bool = False,
    roots: list[Path] | None = None,
    split: str | None = None,
    legacy: bool = False,
    score_once: str | None = None,
) -> dict:
    """Score judges against labels: files of annotations, and with ``heuristic_judges`` the
    default panel's rule seats run on the labelled trajectories. A real-label file
    (``real_labels``) reads its trajectories from ``roots``; ``split`` keeps one split. Labels of
    a held-out batch frozen but not scored yet are withheld (left out, counted in
    ``labels.withheld``), except the batch ``score_once`` names (its one score)."""
    missing: list[str] = []
    held: dict[str, int] = {}
    if is_real_labels(labels_path):
        real = real_labels.load(labels_path, roots or real_labels.default_roots()).only(split)
        hold = real_labels.withheld(labels_path, score_once)
        for c in real.labels:
            if real.batches.get(c) in hold:
                held[real.batches[c]] = held.get(real.batches[c], 0) + 1
        real = real.without(hold)
        labels, orders, trajs, missing = real.labels, real.orders, real.trajs, real.missing
        if not labels and held:
            raise InputError(labels_path, None, f"{', '.join(sorted(held))}: frozen held-out labels, "
                             "not scored yet, are withheld until their one score "
                             "(tests/scvd/make_real_labels_calibration.py --score-once BATCH)")  # fmt: skip
        if not labels:
            raise InputError(labels_path, None, f"no labelled trajectory found under {roots or 'the default data roots'}"
                             " (give --data-root, e.g. ../shared/data/trajectories)")  # fmt: skip
    else:
        labels, orders, trajs = read_labels(labels_path)
    judges: dict[str, dict] = {}
    kinds: dict[str, str] = {}
    panels: dict[str, dict] = {}
    agreement: dict[str, dict] = {}
    for p in annotation_paths:
        anns_by_judge, panel, found_kinds = read_annotations(p, with_kinds=True)
        for name, anns in anns_by_judge.items():
            judges.setdefault(name, {}).update(anns)
        kinds.update(found_kinds)
        if panel:
            panels[f"panel ({p})"] = panel
    if heuristic_judges:
        if len(trajs) != len(labels):
            raise InputError(
                labels_path, None, "--heuristic needs a 'trajectory' on every label line"
            )
        heur = heuristic_annotations(trajs, legacy)
        judges.update(heur)
        kinds.update({name: "rule" for name in heur})
        for name, cfg in (("default panel (rule seats voting)", DEFAULT_CONFIG),
                          ("earlier panel (heuristic/3 variants voting)", LEGACY_CONFIG)):  # fmt: skip
            if cfg is LEGACY_CONFIG and not legacy:
                continue
            panels[name], decisions = panel_decisions(heur, cfg)
            seats_only = {j["id"]: heur[j["id"]] for j in cfg["judges"]}
            agreement[name] = {**agreement_stats(decisions),
                               "alpha": calibrate(labels, seats_only, orders)["krippendorff_alpha"]}  # fmt: skip
    if not judges:
        raise InputError(None, "ANNOTATIONS", "give annotation files or --heuristic")
    doc = calibrate(labels, judges, orders)
    # panels are scored like judges but are not candidates for arbiter nor coders in alpha
    doc["panels"] = {name: judge_report(labels, got, orders) for name, got in panels.items()}
    for name, stats in agreement.items():
        doc["panels"][name]["agreement"] = stats
    doc["seats"] = {name: kinds.get(name, "unknown") for name in judges}
    doc["labels"] = {"path": str(labels_path), "n": len(labels), "split": split or "all",
                     "missing_files": len(missing), "withheld": held}  # fmt: skip
    return doc
