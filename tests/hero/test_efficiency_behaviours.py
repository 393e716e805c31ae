"""b.8 detectors, b.6 entropy, b.2/b.10 TRS and cost, b.9 variation and association."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hero_traj_factory import peaked, shell, traj, turn

from agentpost.hero.association import association, point_biserial
from agentpost.hero.behaviours import CLASSIFIERS, command_is_read_only, detect
from agentpost.hero.cost import cache_hit_rate, relative_cost, trajectory_cost, trs
from agentpost.hero.entropy import token_entropy, turn_entropy
from agentpost.hero.variation import task_variation
from agentpost.prices import Prices
from agentpost.trajectory.model import Observation, ToolCall, Turn

PAPER = [  # (R %, C M tokens, TRS) from spec (d)
    (32.8, 4.5, 14.0),
    (37.4, 6.8, 13.4),
    (40.0, 4.5, 17.1),
    (47.0, 5.9, 17.9),
    (49.2, 3.5, 23.2),
    (59.2, 5.2, 23.8),
    (60.6, 2.7, 31.5),
]


@pytest.mark.parametrize(("r", "c", "expected"), PAPER)
def test_trs_reproduces_the_paper_table(r, c, expected):
    assert abs(trs(r, c) - expected) <= 0.1


@pytest.mark.parametrize(
    ("cmd", "ro"),
    [
        ("ls -la", True),
        ("cat a.py | grep foo", True),
        ("git diff HEAD", True),
        ("sed -n '1,20p' a.py", True),
        ("grep -r x . 2>/dev/null", True),
        ("cd src && ls", True),
        ("echo hi > f", False),
        ("sed -i s/a/b/ f", False),
        ("python -m pytest", False),
        ("cat <<EOF > f\nx\nEOF", False),
        ("ls | tee out", False),
        ("pip install x", False),
        ("git commit -m x", False),
        ("rm -rf build", False),
        ("find . -name '*.py'", True),
        ("find . -name '*.pyc' -delete", False),
        ("find . -exec sed -i s/a/b/ {} +", False),
        ("sed --in-place s/a/b/ f", False),
        ("echo hi 2>&1", True),
        ("git -C repo log --oneline", True),
        ("git --no-pager -c color.ui=never diff", True),
        ("git -C repo checkout -b x", False),
        ("git -C", False),
    ],
)
def test_read_only_command_classifier(cmd, ro):
    assert command_is_read_only(cmd) is ro


def test_repeated_calls_respect_the_write_window():
    turns = [
        turn(0, [shell("cat a.py")]),
        turn(1, [shell("cat  a.py")]),
        turn(2, [shell("python edit.py")]),
        turn(3, [shell("cat a.py")]),
        turn(4, [shell("python edit.py")]),
        turn(5, [shell("python edit.py")]),
    ]
    t = traj("t", "task", "m", True, turns)
    # turn 4 repeats turn 2 with only reads in between; turn 3 follows a write
    assert [f.repeated_call for f in detect(t)] == [False, True, False, False, True, True]
    assert [f.repeated_call for f in detect(t, repeat_window="anywhere")] == [
        False,
        True,
        False,
        True,
        True,
        True,
    ]
    assert [f.repeated_call for f in detect(t, repeat_window=1)] == [
        False,
        True,
        False,
        False,
        False,
        True,
    ]


def test_over_exploration_flags_every_turn_of_a_run_of_15():
    reads = [turn(i, [shell(f"cat f{i}.py")]) for i in range(15)]
    edit = turn(
        15,
        [
            (
                ToolCall(
                    name="str_replace_editor",
                    kind="edit",
                    arguments={"command": "str_replace", "path": "a"},
                ),
                Observation(text="ok"),
            )
        ],
    )
    short = [turn(16 + i, [shell(f"ls d{i}")]) for i in range(14)]
    flags = detect(traj("t", "task", "m", True, reads + [edit] + short))
    assert all(f.over_exploration for f in flags[:15])
    assert not any(f.over_exploration for f in flags[15:])
    assert flags[3].read_only and not flags[15].read_only


def test_tool_errors_from_flag_exit_code_or_regex():
    turns = [
        turn(0, [shell("ls", exit_code=2)]),
        turn(1, [shell("ls", is_error=True)]),
        turn(2, [shell("x", exit_code=None, text="bash: x: command not found")]),
        turn(3, [shell("ls", exit_code=0, text="Traceback (most recent call last)")]),
        turn(4, [shell("ls", exit_code=None, text="all good")]),
    ]
    flags = detect(traj("t", "task", "m", False, turns))
    assert [f.tool_error for f in flags] == [True, True, True, False, False]
    assert CLASSIFIERS["version"].startswith("hero-behaviours/")


def test_token_entropy_renormalised_and_tail_variants():
    uniform = np.full((1, 10), math.log(0.1))
    assert token_entropy(uniform)[0] == pytest.approx(math.log(10))
    half = np.full((1, 10), math.log(0.05))  # top-10 hold half the mass
    assert token_entropy(half)[0] == pytest.approx(math.log(10))
    tail = token_entropy(half, renorm=False)[0]
    assert tail == pytest.approx(-10 * 0.05 * math.log(0.05) - 0.5 * math.log(0.5))
    mixed = np.array([[math.log(0.01)] * 5 + peaked(0.5, 5)])  # 10 columns, top-5 last
    assert token_entropy(mixed, topk=5)[0] == pytest.approx(
        token_entropy(np.array([peaked(0.5, 5)]))[0]
    )
    t = turn(0, [shell("ls")], p_top=0.99)
    assert turn_entropy(t) < turn_entropy(turn(0, [shell("ls")], p_top=0.3))
    assert turn_entropy(turn(0, [shell("ls")])) is None


def test_action_only_entropy_uses_the_tool_call_tokens():
    lp = [peaked(0.3)] * 3 + [peaked(0.99)] * 2
    from agentpost.trajectory.model import Logprobs

    t = Turn(
        index=0,
        tool_calls=[ToolCall(name="bash", command="ls -a", kind="shell")],
        logprobs=Logprobs(tokens=["I ", "will ", "look", "ls", " -a"], top_logprobs=lp),
    )
    assert turn_entropy(t, tokens="action_only") == pytest.approx(
        float(token_entropy(np.array(lp[3:])).mean())
    )
    assert turn_entropy(t, tokens="all") > turn_entropy(t, tokens="action_only")


def test_cache_hit_and_cost_are_null_when_unknown():
    known = traj("a", "t", "m", True, [turn(0, [shell("ls")], inp=1000, cached=900, out=100)])
    assert cache_hit_rate([known]) == pytest.approx(0.9)
    unknown = traj("b", "t", "m", True, [turn(0, [shell("ls")], inp=1000, cached=None, out=10)])
    assert cache_hit_rate([unknown]) is None
    # a call without a cached count does not dilute the hit rate of the calls that have one
    mixed = traj(
        "c",
        "t",
        "m",
        True,
        [
            turn(0, [shell("ls")], inp=1000, cached=None),
            turn(1, [shell("ls")], inp=500, cached=400),
        ],
    )
    assert cache_hit_rate([mixed]) == pytest.approx(0.8)
    assert cache_hit_rate([known, mixed]) == pytest.approx((900 + 400) / (1000 + 500))
    assert trajectory_cost(unknown, Prices()) is None
    cost = trajectory_cost(known, Prices(input=2.0, output=8.0))
    assert cost == pytest.approx((100 * 2 + 900 * 0.2 + 100 * 8) / 1e6)  # per 1M tokens
    assert relative_cost(1.0, None) is None and relative_cost(0.5, 0.25) == 2.0


def test_variation_among_resolved_rollouts():
    v = task_variation([100, 200, 400, 800])
    assert v["cmax_cmin"] == 8.0
    assert v["p90_p10"] == pytest.approx(np.percentile([100, 200, 400, 800], 90) / 130)
    assert v["cv"] == pytest.approx(np.std([100, 200, 400, 800]) / 375)
    assert task_variation([5])["cmax_cmin"] is None


def test_association_finds_low_entropy_unproductive_turns():
    rng = np.random.default_rng(0)
    k = 400
    traj_id = np.repeat(np.arange(40), 10)
    group = traj_id // 8
    un = rng.random(k) < 0.3
    h = np.where(un, rng.normal(0.3, 0.1, k), rng.normal(1.0, 0.3, k))
    flags = {
        "repeated_call": un,
        "over_exploration": np.zeros(k, bool),
        "tool_error": np.zeros(k, bool),
        "unproductive": un,
    }
    a = association(group, traj_id, h, flags, n_boot=200)
    assert a["buckets"]["low"]["unproductive_rate"] > a["buckets"]["rest"]["unproductive_rate"]
    assert a["mean_entropy"]["unproductive"] < a["mean_entropy"]["productive"]
    r = a["point_biserial_r"]
    assert r == pytest.approx(point_biserial(un, h)) and r < -0.5
    assert a["r_ci"][0] <= r <= a["r_ci"][1]


def _write(path: str, name: str = "create"):
    return ToolCall(
        name=name, arguments={"path": path, "file_text": "..."}, kind="edit"
    ), Observation(text="File created", is_error=False)


def test_a_failed_run_of_a_script_the_agent_wrote_is_a_check_run_not_a_tool_error():
    """The rule in hero.behaviours' docstring: the agent writes reproduce.py (a create tool) and
    check.sh (a shell heredoc), runs them and they fail by design: check runs (C), not tool
    errors, not unproductive. A mistyped command, a failed run of a file it only edited in
    place, and a failed run of a file it never wrote stay tool errors (E)."""
    from agentpost.hero.analyze import analyze

    edit = ToolCall(name="str_replace_editor", kind="edit",
                    arguments={"command": "str_replace", "path": "/repo/setup.py", "old_str": "a",
                               "new_str": "b"}), Observation(text="edited", is_error=False)  # fmt: skip
    turns = [
        turn(0, [_write("/testbed/reproduce.py")]),
        turn(1, [shell("python reproduce.py", 1, "AssertionError: bug shown")]),
        turn(2, [shell("cat > check.sh <<'EOF'\nexit 3\nEOF\nbash check.sh", 3)]),
        turn(3, [shell("pythn reproduce.py", 127, "pythn: command not found")]),
        turn(4, [edit, shell("python /repo/setup.py", 1, "Traceback (most recent call last):")]),
        turn(5, [shell("python other.py", 2, "No such file or directory")]),
        turn(6, [shell("./reproduce.py", 0)]),
    ]
    flags = detect(traj("t", "k", "m", True, turns))
    assert [(f.tool_error, f.check_run) for f in flags] == [
        (False, False), (False, True), (False, True), (True, False), (True, False),
        (True, False), (False, False),
    ]  # fmt: skip
    assert not flags[1].unproductive and flags[3].unproductive
    doc = analyze([traj("t", "k", "m", True, turns)], n_boot=0)
    (row,) = doc["trajectories"]
    assert row["check_run_turns"] == 2 and row["tool_error_turns"] == 3
    assert row["turn_flags"][1] == "C" and "E" in row["turn_flags"][3]
    (m,) = doc["models"]
    assert m["behaviour_counts"]["check_run"] == 2 and m["behaviour_counts"]["tool_error"] == 3
    # the efficiency table and the report show both kinds side by side
    import subprocess
    import sys

    from agentpost.report.build import render_run_dir
    from agentpost.trajectory.io import write_jsonl

    tmp = __import__("tempfile").mkdtemp(prefix="agentpost-check-runs-")
    write_jsonl(f"{tmp}/t.jsonl", [traj("t", "k", "m", True, turns)])
    proc = subprocess.run([sys.executable, "-c", "from agentpost.cli import main; main()",
                           "efficiency", f"{tmp}/t.jsonl", "-o", f"{tmp}/efficiency.json"],
                          capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0 and "chk check run" in proc.stdout, proc.stdout
    html = render_run_dir(tmp).read_text()
    assert "check runs: 2 turns in 1 runs ran a script it wrote and failed" in html
    assert "and check runs (a failed run of a script the agent wrote" in html
