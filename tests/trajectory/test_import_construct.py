"""The import hot path's shortcuts give what the slow, obvious code gives.

Generated constructors (``importers/_construct.py``) against pydantic's ``model_construct`` and
validation; mini-swe-agent's bash-block finder against the regex it replaces, on random texts
built from the pieces that make the regex backtrack; ``read_regular`` and ``parse_lines`` against
``Path.read_bytes`` and ``bytes.split``; ``totals_values`` against a per-field recomputation.
"""

from __future__ import annotations

import copy
import pickle
import random

import orjson
import pytest

from agentpost.errors import InputError
from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.importers._construct import MISSING, maker
from agentpost.trajectory.importers._file import parse_lines
from agentpost.trajectory.importers.mini_swe_agent import ACTION_RE, _actions
from agentpost.trajectory.io import dumps, read_regular
from agentpost.trajectory.model import (
    Observation,
    Outcome,
    Producer,
    Source,
    ToolCall,
    Totals,
    Trajectory,
    Turn,
    Usage,
    compute_totals,
)

MODELS = [Turn, ToolCall, Observation, Usage, Outcome, Totals, Source, Producer, Trajectory]


@pytest.mark.parametrize("cls", MODELS, ids=lambda m: m.__name__)
def test_maker_matches_model_construct(cls) -> None:
    values = {"index": 0, "producer": c.producer("x", False)}
    required = {n: values.get(n, "v") for n, f in cls.model_fields.items() if f.is_required()}
    fast, slow = maker(cls)(**required), cls.model_construct(**required)
    assert list(fast.__dict__) == list(cls.model_fields)  # field order: the serializer's order
    assert fast == slow and fast.model_dump() == slow.model_dump()
    # factories give each instance its own list/dict; None stays a value, not "missing"
    lists = [n for n, f in cls.model_fields.items() if f.default_factory in (list, dict)]
    for name in lists:
        assert getattr(maker(cls)(**required), name) is not getattr(fast, name)
    if lists:
        assert getattr(maker(cls)(**required, **{lists[0]: None}), lists[0]) is None
    # pydantic's own attribute setting still works on what the maker built
    fast2 = maker(cls)(**required)
    name = next(iter(cls.model_fields))
    setattr(fast2, name, getattr(fast2, name))
    assert name in fast2.model_fields_set


@pytest.mark.parametrize("cls", MODELS, ids=lambda m: m.__name__)
def test_unset_slots_read_as_model_construct_sets_them(cls) -> None:
    """Makers leave BaseModel's three slots unset; every way pydantic reads them (copy, pickle,
    equality, repr, model_copy, fields_set) sees what ``model_construct`` stored, each on a
    fresh instance so that no earlier read has filled the slot already."""
    values = {"index": 0, "producer": c.producer("x", False)}
    required = {n: values.get(n, "v") for n, f in cls.model_fields.items() if f.is_required()}
    slow = cls.model_construct(**required)
    slow.__pydantic_fields_set__ = set()  # model_construct records the keywords given
    fresh = lambda: maker(cls)(**required)  # noqa: E731
    assert copy.copy(fresh()) == slow and copy.deepcopy(fresh()) == slow
    assert pickle.loads(pickle.dumps(fresh())) == slow
    assert fresh() == slow and slow == fresh()
    assert repr(fresh()) == repr(slow)
    assert fresh().model_copy() == slow
    assert fresh().model_fields_set == set()
    f = fresh()
    assert (f.__pydantic_extra__, f.__pydantic_private__) == (None, None)
    assert orjson.dumps(fresh().model_dump(mode="json")) == orjson.dumps(
        slow.model_dump(mode="json")
    )
    with pytest.raises(AttributeError) as fast_err:
        _ = fresh().no_such_field
    with pytest.raises(AttributeError) as slow_err:
        _ = slow.no_such_field
    assert str(fast_err.value) == str(slow_err.value)


def test_maker_result_revalidates_and_round_trips() -> None:
    t = c.trajectory(
        c.Ctx(__import__("pathlib").Path("x.json")),
        "test",
        id="a",
        keep_raw=False,
        turns=[
            c.turn(
                0,
                text=3,  # coerced to "3" as before
                step="7",
                tool_calls=[c.tool_call("bash", '{"command": "ls"}', 5)],
                observations=[c.observation(5, "out", 2.0, "yes", True)],
                usage=c.usage_from_openai({"prompt_tokens": 10, "completion_tokens": 2}),
            )
        ],
    )
    assert Trajectory.model_validate(orjson.loads(dumps(t))) == t
    turn = t.turns[0]
    assert (turn.text, turn.step, turn.tool_calls[0].id, turn.tool_calls[0].command) == (
        "3",
        7,
        "5",
        "ls",
    )
    o = turn.observations[0]
    assert (o.call_id, o.exit_code, o.is_error, o.timed_out) == ("5", 2, None, True)
    assert t.totals == compute_totals(t.turns)
    with pytest.raises(TypeError):
        maker(Observation)(no_such_field=1)
    assert MISSING is not None


def test_actions_finder_equals_the_regex() -> None:
    rnd = random.Random(7)
    atoms = ["```bash", "```", "\n", " ", "\t", "x", "ls", "\n```", "```bash\n", "\u2003", "\r\n"]
    for _ in range(20000):
        text = "".join(rnd.choice(atoms) for _ in range(rnd.randint(0, 12)))
        assert _actions(text) == ACTION_RE.findall(text), repr(text)


def test_totals_values_equal_a_per_field_sum() -> None:
    rnd = random.Random(3)
    sources = ["reported", "estimated", "run_total", "running_total_diff", None]
    for _ in range(300):
        turns = []
        for i in range(rnd.randint(0, 6)):
            u = None
            if rnd.random() < 0.8:
                u = Usage(
                    **{
                        f: rnd.choice([None, rnd.randint(0, 99)])
                        for f in ("input_tokens", "cached_tokens", "output_tokens")
                    },
                    cost_usd=rnd.choice([None, rnd.random()]),
                    source=rnd.choice(sources),
                )
            turns.append(Turn(index=i, usage=u))
        got = compute_totals(turns)
        usages = [t.usage for t in turns if t.usage]
        for f in ("input_tokens", "cached_tokens", "output_tokens", "cost_usd"):
            vals = [getattr(u, f) for u in usages if getattr(u, f) is not None]
            assert getattr(got, f) == (sum(vals) if vals else None)
        seen = {u.source for u in usages}
        order = ["estimated", "run_total", "running_total_diff", "reported"]
        assert got.usage_source == next((s for s in order if s in seen), None)
        counts = [
            sum(getattr(u, f) is not None for u in usages)
            for f in ("input_tokens", "output_tokens")
        ]
        assert got.partial == any(0 < k < len(turns) for k in counts)


def test_read_regular_and_lines_match_the_plain_calls(tmp_path) -> None:
    for i, data in enumerate([b"", b"{}", b'\n\n{"a": 1}\n \t\n[2]\n', b"x" * 300_000]):
        p = tmp_path / f"f{i}"
        p.write_bytes(data)
        assert read_regular(p) == data
        if data.startswith(b"x"):
            with pytest.raises(InputError, match="line 1"):
                parse_lines(data, p)
            continue
        want = [(n, orjson.loads(x)) for n, x in enumerate(data.split(b"\n"), 1) if x.strip()]
        if want:
            assert parse_lines(data, p) == want
        else:
            with pytest.raises(InputError, match="empty file"):
                parse_lines(data, p)


_ODD = [None, 0, 7, -1, 2**70, 1.5, True, False, "x", "", [1], {"a": 1}, b"b"]
_WRITTEN = {
    # the written-out constructor, the model, and the coercions it stands for
    "observation": (
        Observation,
        {
            "call_id": (str, str),
            "text": (str, c.as_str),
            "exit_code": (int, c.as_int),
            "is_error": (bool, lambda v: None),
            "timed_out": (bool, lambda v: None),
        },
    ),
    "turn": (
        Turn,
        {f: (str, c._ts) for f in ("text", "reasoning", "started_at", "ended_at")}
        | {"step": (int, c.as_int)},
    ),
    "_tool_call": (ToolCall, {}),
    "new_usage": (Usage, {}),
}


@pytest.mark.parametrize("name", sorted(_WRITTEN))
def test_written_out_constructors_are_what_maker_generates(name):
    """The four hot constructors in ``_common`` are written out (so the compiled build
    compiles them): each gives what ``maker(cls, coerce)`` gives, field by field and in field
    order, for odd values in every field, and its fields are the model's."""
    cls, coerce = _WRITTEN[name]
    written, generated = getattr(c, name), maker(cls, coerce)
    fields = list(cls.model_fields)
    rng = random.Random(5)
    required = {f: 1 for f, info in cls.model_fields.items() if info.is_required()}
    for _ in range(300):
        kwargs = {
            **required,
            **{f: rng.choice(_ODD) for f in rng.sample(fields, rng.randint(0, len(fields)))},
        }
        a, b = written(**kwargs), generated(**kwargs)
        assert list(a.__dict__) == fields
        assert list(a.__dict__.items()) == list(b.__dict__.items()), kwargs
    if name == "turn":  # empty lists and dicts are new for each model
        t1, t2 = written(0), written(0)
        assert t1.tool_calls is not t2.tool_calls and t1.extra is not t2.extra


def test_trajectory_assembly_is_what_the_generated_constructors_give(tmp_path):
    """``c.trajectory`` builds its models' dicts itself: the same fields, in field order, and
    the same values as the generated constructors give."""
    from agentpost import __version__

    turns = [
        c.turn(0, text="a", usage=c.new_usage(input_tokens=3, output_tokens=1, source="reported")),
        c.turn(5, tool_calls=[c.tool_call("bash", {"command": "ls"})]),
    ]
    ctx = c.Ctx(tmp_path / "x.json", record="line 2")
    fields = {"task_id": 7, "agent": "a", "model": ["m"], "metadata": {"k": 1}}
    got = c.trajectory(ctx, "atif", id=12, turns=turns, keep_raw=True, raw={"r": 1}, **fields)
    totals = maker(Totals)(**compute_totals(turns).model_dump())
    want = maker(Trajectory)(
        id="12",
        task_id=None,  # as_str(7): not a string
        agent="a",
        model=None,
        turns=turns,
        outcome=maker(Outcome)(tests={}, details={}),
        totals=totals,
        source=maker(Source)(format="atif", path=str(tmp_path / "x.json"), record="line 2"),
        producer=maker(Producer)(
            name="agentpost.import.atif", version=__version__, args={"keep_raw": True}
        ),
        metadata={"k": 1},
        raw={"r": 1},
    )
    for a, b in [(got, want)] + [
        (getattr(got, f), getattr(want, f)) for f in ("totals", "source", "producer", "outcome")
    ]:
        assert list(a.__dict__.items()) == list(b.__dict__.items())
        assert list(a.__dict__) == list(type(a).model_fields)
    assert [t.index for t in got.turns] == [0, 1]
    with pytest.raises(TypeError, match="unexpected field"):
        c.trajectory(ctx, "atif", id="x", turns=[], keep_raw=False, no_such_field=1)


def test_atif_token_lists_skip_validation_only_when_it_would_change_nothing(tmp_path):
    """ATIF's token-id and logprob lists: a list of exactly ints (or floats and None) is taken
    as it is, anything else goes through pydantic, which coerces (True, 1.0, "2") or names the
    first bad place. Either way the result is what validation alone gives, type for type."""
    from agentpost.trajectory.importers import atif

    ctx = c.Ctx(tmp_path / "t.json")
    rng = random.Random(4)
    items = [0, 7, -3, 2**40, 1.5, -0.0, 2.0, None, True, "3", "x", [1]]
    for adapter in (atif._INTS, atif._FLOATS):
        for _ in range(400):
            value = [rng.choice(items) for _ in range(rng.randint(0, 6))]
            try:
                want = adapter.validate_python(value)
            except Exception:
                with pytest.raises(InputError):
                    atif._checked(adapter, value, ctx, "$.x")
                continue
            got = atif._checked(adapter, value, ctx, "$.x")
            assert got == want and [type(x) for x in got] == [type(x) for x in want], value
            assert got is not value  # never the parsed list itself (``raw`` may keep it)
