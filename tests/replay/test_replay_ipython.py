"""Replay runs IPython cells as python (OpenHands ``execute_ipython_cell``), and a call it cannot
run that may change the state makes the replay ``unfaithful`` (no y_c). The trajectories are
synthetic, shaped like OpenHands CodeAct's tool calls; the task is the hello-world fixture.
Judge usage in metrics.json sums every invocation of a resumed diagnose."""

from __future__ import annotations

from pathlib import Path

from agentpost.agent.loopback import LoopbackServer
from agentpost.judges.config import build_panel
from agentpost.replay.run import replay
from agentpost.scvd.pipeline import metric_record
from agentpost.scvd.records import PanelDecision
from agentpost.tasks.loader import load_task
from agentpost.trajectory.importers._common import tool_call
from agentpost.trajectory.model import Observation, Producer, Trajectory, Turn

TASK = load_task(Path(__file__).resolve().parent / "fixtures" / "hello-world")


def cells(*calls) -> Trajectory:
    turns = [Turn(index=i, tool_calls=[tool_call(n, a, f"c{i}")],
                  observations=[Observation(call_id=f"c{i}", text="ok")])
             for i, (n, a) in enumerate(calls)]  # fmt: skip
    return Trajectory(
        id="ipy",
        agent="CodeActAgent",
        instruction="write hello.txt",
        turns=turns,
        producer=Producer(name="test (synthetic)", version="0"),
    )


def test_an_ipython_cell_that_writes_the_file_is_replayed(backend):
    code = "with open('hello.txt', 'w') as f:\n    f.write('Hello, world!\\n')\n!ls hello.txt"
    res = replay(cells(("execute_ipython_cell", {"code": code})), TASK, backend=backend)
    assert (res.status, res.resolved, res.calls_replayed) == ("ok", True, 1)


def test_a_cell_that_fails_now_but_worked_then_is_a_failed_replay(backend):
    res = replay(
        cells(("execute_ipython_cell", {"code": "import no_such_module"})), TASK, backend=backend
    )
    assert res.status == "replay_failed" and "IPython cell failed" in res.message


def test_calls_replay_cannot_run_make_the_replay_unfaithful(backend):
    write = ("execute_ipython_cell", {"code": "open('hello.txt','w').write('Hello, world!\\n')"})
    for skipped in (
        ("execute_ipython_cell", {"code": "%pip install x"}),
        ("custom_writer", {"path": "a"}),
    ):
        res = replay(cells(write, skipped), TASK, backend=backend)
        assert res.status == "unfaithful" and res.details["unfaithful_calls"] == [[1, 0]]
        assert res.resolved is True  # graded for the record ...
        d = PanelDecision("vote", True, 0, 0, "clean", True, "no-error", 3, 3, 3)
        assert metric_record(cells(write), d, res.to_json()).y_c is None  # ... but never a y_c
    # read-only tools keep the replay faithful
    res = replay(cells(write, ("think", {"thought": "hm"})), TASK, backend=backend)
    assert res.status == "ok"


def test_judge_usage_sums_every_invocation_of_a_resumed_run(tmp_path):
    from loopback_panel import CASES, answer, config, opts

    from agentpost.scvd.pipeline import diagnose

    trajs = [t for t, _ in CASES[:4]]
    with LoopbackServer(answer) as srv:
        first = diagnose(trajs[:2], [], build_panel(config(srv.url)), tmp_path, opts())
        second = diagnose(trajs, [], build_panel(config(srv.url)), tmp_path, opts())
    mine = [u["input_tokens"] for u in (first["judges"]["usage_this_invocation"],
                                        second["judges"]["usage_this_invocation"])]  # fmt: skip
    assert all(n > 0 for n in mine)
    total = second["judges"]["usage"]["total"]
    assert total["input_tokens"] == sum(mine) and total["answers"] == 12
