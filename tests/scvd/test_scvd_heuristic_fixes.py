"""The causes of the offline panel's misses on real trajectories (issue 13), one synthetic
trajectory each (shaped like the real logs in fixtures/real-labels, not copied from them)."""

from __future__ import annotations

from agentpost.scvd.heuristic import annotate
from agentpost.scvd.shell import setup_install
from agentpost.trajectory.importers._common import tool_call
from agentpost.trajectory.model import Observation, Producer, Trajectory, Turn


def traj(*steps) -> Trajectory:
    """steps: (tool name, arguments, observation text, exit code)."""
    turns = [Turn(index=i, tool_calls=[tool_call(n, a, f"c{i}")],
                  observations=[Observation(call_id=f"c{i}", text=o, exit_code=e)])
             for i, (n, a, o, e) in enumerate(steps)]  # fmt: skip
    return Trajectory(
        id="t",
        instruction="fix it",
        turns=turns,
        producer=Producer(name="test (synthetic)", version="0"),
    )


def got(t):
    a = annotate(t, "t", "artifact")
    return a.candidate_step, a.verification_triggered, a.verification_outcome


WRITE = ("bash", {"command": "printf 'def f():\\n    return 1\\n' > solution.py"}, "", 0)


def test_an_edit_the_tool_rejected_is_not_the_candidate():
    failed = (
        "str_replace_editor",
        {"command": "create", "path": "/w/app.py", "file_text": "x"},
        "Ran into [Errno 2] No such file or directory: '/w/app.py'",
        None,
    )
    run = ("bash", {"command": "python3 app.py"}, "hello", 0)
    assert got(traj(failed, run)) == (None, False, None)  # it created nothing
    lint = (
        "edit",
        "edit 3:3\n  return 1\nend_of_edit",
        "Your proposed edit has introduced new syntax error(s). ERRORS: E999 IndentationError",
        None,
    )
    fixed = (
        "str_replace_editor",
        {"command": "create", "path": "/app/app.py", "file_text": "x"},
        "File created successfully at: /app/app.py",
        None,
    )
    assert got(traj(lint, run, fixed, run)) == (2, True, "supports_pass")


def test_editor_writes_to_a_reproduction_script_are_probes():
    t = traj(("str_replace_editor", {"command": "create", "path": "/app/reproduce.py", "file_text": "x"}, "created", None),
             ("bash", {"command": "python3 reproduce.py"}, "344", 0),
             ("str_replace_editor", {"command": "str_replace", "path": "/app/lib.py", "old_str": "a", "new_str": "b"}, "edited", None),
             ("bash", {"command": "python3 reproduce.py"}, "345", 0))  # fmt: skip
    assert got(t) == (2, True, "supports_pass")


def test_installing_the_project_is_set_up_not_the_candidate():
    assert setup_install("pip install -e .[dev]".split()) and setup_install(
        "python -m pip install -r requirements.txt".split()
    )
    assert not setup_install("pip install requests".split())  # a task may ask for exactly that
    t = traj(("bash", {"command": "pip install -e ."}, "Successfully installed", 0), WRITE,
             ("bash", {"command": "python3 -c 'import solution; assert solution.f() == 1'"}, "", 0))  # fmt: skip
    assert got(t) == (1, True, "supports_pass")


def test_environment_failures_are_no_effective_result():
    for out in (
        "ModuleNotFoundError: No module named 'numpy'",
        "curl: (6) Could not resolve host: x.org",
    ):
        t = traj(WRITE, ("bash", {"command": "python3 solution.py"}, out, 1))
        assert got(t) == (0, True, "no_effective_result"), out
    # a module the agent wrote itself failing to import is the candidate's error
    t = traj(
        WRITE,
        ("bash", {"command": "python3 -c 'import solution'"}, "No module named 'solution'", 1),
    )
    assert got(t) == (0, True, "exposes_error")


def test_failure_words_in_viewed_source_are_not_a_verdict():
    src = "def check(x):\n    if not x:\n        raise SyntaxError('bad')\n    assert x, AssertionError\n"
    t = traj(WRITE, ("bash", {"command": "cat solution.py"}, src, 0))
    assert got(t) == (0, True, "supports_pass")
    run = traj(
        WRITE,
        ("bash", {"command": "python3 solution.py"}, "  File x\nSyntaxError: invalid syntax", 0),
    )
    assert got(run) == (0, True, "exposes_error")  # the same words from a run are one


def test_starting_a_server_is_not_a_check_but_querying_it_is():
    t = traj(
        WRITE, ("bash", {"command": "python3 -m http.server 8000"}, "Serving HTTP on 0.0.0.0", -1)
    )
    assert got(t) == (0, False, None)
    q = traj(
        WRITE,
        (
            "bash",
            {
                "command": "python3 -m http.server 8000 & sleep 1; curl -s localhost:8000/solution.py"
            },
            "def f():",
            0,
        ),
    )
    assert got(q)[1] is True
