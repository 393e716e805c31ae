"""Multi-call steps read one way everywhere (protocol.call_outputs): the judge view, the
heuristic annotator, replay and the distillation prefix, on a Terminus-2 log.

The log is harbor's real Terminus-2 golden trajectory (shared/data, Apache-2.0, see its
PROVENANCE.md). No Terminus-2 log in shared/data has a reply with two commands, so the test
derives one from it: steps 7 (``printf 'Hello, world!\\n' > hello.txt``) and 8 (``cat
hello.txt``) become one reply with both commands and one terminal screen, the two real screens
joined, with no ``source_call_id`` (as Terminus-2 records one screen per reply). Everything else
is the real file.
"""

from __future__ import annotations

import json
from pathlib import Path

from shared_data import TRAJECTORIES, needed

from agentpost.replay.run import plan
from agentpost.scvd import heuristic
from agentpost.scvd.distill.samples import student_prefix, to_messages
from agentpost.scvd.protocol import call_outputs, render
from agentpost.tasks.loader import load_task
from agentpost.trajectory.importing import import_file
from agentpost.trajectory.model import Observation, ToolCall, Turn

HERE = Path(__file__).resolve().parent
GOLDEN = TRAJECTORIES / "atif" / "harbor-golden"
LOG = GOLDEN / "terminus_2" / "hello-world-context-summarization.trajectory.json"
TASK = HERE.parent / "replay" / "fixtures" / "hello-world"

pytestmark = needed


def merged(tmp_path: Path):
    doc = json.loads(LOG.read_text())
    steps = {s["step_id"]: s for s in doc["steps"]}
    write, check = steps[7], steps[8]
    screen = (
        "New Terminal Output:\n\nroot@CONTAINER_ID:/app# printf 'Hello, world!\\n' > hello.txt\n"
    )
    screen += check["observation"]["results"][0]["content"].split("\n\n", 1)[1]
    assert "cat hello.txt\nHello, world!" in screen
    write["tool_calls"] = write["tool_calls"] + check["tool_calls"]
    write["observation"] = {"results": [{"content": screen}]}
    doc["steps"] = [s for s in doc["steps"] if s["step_id"] != 8]
    path = tmp_path / "terminus-two-commands.trajectory.json"
    path.write_text(json.dumps(doc))
    (traj,) = import_file(path)
    return traj, screen


def test_the_rule_itself():
    a, b = ToolCall(id="a", name="x"), ToolCall(id="b", name="x")
    screen = Observation(text="screen")
    assert call_outputs(Turn(index=0, tool_calls=[a, b], observations=[screen])) == [None, screen]
    own = [Observation(call_id="b", text="B"), Observation(call_id="a", text="A")]
    assert [o.text for o in call_outputs(Turn(index=0, tool_calls=[a, b], observations=own))] == [
        "A",
        "B",
    ]
    pos = [Observation(text="1"), Observation(text="2")]
    assert call_outputs(Turn(index=0, tool_calls=[a, b], observations=pos)) == pos


def test_judge_view_heuristic_replay_and_distill_agree(tmp_path):
    traj, screen = merged(tmp_path)
    turn = next(t for t in traj.turns if t.step == 7)
    assert [c.kind for c in turn.tool_calls] == ["keystrokes", "keystrokes"]
    assert [o.text if o else None for o in call_outputs(turn)] == [None, screen]
    view = render(traj)
    assert "[output of step 7, tool call 0] (none recorded)" in view
    assert view.index("[output of step 7, tool call 1]") < view.index(
        "cat hello.txt\nHello, world!"
    )
    # the check (call 1) is judged on the screen it produced: a pass, not "no effective result"
    ann = heuristic.annotate(traj, "c", "artifact")
    assert (ann.candidate_step, ann.candidate_tool_call_index, ann.boundary_type) == (7, 0, "clean")
    assert (ann.verification_triggered, ann.verification_outcome) == (True, "supports_pass")
    # replay plans the same outputs
    planned = {(p.step, p.call_index): p.observation for p in plan(traj)}
    assert planned[(7, 0)] is None and planned[(7, 1)].text == screen
    # the hand-off prefix through call 0 holds neither the check nor the screen after it
    prefix = student_prefix(traj, 7, 0)
    msgs = to_messages(prefix)
    assert len(prefix.turns[-1].tool_calls) == 1 and prefix.turns[-1].observations == []
    assert all("cat hello.txt" not in (m.get("content") or "") for m in msgs if m["role"] == "tool")
    assert "cat hello.txt" not in json.dumps(msgs[-1])


def test_the_handoff_observation_is_the_replayed_screen(tmux_backend, tmp_path):
    from agentpost.scvd.distill.collect import CollectOptions, handoff_messages, replay_state
    from agentpost.tasks.evaluate import prepare, spec_for

    traj, _ = merged(tmp_path)
    task = load_task(TASK)
    with tmux_backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        state = replay_state(traj, task, (7, 0), sb, CollectOptions())
        assert state.status == "ok" and sb.get("/app/hello.txt") == b"Hello, world!\n"
    _, msgs = handoff_messages(traj, (7, 0), state)
    last = msgs[-1]
    assert last["role"] == "tool" and "printf 'Hello, world!\\n' > hello.txt" in last["content"]
    assert "cat hello.txt" not in last["content"]
