"""Measure the rule seats and the panels on the real labels (src/agentpost/scvd/data/
real-labels.jsonl) and keep every number in real-labels-calibration.json (run by hand, not a
test; each number is what ``agentpost scvd calibrate real --heuristic --legacy --split SPLIT
--json`` prints with the same data roots):

    PYTHONPATH=src python tests/scvd/make_real_labels_calibration.py ROOT [ROOT...] [--tables]

ROOTs are the data roots (``../shared/data/trajectories`` first, then a folder holding the
public files that are not in shared/ yet, laid out as listed in real-labels.md). Two
measurements are kept: ``shared_only`` (the labels whose files are in the first root: what CI
can re-measure) and ``full`` (every root). Each holds one calibration report per split or batch
(``SCOPES``). ``--tables`` prints the data README's tables from the stored file.

``scored_once`` keeps, per held-out batch, the report of its one scoring (rules of that day),
carried forward unchanged by every later run: the live ``full`` numbers of a batch move when
rules change after it was moved into tune, its held-out figure does not. ``--score-once BATCH``
stores the batch's ``full`` report there, and refuses when one is stored already.

A held-out batch that is frozen but has no ``scored_once`` entry yet is withheld: no scope holding
one of its labels is measured, stored or printed, so a run made while rules are being tuned shows
nothing of it; ``--score-once BATCH`` lifts that for BATCH (its one score).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentpost.scvd import calibrate_io, real_labels
from agentpost.scvd.seats import SEATS_VERSION

OUT = real_labels.LABELS.parent / "real-labels-calibration.json"
# v1- .. v4-heldout: earlier held-out batches, each scored once and now tune; v5-heldout: held
# out, frozen and withheld until its one score (--score-once v5-heldout)
SCOPES = (
    "tune",
    "v1-heldout",
    "v2-heldout",
    "v3-heldout",
    "v4-heldout",
    "v5-heldout",
    "heldout",
    "all",
)
PANEL = "default panel (rule seats voting)"


def measure(roots: list[Path], skip: set[str] = frozenset(), once: str | None = None) -> dict:
    """One report per scope, leaving out every scope that holds a label of a ``skip`` batch;
    ``once`` is the batch scored once now (calibrate_files withholds it otherwise)."""
    out = {}
    for scope in SCOPES:
        real = real_labels.load(real_labels.LABELS, roots).only(scope)
        if any(real.batches.get(c) in skip for c in real.labels):
            continue
        if real.labels:
            doc = calibrate_io.calibrate_files(
                real_labels.LABELS, [], True, roots, scope, legacy=True, score_once=once
            )
            info = doc.pop("labels")  # its path is this machine's
            out[scope] = {**doc, "n": info["n"], "missing_files": info["missing_files"]}
    return out


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def ci(pair) -> str:
    return "–" if not pair else f"[{round(100 * pair[0])}–{round(100 * pair[1])}]"


def table(doc: dict) -> str:
    head = ("| judge | n | pooled [95% Wilson] | strict | boundary exact [95% Wilson] | I_c "
            "[95%] | I_v [95%] | z [95%] | abstained |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    rows = [head]
    named = [*doc["judges"].items(), *doc["panels"].items()]
    for name, r in named:
        pf, c = r["per_field"], r["ci95"]
        fields = " | ".join(f"{pct(pf[f])} {ci(c['per_field'].get(f))}"
                            for f in ("candidate_formed", "verification_triggered", "z"))  # fmt: skip
        rows.append(f"| {name} | {r['n']} | {pct(r['pooled_accuracy'])} {ci(c['pooled_accuracy'])} | "
                    f"{pct(r['strict_accuracy'])} | {pct(r['boundary_exact'])} {ci(c['boundary_exact'])} | "
                    f"{fields} | {r.get('abstained', 0)} |")  # fmt: skip
    g = doc["panels"][PANEL]["agreement"]
    a = {k: "–" if v is None else f"{v:.2f}" for k, v in g["alpha"].items()}
    rows.append(
        f"\nKrippendorff's α among the three seats: I_c {a['candidate_formed']}, I_v "
        f"{a['verification_triggered']}, z {a['z']} (– : undefined, every seat gave the same "
        f"value). Panel agreement: all three seats give the "
        f"same boundary tuple on {pct(g['three_way_boundary'])}% and the same semantics tuple on "
        f"{pct(g['three_way_semantics'])}% of the {g['full_panel']} trajectories every seat "
        f"annotated; vote decided {pct(g['vote_rate'])}%, the arbiter {pct(g['arbiter_rate'])}%."
    )
    return "\n".join(rows)


def main(args: list[str]) -> None:
    once = None
    if "--score-once" in args:
        i = args.index("--score-once")
        once, args = args[i + 1], args[:i] + args[i + 2 :]
    if "--tables" in args:
        doc = json.loads(OUT.read_text())
        for which in ("full", "shared_only"):
            for scope, d in doc[which].items():
                print(f"\n### {which} / {scope} (n={d['n']})\n\n{table(d)}")
        for batch, d in doc.get("scored_once", {}).items():
            print(
                f"\n### scored once / {batch} ({d.get('seats_version')}, n={d['n']})\n\n{table(d)}"
            )
        return
    roots = [Path(a) for a in args]
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    skip = real_labels.withheld(real_labels.LABELS, once)
    if skip:
        print("withheld until scored once:", ", ".join(sorted(skip)), "(no scope holding them)")
    doc = {
        "format": "agentpost.scvd.real-labels-calibration/2",
        "how": "PYTHONPATH=src python tests/scvd/make_real_labels_calibration.py "
        "../shared/data/trajectories DIR (DIR: the public files listed in real-labels.md); "
        "each scope = agentpost scvd calibrate real --heuristic --legacy --split SCOPE --json "
        "with --data-root ../shared/data/trajectories (shared_only) or both roots (full)",
        "rules": {**old.get("rules", {}), "seats": SEATS_VERSION},
        "full": measure(roots, skip, once),
        "shared_only": measure(roots[:1], skip, once),
        "scored_once": old.get("scored_once", {}),
    }
    if once is not None:
        if once in doc["scored_once"]:
            raise SystemExit(f"{once} was scored once already; its report stays as stored")
        # the report's own "seats" key (seat -> kind) would shadow the version, so it has its own
        doc["scored_once"][once] = {**doc["full"][once], "seats_version": SEATS_VERSION}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    for which in ("full", "shared_only"):
        for scope, d in doc[which].items():
            p = d["panels"][PANEL]
            print(which, scope, p["n"], "pooled", pct(p["pooled_accuracy"]), ci(p["ci95"]["pooled_accuracy"]),
                  "exact", pct(p["boundary_exact"]), ci(p["ci95"]["boundary_exact"]))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
