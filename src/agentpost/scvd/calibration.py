"""Judge calibration against hand-checked labels (spec b.4).

Per judge: accuracy pooled over the three decisions (candidate formed, verification triggered,
z), which is what the paper calls joint accuracy (its values are multiples of 1/60 on 20
trajectories); the strict variant (all three right on a trajectory); per-field accuracy; the
boundary located exactly and within one tool call; the z confusion matrix; a 95% Wilson interval
for every rate (``ci95``). Across judges:
Krippendorff's α (nominal) per field. The arbiter is the judge with the highest pooled accuracy
(ties: higher strict accuracy, then higher exact-boundary rate, then the first listed).

A missing or invalid annotation counts as wrong on every field (and ``abstained`` is reported),
so a judge cannot raise its accuracy by abstaining.

Layer: pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import permutations

from agentpost.intervals import wilson as score
from agentpost.scvd.records import Annotation

FIELDS3 = ("candidate_formed", "verification_triggered", "z")
Z_LABELS = ("error", "no-error", "unresolved", "none")


def _field(a: Annotation, name: str):
    return a.z if name == "z" else getattr(a, name)


def _position(call_order: Sequence | None, step, index) -> int | None:
    if call_order is None:
        return None
    for i, (s, j) in enumerate(call_order):
        if (s, j) == (step, index):
            return i
    return None


def _within_one(label: Annotation, got: Annotation, call_order) -> bool:
    """Boundary within one call: by position in ``call_order`` ((step, index) pairs in
    trajectory order) when given, else within the same step."""
    p, q = (
        _position(call_order, a.candidate_step, a.candidate_tool_call_index) for a in (label, got)
    )
    if p is not None and q is not None:
        return abs(p - q) <= 1
    same_step = label.candidate_step == got.candidate_step
    idx = (label.candidate_tool_call_index, got.candidate_tool_call_index)
    return same_step and None not in idx and abs(idx[0] - idx[1]) <= 1


def judge_report(
    labels: Mapping[str, Annotation],
    got: Mapping[str, Annotation | None],
    call_orders: Mapping[str, Sequence] | None = None,
) -> dict:
    """Accuracy of one judge's annotations ``got`` (case_id → annotation or None)."""
    n = len(labels)
    per_field = Counter()
    strict = abstained = cand = exact = near = 0
    confusion = {lab: {k: 0 for k in (*Z_LABELS, "abstained")} for lab in Z_LABELS}
    for cid, lab in labels.items():
        a = got.get(cid)
        lz = lab.z or "none"
        if a is None:
            abstained += 1
            confusion[lz]["abstained"] += 1
            cand += bool(lab.candidate_formed)
            continue
        ok = [_field(a, f) == _field(lab, f) for f in FIELDS3]
        for f, right in zip(FIELDS3, ok, strict=True):
            per_field[f] += right
        strict += all(ok)
        confusion[lz][a.z or "none"] += 1
        if lab.candidate_formed:
            cand += 1
            if a.candidate_formed:
                pair = (a.candidate_step, a.candidate_tool_call_index)
                exact += pair == (lab.candidate_step, lab.candidate_tool_call_index)
                near += _within_one(lab, a, (call_orders or {}).get(cid))

    def share(k, of):
        return k / of if of else None

    fields = {f: per_field[f] for f in FIELDS3}
    ci = {"pooled_accuracy": wilson(sum(fields.values()), 3 * n),
          "strict_accuracy": wilson(strict, n),
          "per_field": {f: wilson(k, n) for f, k in fields.items()},
          "boundary_exact": wilson(exact, cand), "boundary_within_1": wilson(near, cand)}  # fmt: skip
    return {
        "n": n,
        "abstained": abstained,
        "pooled_accuracy": share(sum(per_field.values()), 3 * n),
        "strict_accuracy": share(strict, n),
        "per_field": {f: share(per_field[f], n) for f in FIELDS3},
        "boundary_exact": share(exact, cand),
        "boundary_within_1": share(near, cand),
        "labelled_candidates": cand,
        "z_confusion": confusion,
        "ci95": ci,
    }


def wilson(k: int, n: int) -> list[float] | None:
    """95% Wilson score interval for k successes in n trials ([low, high], 4 decimals; None when
    n = 0): ``agentpost.intervals.wilson``. It stays inside [0, 1] and is sane at k = 0 or n,
    which small calibration sets hit often. Pooled accuracy treats its 3n decisions as
    independent, so its interval is narrower than the trajectory-level truth."""
    ci = score(k, n)
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def krippendorff_alpha(units: Sequence[Sequence]) -> float | None:
    """Nominal Krippendorff's α. ``units[u]`` holds the values the coders gave unit u (None =
    missing). Units with fewer than two values are ignored. None when undefined (fewer than two
    paired values, or no expected disagreement: every value identical)."""
    coinc: Counter = Counter()
    for unit in units:
        vals = [v for v in unit if v is not None]
        m = len(vals)
        if m < 2:
            continue
        for a, b in permutations(range(m), 2):
            coinc[(vals[a], vals[b])] += 1 / (m - 1)
    n_c: Counter = Counter()
    for (c, _), w in coinc.items():
        n_c[c] += w
    n = sum(n_c.values())
    if n <= 1:
        return None
    observed = sum(w for (c, k), w in coinc.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def calibrate(
    labels: Mapping[str, Annotation],
    judges: Mapping[str, Mapping[str, Annotation | None]],
    call_orders: Mapping[str, Sequence] | None = None,
) -> dict:
    """Reports for every judge, α per field across judges, and the arbiter's name."""
    reports = {name: judge_report(labels, got, call_orders) for name, got in judges.items()}
    alpha = {}
    for f in FIELDS3:
        units = []
        for cid in labels:
            vals = []
            for got in judges.values():
                a = got.get(cid)
                # None is a real value for z ("no verification"): encode it so it is not missing.
                vals.append(None if a is None else (_field(a, f) if f != "z" else a.z or "none"))
            units.append(vals)
        alpha[f] = krippendorff_alpha(units)
    ranked = [n for n in judges if reports[n]["pooled_accuracy"] is not None]

    def strength(n: str) -> tuple:
        r = reports[n]
        return (r["pooled_accuracy"], r["strict_accuracy"] or 0.0, r["boundary_exact"] or 0.0)

    arbiter = max(ranked, key=strength, default=None)
    return {"judges": reports, "krippendorff_alpha": alpha, "arbiter": arbiter}
