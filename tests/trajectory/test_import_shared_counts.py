"""Issue 28: the real files of ``../shared/data/trajectories`` no other test counts, checked
against counts taken from the raw files by hand (not by the importer); skipped when the shared
folder is absent.

- mini-swe-agent (SWE-bench bash-only, gemini-3-pro): assistant messages, the ``usage`` of
  each message's ``extra.response`` summed, ``<returncode>`` tags in the observations;
- SWE-agent CTF demonstrations: ``trajectory`` entries; ``model_stats`` tokens are 0 (no model
  was called: placeholders, so unknown);
- OpenHands ``basic_interactions.json``: 3 agent actions (2 messages, finish), usage only on the
  finish (2473 in, 10 out), so the sums are partial;
- OpenHands SDK ``nonfncall-llm-message.json``: 4 assistant messages with one tool call each
  and 4 tool messages."""

import pytest
from shared_data import TRAJECTORIES, needed

from agentpost.trajectory.importing import import_file
from agentpost.trajectory.render import partial_fields

MORE = TRAJECTORIES / "more-real"
pytestmark = needed
MINI = MORE / "mini-swe-agent" / "swebench_results" / "20251118_gemini-3-pro-74pct" / "trajs"
CTF = MORE / "swe-agent" / "trajectories" / "demonstrations" / "ctf"

# file, turns, tool calls, observations, exit codes seen, distinct codes, input, output
CASES = [
    (MINI / "sympy__sympy-13031/sympy__sympy-13031.traj.json", 115, 113, 115, 112, {0, 1},
     2328116, 22882),
    (MINI / "django__django-11163/django__django-11163.traj.json", 13, 13, 13, 12, {0},
     71166, 2773),
    (CTF / "crypto/BabyEncryption.traj", 16, 16, 16, 0, set(), None, None),
    (CTF / "web/i_got_id_demo.traj", 21, 21, 21, 0, set(), None, None),
    (MORE / "openhands/tests/runtime/trajs/basic_interactions.json", 3, 1, 0, 0, set(), 2473, 10),
    (MORE / "openhands-sdk/tests/fixtures/llm_data/nonfncall-llm-message.json", 4, 4, 4, None,
     None, None, None),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0].name for c in CASES])
def test_real_file_matches_its_hand_counts(case):
    path, turns, calls, results, n_codes, codes, inp, out = case
    (t,) = import_file(path)
    obs = [o for x in t.turns for o in x.observations]
    assert (t.totals.turns, t.totals.tool_calls, len(obs)) == (turns, calls, results)
    if n_codes is not None:
        got = [o.exit_code for o in obs if o.exit_code is not None]
        assert (len(got), set(got)) == (n_codes, codes)
    assert (t.totals.input_tokens, t.totals.output_tokens) == (inp, out)


def test_placeholder_and_partial_figures_are_said():
    (demo,) = import_file(CTF / "crypto/BabyEncryption.traj")
    assert demo.totals.unknown == ["input_tokens", "output_tokens"]  # 0s no model made
    (oh,) = import_file(MORE / "openhands/tests/runtime/trajs/basic_interactions.json")
    assert partial_fields(oh) == ["input_tokens", "cached_tokens", "output_tokens"]
