"""OpenAI Codex CLI rollouts: two labelled synthetic sessions (tests/data/synthetic/codex; the
real madshn/localpush sessions they were checked against are not kept in this repository, see
tests/data/README.md).

Independent check: the sum of ``last_token_usage`` over distinct ``token_count`` events equals
the session's final ``total_token_usage`` (18050 / 13056 / 376 / 204 for the 11-12 file).
"""

from pathlib import Path

from agentpost.trajectory.importers import detect
from agentpost.trajectory.importing import import_file

SYN = (
    Path(__file__).resolve().parents[1]
    / "data/synthetic/codex/sessions/2025/11/12"
    / "rollout-2025-11-12T08-00-00-019a7b2c-1d2e-7f30-8a41-5b6c7d8e9f01.jsonl"
)
# the 11-12 session cut right after its first call, as a killed run leaves it
CUT = (
    Path(__file__).resolve().parents[1]
    / "data/synthetic/codex/sessions/2025/11/13"
    / "rollout-2025-11-13T08-00-00-019a7b2c-1d2e-7f30-8a41-5b6c7d8e9f02.jsonl"
)


def test_detected():
    assert detect(SYN, SYN.read_bytes()[:65536]) == "codex"
    assert detect(CUT, CUT.read_bytes()[:65536]) == "codex"


def test_session_cut_after_a_call():
    (t,) = import_file(CUT)
    assert (t.totals.turns, t.totals.tool_calls, t.turns[0].observations) == (1, 1, [])
    assert (t.totals.input_tokens, t.totals.output_tokens, t.totals.reasoning_tokens) == (
        4210,
        96,
        64,
    )


def test_synthetic_session_kinds_exit_codes_and_instruction():
    (t,) = import_file(SYN)
    assert t.instruction == "Create hello.txt containing 'Hello, world!' and run the tests."
    calls = [c for tt in t.turns for c in tt.tool_calls]
    assert [(c.name, c.kind, c.command) for c in calls] == [
        ("shell", "shell", "ls"),
        ("apply_patch", "edit", None),
        ("shell", "shell", "python -m pytest -q"),
    ]
    assert [o.exit_code for tt in t.turns for o in tt.observations] == [0, 0, 1]
    assert t.turns[0].reasoning == "**Looking at the workspace**"
    # the rate-limit update that repeats the totals is not a model call
    assert t.totals.turns == 4 and t.turns[-1].text.startswith("Created hello.txt")
    assert (t.totals.input_tokens, t.totals.cached_tokens) == (18050, 13056)
    assert (t.totals.output_tokens, t.totals.reasoning_tokens) == (376, 204)
