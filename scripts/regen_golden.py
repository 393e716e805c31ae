"""Rewrite the importers' golden outputs (tests/trajectory/golden/*.jsonl) from the test data.

Run after changing an importer on purpose, then read ``git diff tests/trajectory/golden``: each
changed line names the trajectory and shows the figures that moved.

    PYTHONPATH=src python scripts/regen_golden.py
"""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "trajectory"), str(TESTS)]  # golden_digest, shared_data

from golden_digest import compute, write  # noqa: E402

if __name__ == "__main__":
    from shared_data import REASON, present  # noqa: E402

    if not present:
        sys.exit(f"cannot regenerate: {REASON}")
    for path in write(compute()):
        print(path)
