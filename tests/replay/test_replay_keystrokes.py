"""Terminus keystroke replay through tmux inside a real sandbox."""

from __future__ import annotations

import time

from agentpost.replay.run import replay, replay_into
from agentpost.replay.tmux import keystroke_call, new_output
from agentpost.tasks.evaluate import prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.model import Observation, Producer, ToolCall, Trajectory, Turn

SOLUTION = (
    """awk '$1 >= "2024-03-01T10:00:00" && $1 <= "2024-03-01T11:00:00"' events.log > window.log\n"""
)
WRONG = SOLUTION.replace('$1 <= "2024-03-01T11', '$1 < "2024-03-01T11')


def ks(keys: str, duration: float = 0.2, **kw) -> ToolCall:
    return ToolCall(
        name="bash_command",
        command=keys,
        kind="keystrokes",
        arguments={"keystrokes": keys, "duration": duration, **kw},
    )


def test_keystroke_call_reads_terminus_arguments() -> None:
    assert keystroke_call(ks("ls\n", 0.5), 60).duration_s == 0.5
    assert keystroke_call(ks("ls\n", 999), 60).duration_s == 60  # capped
    t1 = ToolCall(
        name="bash_command",
        kind="keystrokes",
        arguments={"keystrokes": "make\n", "is_blocking": True, "timeout_sec": 30},
    )
    assert keystroke_call(t1, 60) == keystroke_call(t1, 60).__class__("make\n", 30.0, True)
    assert (
        keystroke_call(ToolCall(name="x", kind="keystrokes", command="pwd\n"), 60).duration_s == 1.0
    )


def test_keystroke_replay_candidate_then_repair(tmux_backend) -> None:
    task = load_task(bundled_suite_path() / "log-time-window")
    turns = [
        Turn(index=0, tool_calls=[ks("cat events.log\n")]),
        Turn(index=1, tool_calls=[ks(WRONG), ks("tail -1 window.log\n")]),
        Turn(
            index=2,
            tool_calls=[
                ks(SOLUTION),
                ks("cat window.log\n", 0.3),
                ToolCall(name="mark_task_complete", kind="control"),
            ],
            observations=[Observation(text="2024-03-01T11:00:00 done job=1")],
        ),
    ]
    traj = Trajectory(
        id="k", agent="terminus-2", turns=turns, producer=Producer(name="t", version="0")
    )
    assert replay(traj, task, upto=(1, 0), backend=tmux_backend).reward == 0.0
    full = replay(traj, task, backend=tmux_backend)
    assert (full.status, full.reward, full.calls_replayed, full.calls_skipped) == ("ok", 1.0, 5, 1)


def test_durations_interrupts_and_blocking_calls(tmux_backend) -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    calls = [
        ks("sleep 30\n", 0.3),
        ks("C-c", 0.2),
        ks("cd /tmp\n"),
        ks("echo after > /app/after.txt\n"),
        ks("sleep 1; echo done > /app/blocked.txt", 20, is_blocking=True),
    ]
    calls.append(ToolCall(name="bash", command="pwd > /app/pwd.txt", kind="shell"))  # after tmux
    traj = Trajectory(
        id="d", turns=[Turn(index=0, tool_calls=calls)], producer=Producer(name="t", version="0")
    )
    with tmux_backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        t0 = time.monotonic()
        log = replay_into(traj, task, sb)
        took = time.monotonic() - t0
        assert log.failed is None and sb.get("/app/after.txt") == b"after\n"
        assert sb.get("/app/blocked.txt") == b"done\n"
        assert sb.get("/app/pwd.txt") == b"/tmp\n"  # the tmux shell's cwd carried over
    assert 1.5 < took < 15  # the recorded waits were honoured, the 30 s sleep was interrupted
    assert "^C" in log.calls[1].text and "/tmp#" in log.calls[3].text


def test_new_output_is_what_terminus_records() -> None:
    before = "root@box:/app# ls\nx\nroot@box:/app#\n"
    after = "root@box:/app# ls\nx\nroot@box:/app# cat x\nhello\nroot@box:/app#\n"
    assert new_output(before, after) == "root@box:/app# cat x\nhello\n"
    assert new_output(before, "cleared\n") == "cleared\n"  # scrolled or cleared: whole screen
    assert new_output("root@box:/app#\n", "root@box:/app# sleep 9\n") == "root@box:/app# sleep 9\n"
