"""Task- and size-matching of SFT datasets (spec b.7 data sizes, b.8, b.9): keep the tasks where
every dataset has at least one row, and per task the same number of rows in each (the smallest
count, rows chosen by a seeded shuffle), so the datasets differ only in who produced the data.

Works for two datasets (SCVD vs FTD) or more (the prefix-generator ablation: SCVD rows whose
prefixes came from different students).

Layer: pure.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from agentpost.sft.rows import SFTRow


def _by_task(rows: Sequence[SFTRow]) -> dict[str, list[SFTRow]]:
    out: dict[str, list[SFTRow]] = defaultdict(list)
    for r in rows:
        out[str(r.meta.get("task_id"))].append(r)
    return out


def match(
    datasets: Sequence[Sequence[SFTRow]], seed: int = 0
) -> tuple[list[list[SFTRow]], dict[str, Any]]:
    """(matched datasets in the input order, a report). Rows without ``meta.task_id`` group
    under ``"None"``, so they only match each other."""
    if len(datasets) < 2:
        raise ValueError("matching needs at least two datasets")
    groups = [_by_task(d) for d in datasets]
    common = sorted(set.intersection(*(set(g) for g in groups)))
    rng = random.Random(seed)
    out: list[list[SFTRow]] = [[] for _ in datasets]
    per_task = {}
    for task in common:
        n = min(len(g[task]) for g in groups)
        per_task[task] = n
        for i, g in enumerate(groups):
            rows = list(g[task])
            rng.shuffle(rows)
            out[i] += rows[:n]
    report = {
        "seed": seed,
        "tasks": {"common": len(common), "per_dataset": [len(g) for g in groups]},
        "rows_in": [len(d) for d in datasets],
        "rows_out": [len(o) for o in out],
        "per_task": per_task,
    }
    return out, report
