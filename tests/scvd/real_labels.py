"""Hand labels of real trajectories (fixtures/real-labels: labels.jsonl, LABELLING.md), loaded
against ../shared/data, with every label's text anchor checked against its boundary call."""

from __future__ import annotations

import json
from pathlib import Path

from shared_data import TRAJECTORIES

from agentpost.scvd.calibrate_io import LEGACY_CONFIG, default_panel
from agentpost.scvd.calibration import calibrate, judge_report
from agentpost.scvd.examples import label
from agentpost.scvd.heuristic import VARIANTS, annotate
from agentpost.scvd.protocol import step_ids
from agentpost.scvd.records import Annotation
from agentpost.trajectory.importing import import_file

HERE = Path(__file__).resolve().parent
LABELS = HERE / "fixtures" / "real-labels" / "labels.jsonl"
DATA = TRAJECTORIES  # the labels name files by their place in ../shared/data/trajectories


def local(rel: str) -> Path:
    """Where a labelled file lives (``../shared/data/trajectories/REL``)."""
    return DATA / rel


def load():
    """{path: (trajectory, Annotation, call_order, split)}; raises if an anchor is missing."""
    out = {}
    for line in LABELS.read_text().splitlines():
        row = json.loads(line)
        (traj,) = import_file(local(row["path"]))
        lab = Annotation.from_json(label(row["path"], traj.task_id or "", row["candidate_step"],
                                         row["candidate_tool_call_index"], row["boundary_type"],
                                         row["verification_triggered"], row["verification_outcome"]))  # fmt: skip
        turns = step_ids(traj)
        if row["anchor"] is not None:
            call = turns[row["candidate_step"]].tool_calls[row["candidate_tool_call_index"]]
            text = (call.command or "") + json.dumps(call.arguments, ensure_ascii=False)
            if row["anchor"] not in text and row["anchor"] not in json.dumps(text):
                raise AssertionError(
                    f"{row['path']}: anchor {row['anchor']!r} not in the boundary call"
                )
        order = [(s, j) for s, t in turns.items() for j in range(len(t.tool_calls))]
        out[row["path"]] = (traj, lab, order, row["split"])
    return out


def measure(cases, split: str | None = None) -> dict:
    """Calibration of the three heuristic variants and the default panel on ``split``."""
    sel = {p: c for p, c in cases.items() if split is None or c[3] == split}
    labels = {p: c[1] for p, c in sel.items()}
    orders = {p: c[2] for p, c in sel.items()}
    judges = {f"heuristic-{v}": {p: annotate(c[0], p, v) for p, c in sel.items()} for v in VARIANTS}
    doc = calibrate(labels, judges, orders)
    doc["panel"] = judge_report(labels, default_panel(judges, LEGACY_CONFIG), orders)
    doc["misses"] = {
        name: sorted(p for p, a in got.items() if _wrong(a, labels[p])) for name, got in
        [*judges.items(), ("panel", default_panel(judges, LEGACY_CONFIG))]
    }  # fmt: skip
    return doc


def _wrong(a: Annotation | None, lab: Annotation) -> bool:
    if a is None:
        return True
    keys = (
        "candidate_formed",
        "candidate_step",
        "candidate_tool_call_index",
        "verification_triggered",
        "z",
    )
    return any(getattr(a, k) != getattr(lab, k) for k in keys)
