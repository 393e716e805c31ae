"""The canonical model: totals, nullability, round trip through JSONL."""

from __future__ import annotations

import pytest

from agentpost.errors import InputError
from agentpost.trajectory.io import read_jsonl, write_jsonl
from agentpost.trajectory.model import (
    FORMAT,
    Observation,
    Producer,
    ToolCall,
    Trajectory,
    Turn,
    Usage,
    compute_totals,
)

PRODUCER = Producer(name="test", version="0")


def _turn(i: int, usage: Usage | None) -> Turn:
    return Turn(
        index=i,
        tool_calls=[ToolCall(name="bash", command="ls", kind="shell")],
        observations=[Observation(text="a", exit_code=0)],
        usage=usage,
    )


def test_totals_sum_turns_and_stay_null_without_numbers() -> None:
    turns = [
        _turn(0, Usage(input_tokens=100, cached_tokens=40, output_tokens=5, source="reported")),
        _turn(1, Usage(input_tokens=150, cached_tokens=None, output_tokens=7, source="reported")),
        _turn(2, None),
    ]
    t = compute_totals(turns)
    assert (t.turns, t.tool_calls) == (3, 3)
    assert (t.input_tokens, t.cached_tokens, t.output_tokens) == (250, 40, 12)
    assert t.reasoning_tokens is None
    assert t.usage_source == "reported"
    empty = compute_totals([_turn(0, None)])
    assert empty.input_tokens is None and empty.usage_source is None


def test_run_total_fills_only_missing_fields() -> None:
    t = compute_totals([_turn(0, None)], run_total=Usage(input_tokens=52861, output_tokens=326))
    assert (t.input_tokens, t.output_tokens, t.usage_source) == (52861, 326, "run_total")


def test_mixed_sources_report_the_weakest() -> None:
    turns = [
        _turn(0, Usage(input_tokens=1, source="reported")),
        _turn(1, Usage(input_tokens=1, source="estimated")),
    ]
    assert compute_totals(turns).usage_source == "estimated"


def test_round_trip_is_identical(tmp_path) -> None:
    traj = Trajectory(
        id="t1", task_id="task", turns=[_turn(0, Usage(input_tokens=3))], producer=PRODUCER
    )
    traj.totals = compute_totals(traj.turns)
    write_jsonl(tmp_path / "a.jsonl", [traj])
    again = read_jsonl(tmp_path / "a.jsonl")
    write_jsonl(tmp_path / "b.jsonl", again)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert again[0].format == FORMAT


def test_bad_line_names_file_and_place(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "producer": {"name": "a", "version": "1"}}\n{"id": 3}\n')
    with pytest.raises(InputError) as e:
        read_jsonl(path)
    assert str(path) in str(e.value) and "line 2" in str(e.value)
