"""Mutated real samples (keys deleted, values replaced by other JSON types) either import into
valid canonical trajectories or fail with an ``InputError``: never another exception, never a
model that serialises with a type warning."""

import random
import warnings

import mutated_inputs
import pytest
from shared_data import TRAJECTORIES

from agentpost.errors import InputError
from agentpost.trajectory.importers import NotATrajectory
from agentpost.trajectory.importing import import_file, iter_files
from agentpost.trajectory.io import dumps

DATA = TRAJECTORIES


def test_mutated_samples_never_crash(shared_data, tmp_path):
    outcomes = {"ok": 0, "input_error": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dst in mutated_inputs.json_files(tmp_path, 300):
            try:
                for t in import_file(dst):
                    dumps(t)
                outcomes["ok"] += 1
            except InputError as e:
                assert str(dst) in e.one_line() and "\n" not in e.one_line()
                outcomes["input_error"] += 1
            except NotATrajectory:
                pass
    assert outcomes["ok"] > 50 and outcomes["input_error"] > 10, outcomes


def test_every_real_file_cut_short_is_a_one_line_error(shared_data, tmp_path):
    """Each real sample truncated at three random points: an ``InputError`` naming the file
    (or, for a JSONL cut at a line end, fewer trajectories), never another exception."""
    rng = random.Random(2)
    errors = 0
    for n, src in enumerate(iter_files([DATA])):
        raw = src.read_bytes()
        for k in range(3):
            dst = tmp_path / f"{n}-{k}" / src.name
            dst.parent.mkdir()
            dst.write_bytes(raw[: rng.randrange(1, len(raw))])
            try:
                import_file(dst)
            except InputError as e:
                assert e.one_line().startswith(f"{dst}: ") and "\n" not in e.one_line()
                errors += 1
            except NotATrajectory:
                pass
    assert errors >= 60, errors


def test_mutated_jsonl_lines_never_crash(shared_data, tmp_path):
    """The JSONL formats (Claude Code, Codex, OpenHands V1 and eval output), real and synthetic:
    one to three lines mutated, or the file cut after a random line."""
    outcomes = {"ok": 0, "input_error": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dst in mutated_inputs.jsonl_files(tmp_path, 150):
            try:
                for t in import_file(dst):
                    dumps(t)
                outcomes["ok"] += 1
            except InputError as e:
                assert str(dst) in e.one_line() and "\n" not in e.one_line()
                outcomes["input_error"] += 1
            except NotATrajectory:
                pass
    assert outcomes["ok"] > 30 and outcomes["input_error"] > 5, outcomes


def _catch_all(src, lines: list[bytes], k: int, dest) -> bool:
    """Whether the first ``k`` lines of ``src`` fail with the catch-all shape error."""
    part = dest / str(k) / src.name
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\n".join(lines[:k]) + b"\n")
    try:
        import_file(part)
    except InputError as err:
        return "not a valid" in err.message
    except NotATrajectory:
        return False
    return False


def test_a_jsonl_file_of_the_wrong_shape_names_its_first_bad_line(shared_data, tmp_path):
    """A JSONL line of a shape no importer check names (the catch-all "not a valid X file")
    is reported at ``line N``: the first N lines fail that way, the first N-1 do not."""
    named = 0
    for i, src in enumerate(mutated_inputs.jsonl_files(tmp_path / "m", 800, seed=7)):
        try:
            import_file(src)
            continue
        except NotATrajectory:
            continue
        except InputError as e:
            if "not a valid" not in e.message:
                continue
            where = e.where
        assert where.startswith("line "), where
        n = int(where.split()[1])
        lines = src.read_bytes().split(b"\n")
        dest = tmp_path / f"prefix-{i}"
        assert _catch_all(src, lines, n, dest) and not _catch_all(src, lines, n - 1, dest), n
        named += 1
    assert named >= 3, named


def test_counts_outside_64_bits_are_an_error_naming_the_place_or_unknown(tmp_path):
    """The JSON writer holds 64 bits: a sum below the signed minimum, a token id given as a
    25-digit string, and two running counters whose difference leaves the range are an
    InputError naming the place (or, for the counter, an unknown count), never a traceback
    from the writer after the good files were read."""
    import json

    from agentpost.trajectory.io import write_jsonl

    low = -(2**63)
    atif = {
        "schema_version": "ATIF-v1.4",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": i, "source": "agent", "message": "m", "metrics": {"prompt_tokens": low}}
            for i in (1, 2)
        ],
    }
    (tmp_path / "sum.json").write_text(json.dumps(atif))
    with pytest.raises(InputError, match="outside what 64 bits hold") as e:
        import_file(tmp_path / "sum.json")
    assert e.value.where == "$"
    atif["steps"] = [
        {
            "step_id": 1,
            "source": "agent",
            "message": "m",
            "metrics": {"prompt_token_ids": ["9" * 25]},
        }
    ]
    (tmp_path / "ids.json").write_text(json.dumps(atif))
    with pytest.raises(InputError, match="64 bits") as e:
        import_file(tmp_path / "ids.json")
    assert e.value.where == "$.steps[0].metrics.prompt_token_ids[0]"
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "task"}},
    ] + [
        {
            "id": k,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "llm_metrics": {
                "accumulated_token_usage": {"prompt_tokens": n, "completion_tokens": 1}
            },
        }
        for k, n in ((1, 2**64 - 1), (2, low))
    ]
    (tmp_path / "events.json").write_text(json.dumps(events))
    trajs = import_file(tmp_path / "events.json")
    assert [t.usage.input_tokens for t in trajs[0].turns] == [2**64 - 1, None]
    write_jsonl(tmp_path / "out.jsonl", trajs)  # the writer holds every value
