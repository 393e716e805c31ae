"""Task- and size-matching: common tasks only, equal counts per task, seeded choice."""

from __future__ import annotations

import pytest

from agentpost.scvd.distill.matching import match
from agentpost.sft.rows import make_row


def rows(spec: dict[str, int], source: str):
    msgs = [{"role": "user", "content": "t"}, {"role": "assistant", "content": "a"}]
    return [make_row(msgs, 0, {"task_id": t, "source": source, "n": i})
            for t, n in spec.items() for i in range(n)]  # fmt: skip


def test_common_tasks_and_equal_counts():
    scvd = rows({"a": 3, "b": 1, "c": 2}, "scvd")
    ftd = rows({"a": 1, "b": 2, "d": 5}, "ftd")
    (s, f), rep = match([scvd, ftd], seed=1)
    assert (
        sorted(r.meta["task_id"] for r in s) == ["a", "b"] == sorted(r.meta["task_id"] for r in f)
    )
    assert rep["rows_out"] == [2, 2] and rep["tasks"]["common"] == 2
    assert rep["per_task"] == {"a": 1, "b": 1}


def test_the_choice_is_seeded_and_three_way_matching_works():
    a, b, c = rows({"x": 5, "y": 2}, "a"), rows({"x": 3, "y": 4}, "b"), rows({"x": 2}, "c")
    first = match([a, b, c], seed=7)[0]
    again = match([a, b, c], seed=7)[0]
    assert [[r.meta for r in d] for d in first] == [[r.meta for r in d] for d in again]
    assert [len(d) for d in first] == [2, 2, 2]
    other = match([a, b, c], seed=8)[0]
    picks = {tuple(r.meta["n"] for r in d) for d in (first[0], other[0])}
    assert all(len(set(p)) == 2 for p in picks)  # two distinct rows each time, no repeats
    with pytest.raises(ValueError):
        match([a])
