"""Read hand labels of real trajectories that live outside the project (``data/real-labels.jsonl``).

A label line names its trajectory by ``path`` (relative to a data root such as
``../shared/data/trajectories``) and ``index`` (which trajectory of a multi-trajectory file), with
the file's ``sha256``, the b.2 fields, the ``split`` (``tune`` | ``heldout``) and the ``batch`` it
was drawn in (``BATCHES``), the ``anchor`` that
must occur in the boundary call, and what decided the boundary (``evidence``). The trajectories
are never copied into the project: they are read from the data roots, first root that has the
file wins.

Every path comes from a file a user may hand us, so it is hostile: an absolute path, a ``..``
part, or a path whose resolved location (symlinks followed) leaves its root is an ``InputError``
naming the file and line; so is a file whose content no longer has the label's sha256, and a
label whose anchor is not in its boundary call. A label whose file is in no root is skipped and
counted (``RealLabels.missing``), so a checkout without ``shared/`` still runs what it has.

A held-out batch that is frozen but not scored yet (no ``scored_once`` entry in the
``real-labels-calibration.json`` beside the label file) is withheld (``withheld``): nothing may
measure it before its one score, so that nobody tuning rules sees it by accident.

Layer: io.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agentpost.errors import InputError
from agentpost.scvd.protocol import consistency_errors
from agentpost.scvd.records import OUTCOMES, Annotation
from agentpost.trajectory.calls import step_ids
from agentpost.trajectory.importing import import_file
from agentpost.trajectory.model import Trajectory

SPLITS = ("tune", "heldout")
# which draw a label came from: v1's tune and held-out thirds (seed 2929; the held-out third was
# scored once, then moved into tune), the held-out batches v2, v3 (scored once, now tune) and v4
# and v4 (scored once, now tune), v5 (held out; data/README.md, real-labels.md)
BATCHES = ("v1-tune", "v1-heldout", "v2-heldout", "v3-heldout", "v4-heldout", "v5-heldout")
LABELS = Path(__file__).resolve().parent / "data" / "real-labels.jsonl"
CALIBRATION = "real-labels-calibration.json"  # beside a label file: its scored_once record


def withheld(path: Path = LABELS, once: str | None = None) -> set[str]:
    """The held-out batches of ``path`` frozen but not scored yet: ``split: heldout`` batches with
    no ``scored_once`` entry in the ``CALIBRATION`` file beside ``path``, less ``once`` (the batch
    being scored once now). A label file with no such record withholds nothing."""
    record = Path(path).parent / CALIBRATION
    if not record.is_file():
        return set()
    try:
        scored = set(json.loads(record.read_text(encoding="utf-8")).get("scored_once", {}))
    except (ValueError, AttributeError):
        raise InputError(record, "scored_once", "not a JSON object with scored_once") from None
    frozen = set()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line) if line.strip() else {}
        except ValueError as e:
            raise InputError(path, f"line {n}", f"not a JSON object: {e}") from None
        if isinstance(row, dict) and row.get("split") == "heldout" and row.get("batch"):
            frozen.add(row["batch"])
    return frozen - scored - {once}


@dataclass
class RealLabels:
    labels: dict[str, Annotation] = field(default_factory=dict)  # case id -> label
    orders: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    trajs: dict[str, Trajectory] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    batches: dict[str, str] = field(default_factory=dict)
    rows: dict[str, dict] = field(default_factory=dict)  # the label lines, by case id
    missing: list[str] = field(default_factory=list)  # paths found under no data root

    def only(self, split: str | None) -> RealLabels:
        """The labels of one split or one batch (None or ``all``: every label)."""
        if split in (None, "all"):
            return self
        keep = [c for c, s in self.splits.items() if split in (s, self.batches.get(c))]
        return RealLabels({c: self.labels[c] for c in keep}, {c: self.orders[c] for c in keep},
                          {c: self.trajs[c] for c in keep}, {c: self.splits[c] for c in keep},
                          {c: self.batches[c] for c in keep if c in self.batches},
                          {c: self.rows[c] for c in keep}, list(self.missing))  # fmt: skip

    def without(self, batches: set[str]) -> RealLabels:
        """These labels less those of ``batches``."""
        keep = [c for c in self.labels if self.batches.get(c) not in batches]
        return RealLabels({c: self.labels[c] for c in keep}, {c: self.orders[c] for c in keep},
                          {c: self.trajs[c] for c in keep}, {c: self.splits[c] for c in keep},
                          {c: self.batches[c] for c in keep if c in self.batches},
                          {c: self.rows[c] for c in keep}, list(self.missing))  # fmt: skip


def safe_path(root: Path, rel: str, where: Path, line: int) -> Path:
    """``root / rel`` when ``rel`` is a plain relative path that stays inside ``root`` after
    resolving symlinks; an ``InputError`` naming ``where`` and ``line`` otherwise."""
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts or "\\" in rel or "\0" in rel:
        raise InputError(where, f"line {line}", f"path {rel!r} must be relative, without '..'")
    full = root / Path(*p.parts)
    real_root = root.resolve()
    if full.exists() and not full.resolve().is_relative_to(real_root):
        raise InputError(where, f"line {line}", f"path {rel!r} leaves its data root {root}")
    return full


def _label(row: dict, case_id: str, traj: Trajectory, where: Path, line: int) -> Annotation:
    step, idx = row.get("candidate_step"), row.get("candidate_tool_call_index")
    out = row.get("verification_outcome")
    if out is not None and out not in OUTCOMES:
        raise InputError(
            where, f"line {line}", f"verification_outcome {out!r} is not one of {OUTCOMES}"
        )
    lab = Annotation(case_id, traj.task_id or "", step is not None, step, idx, row.get("boundary_type"),
                     bool(row.get("verification_triggered")), out)  # fmt: skip
    errs = consistency_errors(lab, traj)
    if errs:
        raise InputError(where, f"line {line}", "; ".join(errs))
    anchor = row.get("anchor")
    if anchor and step is not None:
        call = step_ids(traj)[step].tool_calls[idx]
        text = (call.command or "") + json.dumps(call.arguments, ensure_ascii=False)
        if anchor not in text and anchor not in json.dumps(text):
            raise InputError(
                where, f"line {line}", f"anchor {anchor!r} is not in call [{step},{idx}]"
            )
    return lab


def load(path: Path = LABELS, roots: list[Path] | None = None) -> RealLabels:
    """The labels of ``path`` whose trajectories are under one of ``roots``."""
    roots = [Path(r) for r in (roots or [])]
    out = RealLabels()
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise InputError(path, f"line {n}", f"invalid JSON: {e}") from None
        if not isinstance(row, dict) or not isinstance(row.get("path"), str):
            raise InputError(path, f"line {n}", "a label needs a 'path' string")
        if row.get("split") not in SPLITS:
            raise InputError(path, f"line {n}", f"split must be one of {SPLITS}")
        if row.get("batch") is not None and row["batch"] not in BATCHES:
            raise InputError(path, f"line {n}", f"batch must be one of {BATCHES}")
        found = None
        for root in roots:
            cand = safe_path(root, row["path"], path, n)
            if cand.is_file():
                found = cand
                break
        if found is None:
            out.missing.append(row["path"])
            continue
        digest = hashlib.sha256(found.read_bytes()).hexdigest()
        if row.get("sha256") not in (None, digest):
            raise InputError(found, None, f"content changed: sha256 {digest} is not the label's "
                             f"{row['sha256']} ({path} line {n})")  # fmt: skip
        index = row.get("index", 0)
        trajs = import_file(found)
        if not isinstance(index, int) or not 0 <= index < len(trajs):
            raise InputError(
                path, f"line {n}", f"index {index!r} out of range ({len(trajs)} trajectories)"
            )
        traj = trajs[index]
        cid = f"{row['path']}#{index}"
        out.labels[cid] = _label(row, cid, traj, path, n)
        out.orders[cid] = [
            (s, j) for s, t in step_ids(traj).items() for j in range(len(t.tool_calls))
        ]
        out.trajs[cid] = traj
        out.splits[cid] = row["split"]
        if row.get("batch"):
            out.batches[cid] = row["batch"]
        out.rows[cid] = row
    return out


def default_roots(cwd: Path | None = None) -> list[Path]:
    """Where the shared data usually is: ``../shared/data/trajectories`` beside a checkout (and
    ``shared/data/trajectories`` under the current directory)."""
    cwd = Path(cwd or Path.cwd())
    return [p for p in (cwd.parent / "shared/data/trajectories", cwd / "shared/data/trajectories")
            if p.is_dir()]  # fmt: skip
