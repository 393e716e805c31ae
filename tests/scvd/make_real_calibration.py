"""Measure the offline panel on the hand-labelled real trajectories and keep the numbers in
src/agentpost/scvd/data/real-calibration.json (run by hand, not a test):

    PYTHONPATH=src:tests/scvd python tests/scvd/make_real_calibration.py KEY

KEY names the measurement (``before``: heuristic/2 as it was when the labels were written;
``after``: the current rules). Each holds, per split (tune, heldout, all), the calibration
report of the three variants and the default panel (per-field accuracy, pooled and strict
accuracy, boundary exact and within one call, 95% Wilson intervals, z confusion) and the misses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from real_labels import load, measure

from agentpost.scvd.heuristic import HEURISTIC_VERSION

OUT = Path(__file__).resolve().parents[2] / "src/agentpost/scvd/data/real-calibration.json"


def main(key: str) -> None:
    cases = load()
    doc = (
        json.loads(OUT.read_text())
        if OUT.exists()
        else {"format": "agentpost.scvd.real-calibration/1"}
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc[key] = {"heuristic": HEURISTIC_VERSION, "commit": commit,
                "labels": "tests/scvd/fixtures/real-labels/labels.jsonl",
                **{split or "all": measure(cases, split) for split in ("tune", "heldout", None)}}  # fmt: skip
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    for split in ("tune", "heldout", "all"):
        p = doc[key][split]["panel"]
        print(key, split, p["n"], "pooled", round(p["pooled_accuracy"], 3), p["ci95"]["pooled_accuracy"],
              "exact", p["boundary_exact"], "±1", p["boundary_within_1"])  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
