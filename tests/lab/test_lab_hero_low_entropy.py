"""The HERO lab's low-entropy direction (b.9.2) never shows a zero-width 95% CI: a policy with
no unproductive turn at all gives the difference 0 in every replicate, so no interval (the
verdict then reads as without one), not "[0.000, 0.000]"."""

from __future__ import annotations

from agentpost.lab.hero_lab import table


def _runs(seeds: int, tasks: list[str], k: int) -> dict[int, list[dict]]:
    return {s: [{"task": t, "sample": j, "resolved": j % 2, "tokens": 100 + 10 * j + s,
                 "unproductive": 0.0, "entropy": 0.5 + 0.01 * j, "turns": 3,
                 "h": [0.1 * (j + 1), 0.2 * (j + 1), 0.9], "unprod": [0, 0, 0]}
                for t in tasks for j in range(k)]
            for s in range(seeds)}  # fmt: skip


def test_no_zero_width_interval_on_the_low_entropy_direction():
    tasks = [f"t{i}" for i in range(12)]
    doc = table({"base": _runs(2, tasks, 4)}, tasks, k=4, n_boot=200)
    low = [v for v in doc["directions"] if v["metric"] == "low_entropy_unproductive"]
    assert low, "the low-entropy direction was not evaluated"
    for v in low:
        ci = v["estimate"]["ci95"]
        assert ci is None or ci[1] > ci[0], v["estimate"]
    for row in doc["arms"].values():
        for m, est in row.items():
            if isinstance(est, dict) and est.get("ci95") is not None:
                assert est["ci95"][1] > est["ci95"][0], (m, est)
