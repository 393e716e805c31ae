"""File-edit tool semantics (pure) and edit-kind replay inside a real sandbox."""

from __future__ import annotations

import pytest

from agentpost.replay.edits import EditError, EditOp, apply_edit, parse_edit
from agentpost.replay.run import replay, replay_into
from agentpost.tasks.evaluate import prepare, spec_for
from agentpost.tasks.loader import bundled_suite_path, load_task
from agentpost.trajectory.model import Observation, Producer, ToolCall, Trajectory, Turn


def test_parse_edit_across_scaffolds() -> None:
    assert parse_edit(
        "str_replace_editor", {"command": "create", "path": "/a", "file_text": "x"}
    ) == EditOp("create", "/a", text="x")
    assert parse_edit(
        "str_replace_editor", {"command": "str_replace", "path": "a", "old_str": "x"}
    ) == EditOp("str_replace", "a", old="x", new="")
    assert parse_edit(
        "file_editor", {"command": "insert", "path": "a", "insert_line": 2, "new_str": "y"}
    ) == EditOp("insert", "a", new="y", line=2)
    assert parse_edit("str_replace_editor", {"command": "view", "path": "a"}).command == "view"
    assert (
        parse_edit("str_replace_editor", {"command": "undo_edit", "path": "a"}).command
        == "undo_edit"
    )
    # Gemini CLI
    assert parse_edit("write_file", {"file_path": "/b", "content": "z"}) == EditOp(
        "create", "/b", text="z"
    )
    assert parse_edit(
        "replace",
        {"file_path": "/b", "old_string": "a", "new_string": "b", "expected_replacements": 2},
    ) == EditOp("str_replace", "/b", old="a", new="b", count=2)
    # OpenHands legacy FileEditAction
    assert (
        parse_edit("str_replace_editor", {"command": "create", "path": "/c", "content": "q"}).text
        == "q"
    )
    for bad in (
        {"command": "create"},
        {"command": "frobnicate", "path": "a"},
        "not a dict",
        {"command": "insert", "path": "a", "new_str": "x"},
    ):
        with pytest.raises(EditError):
            parse_edit("str_replace_editor", bad)


def test_apply_edit_semantics() -> None:
    assert apply_edit(EditOp("create", "a", text="new"), "old") == "new"
    assert apply_edit(EditOp("str_replace", "a", old="b", new="B"), "abc") == "aBc"
    with pytest.raises(EditError, match="occurs 2 times"):
        apply_edit(EditOp("str_replace", "a", old="x", new="y"), "x x")
    with pytest.raises(EditError, match="occurs 0 times"):
        apply_edit(EditOp("str_replace", "a", old="q", new="y"), "x x")
    assert apply_edit(EditOp("str_replace", "a", old="x", new="y", count=2), "x x") == "y y"
    assert apply_edit(EditOp("insert", "a", new="top", line=0), "l1\nl2") == "top\nl1\nl2"
    assert apply_edit(EditOp("insert", "a", new="mid", line=1), "l1\nl2") == "l1\nmid\nl2"
    with pytest.raises(EditError, match="outside"):
        apply_edit(EditOp("insert", "a", new="x", line=5), "l1\nl2")
    with pytest.raises(EditError, match="no such file"):
        apply_edit(EditOp("str_replace", "a", old="x", new="y"), None)


def ed(**args) -> ToolCall:
    return ToolCall(name="str_replace_editor", arguments=args, kind="edit")


def test_edit_replay_fixes_a_package(backend) -> None:
    """fix-pagination repaired purely with str_replace edits (one relative path) → reward 1;
    the replay stops short of the second fix → reward 0."""
    task = load_task(bundled_suite_path() / "fix-pagination")
    calls = [
        ed(command="view", path="/app/pager.py"),
        ed(
            command="str_replace",
            path="pager.py",
            old_str="return n_items // per_page",
            new_str="return -(-n_items // per_page)",
        ),
        ed(
            command="str_replace",
            path="/app/pager.py",
            old_str="start = page * per_page",
            new_str="start = (page - 1) * per_page",
        ),
    ]
    traj = Trajectory(
        id="e", turns=[Turn(index=0, tool_calls=calls)], producer=Producer(name="t", version="0")
    )
    assert replay(traj, load_task(task.path), upto=(0, 1), backend=backend).reward == 0.0
    full = replay(traj, task, backend=backend)
    assert (full.status, full.reward, full.calls_replayed, full.calls_skipped) == ("ok", 1.0, 2, 1)


def test_create_insert_undo_and_recorded_errors(backend) -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    calls = [
        ed(command="create", path="/app/notes/n.txt", file_text="a\nb"),
        ed(command="insert", path="/app/notes/n.txt", insert_line=1, new_str="mid"),
        ed(
            command="str_replace", path="/app/notes/n.txt", old_str="nope", new_str="x"
        ),  # failed then
        ed(command="create", path="/app/u.txt", file_text="v1"),
        ed(command="str_replace", path="/app/u.txt", old_str="v1", new_str="v2"),
        ed(command="undo_edit", path="/app/u.txt"),
    ]
    obs = [
        Observation(text="File created successfully"),
        Observation(is_error=False),
        Observation(
            text="ERROR: No replacement was performed, old_str `nope` did not appear verbatim"
        ),
        Observation(),
        Observation(),
        Observation(),
    ]
    traj = Trajectory(
        id="c",
        turns=[Turn(index=0, tool_calls=calls, observations=obs)],
        producer=Producer(name="t", version="0"),
    )
    with backend.create(spec_for(task)) as sb:
        prepare(task, sb)
        log = replay_into(traj, task, sb)
        assert log.failed is None
        assert [c.action for c in log.calls] == [
            "replayed",
            "replayed",
            "skipped",
            "replayed",
            "replayed",
            "replayed",
        ]
        assert sb.get("/app/notes/n.txt") == b"a\nmid\nb"
        assert sb.get("/app/u.txt") == b"v1"


def test_edit_that_diverges_fails_the_replay(backend) -> None:
    task = load_task(bundled_suite_path() / "fix-pagination")
    calls = [
        ed(command="str_replace", path="/app/pager.py", old_str="not in the file", new_str="x"),
        ToolCall(name="bash", command="touch /app/never", kind="shell"),
    ]
    traj = Trajectory(
        id="d",
        turns=[
            Turn(
                index=0,
                step=7,
                tool_calls=calls,
                observations=[Observation(is_error=False), Observation()],
            )
        ],
        producer=Producer(name="t", version="0"),
    )
    res = replay(traj, task, backend=backend)
    assert res.status == "replay_failed" and res.reward is None and res.calls_replayed == 0
    assert res.failed_call["step"] == 7 and res.failed_call["call"] == 0
    assert "occurs 0 times" in res.failed_call["error"]


def test_edit_outside_writable_dirs_fails(backend) -> None:
    task = load_task(bundled_suite_path() / "csv-to-json")
    traj = Trajectory(
        id="o",
        turns=[Turn(index=0, tool_calls=[ed(command="create", path="/etc/evil", file_text="x")])],
        producer=Producer(name="t", version="0"),
    )
    res = replay(traj, task, backend=backend)
    assert res.status == "replay_failed" and "/etc/evil" in res.failed_call["error"]


def test_swe_agent_windowed_edit_semantics() -> None:
    from agentpost.replay.edits import parse_swe_agent_edit

    op = parse_swe_agent_edit(
        "edit", {"action": "x"}, "edit 2:3\nB\nC2\nend_of_edit\n", "/app/f.py"
    )
    assert (op.command, op.line, op.end, op.new) == ("replace_lines", 2, 3, "B\nC2")
    assert apply_edit(op, "a\nb\nc\nd\n") == "a\nB\nC2\nd\n"
    grow = parse_swe_agent_edit("edit", {}, "edit 1:0\nnew first\nend_of_edit", "/f")
    assert apply_edit(grow, "x\n") == "new first\nx\n"  # N:N-1 inserts before line N
    with pytest.raises(EditError, match="outside"):
        apply_edit(parse_swe_agent_edit("edit", {}, "edit 5:9\nz\nend_of_edit", "/f"), "a\n")
    rep = parse_swe_agent_edit(
        "edit", {"search": "a", "replace": "b", "replace-all": True}, None, "/f"
    )
    assert apply_edit(rep, "a a") == "b b"
    with pytest.raises(EditError, match="not found"):
        apply_edit(rep, "zzz")
    assert parse_swe_agent_edit("create", {"filename": "r.py"}, "create r.py", None) == EditOp(
        "create", "r.py", text=""
    )
    app = parse_swe_agent_edit("insert", {"text": "tail"}, None, "/f")
    assert app.command == "append" and apply_edit(app, "head") == "head\ntail\n"
    ins = parse_swe_agent_edit("insert", {"text": "mid", "line": 1}, None, "/f")
    assert apply_edit(ins, "a\nb") == "a\nmid\nb"
    with pytest.raises(EditError, match="no open file"):
        parse_swe_agent_edit("edit", {"search": "a", "replace": "b"}, None, None)
