"""Issue 28: the wave-3 corpus, 20 real sessions nobody here wrote (Claude Code 2.0.64 to 2.1.41
and Gemini CLI, from ``entireio/cli``, MIT; ``../shared/data/trajectories/wave3/PROVENANCE.md``),
read from ``<repo>/../shared/data`` and skipped where that is absent.

Every number below was counted in the raw files, not by the importer: the distinct
``message.id`` of non-``<synthetic>`` assistant lines (turns), the ``tool_use`` and
``tool_result`` blocks, ``input_tokens + cache_read + cache_creation`` of each message's first
line, and the output count of the lines that carry a ``stop_reason`` (the only final counts;
``finals`` of the turns have one). On main before issue 28, four files (the ones with
``finals`` between 1 and turns - 1) showed such a partial output sum as the total."""

import json

import pytest
from shared_data import TRAJECTORIES, needed

from agentpost.trajectory.coverage import coverage, shortfalls
from agentpost.trajectory.importing import import_file
from agentpost.trajectory.render import partial_fields, stats_row

WAVE3 = TRAJECTORIES / "wave3"
pytestmark = needed
CC = WAVE3 / "claude-code" / "entireio__cli"
GEMINI = WAVE3 / "gemini-cli" / "entireio__cli"

# (folder, turns, tool calls, results, input, cached, final output sum, turns with a final count)
CLAUDE = [
    ("39/7737088f0a/0", 2, 1, 1, 52578, 44519, None, 0),  # 2.1.34
    ("4c/02af2759b6/0", 1, 1, 0, 38395, 0, None, 0),  # 2.1.4: its one call has no result
    ("5c/1039ad85f4/0", 5, 10, 10, 220858, 193753, None, 0),  # 2.1.22
    ("68/e0ff0d6706/0", 5, 5, 5, 149267, 136049, None, 0),  # 2.1.38
    ("6c/3e73767733/0", 5, 6, 6, 222065, 175563, None, 0),  # 2.1.12
    ("73/7e6e3ea2ad/0", 18, 17, 17, 2394329, 2257455, None, 0),  # 2.1.15
    ("82/94a9921cfd/0", 12, 9, 9, 1177743, 1170383, 959, 1),  # 2.1.5
    ("8c/fa910f8ef9/3", 6, 5, 5, 252251, 208671, 463, 2),  # 2.1.6
    ("9b/3838281539/0", 6, 3, 3, 259447, 206288, None, 0),  # 2.1.33
    ("9f/d2fc39aa5f/0", 66, 66, 66, 3095600, 2995725, 8771, 31),  # 2.0.64
    ("ac/0df591859d/0", 14, 17, 17, 463592, 425120, None, 0),  # 2.1.41
    ("b0/be9accda39/0", 4, 3, 3, 163520, 122052, None, 0),  # 2.0.76
    ("c6/39a44ea03d/0", 4, 3, 3, 179933, 159260, None, 0),  # 2.1.37
    ("c9/883595c929/0", 2, 1, 1, 69836, 34788, None, 0),  # 2.0.74
    ("d8/ab7104d00c/0", 4, 3, 3, 105347, 96572, None, 0),  # 2.1.31
    ("dc/49cb8a2a42/0", 3, 4, 4, 131369, 42386, None, 0),  # 2.1.7
    ("f4/bd19c39902/0", 9, 8, 8, 417573, 406748, 1580, 1),  # 2.1.3
]
# (folder, gemini messages, tool calls, input, cached, output + thoughts)
GEMINI_COUNTS = [
    ("12/cbfeaa512b/0", 4, 2, 48965, 35330, 302),
    ("ab/2b9748b105/0", 11, 9, 131375, 113854, 1812),
    ("ec/38b74f08e3/2", 0, 0, None, None, None),  # one "warning" message, no model call
]


@pytest.mark.parametrize("row", CLAUDE, ids=[r[0] for r in CLAUDE])
def test_claude_code_sessions_match_the_hand_counts(row):
    folder, turns, calls, results, inp, cached, out, finals = row
    (t,) = import_file(CC / folder / "full.jsonl")
    obs = [o for x in t.turns for o in x.observations]
    assert (t.totals.turns, t.totals.tool_calls, len(obs)) == (turns, calls, results)
    assert all(o.text is not None for o in obs)  # empty outputs are "", not lost
    assert (t.totals.input_tokens, t.totals.cached_tokens) == (inp, cached)
    assert t.totals.output_tokens == out
    n = coverage(t)
    if 0 < finals < turns:  # a partial sum: marked, and the import says so
        assert t.totals.partial and partial_fields(t) == ["output_tokens"]
        assert stats_row(t)["partial"] == ["output_tokens"]
        assert any(w.startswith("usage: the token sums cover only some") for w in shortfalls(t, n))
    else:
        assert partial_fields(t) == []
    if results < calls:
        assert f"observations: {calls - results} of {calls} tool calls have no result" in (
            shortfalls(t, n)
        )


@pytest.mark.parametrize("row", GEMINI_COUNTS, ids=[r[0] for r in GEMINI_COUNTS])
def test_gemini_sessions_match_the_hand_counts(row):
    folder, turns, calls, inp, cached, out = row
    path = GEMINI / folder / "full.jsonl"
    assert isinstance(json.loads(path.read_bytes()), dict)  # one JSON document, named .jsonl
    (t,) = import_file(path)
    assert (t.totals.turns, t.totals.tool_calls) == (turns, calls)
    assert (t.totals.input_tokens, t.totals.cached_tokens, t.totals.output_tokens) == (
        inp,
        cached,
        out,
    )
    assert shortfalls(t, coverage(t)) == []
