"""bench/real_tasks.py's report: every task of a set is listed, a task not run or not built says
why (the INDEX's reason, the build's own error) and is never counted as a silent 0, and the table
of causes adds up to the tasks. The INDEX part reads ``../shared/data/tasks/terminal-bench-2``
and skips without it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from shared_data import TASKS

BENCH = Path(__file__).resolve().parents[2] / "bench" / "real_tasks.py"
INDEX = TASKS / "terminal-bench-2" / "INDEX.md"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("real_tasks_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_index_groups_are_the_ones_it_states(bench):
    if not INDEX.is_file():
        pytest.skip(f"the shared TB2 set is absent ({INDEX})")
    rows = bench.index_rows(INDEX)
    counts = {}
    for r in rows.values():
        counts[r["group"]] = counts.get(r["group"], 0) + 1
    # INDEX.md's summary: 17 fetch nothing, 22 Debian/PyPI, 16 Ubuntu's archive, 15 other hosts
    assert counts == {"nothing": 17, "debian-pypi": 22, "ubuntu": 16, "other": 15}
    why = bench.not_run_reason(rows["fix-code-vulnerability"])
    assert why.startswith("not run (") and "github.com/bottlepy/bottle" in why
    assert bench.not_run_reason(rows["build-pov-ray"]) == (
        "not run (INDEX: offline build no (Ubuntu archive))"
    )


def test_no_task_is_a_silent_zero(bench):
    rows = [
        {"id": "a", "group": "nothing", "oracle": 1.0, "nop": 0.0, "right": True},
        {"id": "b", "group": "nothing", "not_run": "not run (INDEX: offline build yes)"},
        {"id": "c", "group": "other", "build_error": "curl: (6) Could not resolve host: x.org"},
        {"id": "d", "group": "debian-pypi", "oracle": 0.0, "nop": 0.0, "right": False},
        {"id": "e", "group": "debian-pypi", "oracle": 1.0, "nop": 1.0, "right": False},
        {"id": "f", "group": "debian-pypi", "oracle": None, "nop": None, "right": False},
        {"id": "g", "group": "debian-pypi", "oracle": 0.0, "nop": 0.0, "right": False},
    ]
    rows[5]["errors"] = {"oracle": "sandbox did not start"}
    rows[6]["unservable"] = [{"what": "pip torch==9", "why": "No matching distribution"}]
    doc = bench.report(rows, {}, {})
    assert doc["tasks"] == 7 and doc["right"] == 1
    assert sum(doc["causes"].values()) == 7
    assert {k: n for k, n in doc["causes"].items() if n} == {
        "right": 1, "not run": 1, "build fails offline": 1, "oracle 0": 1, "no-op 1": 1,
        "sandbox fault": 1, "cannot be served": 1,
    }  # fmt: skip
    nothing = doc["groups"]["nothing"]
    assert [nothing[k] for k in ("tasks", "right", "built", "not_run")] == [2, 1, 1, 1]
    listed = {t: why for g in doc["groups"].values() for t, why in g["not_right"].items()}
    assert set(listed) == {"b", "c", "d", "e", "f", "g"}  # every task not right says why
    assert all(why and why != "?" for why in listed.values()), listed
    assert listed["b"].startswith("not run") and "Could not resolve host" in listed["c"]
    assert listed["g"].startswith("solution/tests install what cannot be served: pip torch==9")


def test_a_solution_killed_by_its_timeout_is_said_so(bench, backend, tmp_path):
    """An oracle that never ends is not a plain 0: ``tasks check`` and the bench say it was
    killed by the task's timeout, and after how long."""
    import shutil

    from agentpost.tasks.check import check_task
    from agentpost.tasks.loader import load_task

    src = TASKS / "harbor-examples" / "hello-world"
    if not src.is_dir():
        pytest.skip(f"the shared Harbor examples are absent ({src})")
    task = tmp_path / "slow-oracle"
    shutil.copytree(src, task)
    toml = (task / "task.toml").read_text()
    (task / "task.toml").write_text(
        toml.replace("[agent]\ntimeout_sec = 120.0", "[agent]\ntimeout_sec = 2.0")
    )
    (task / "solution" / "solve.sh").write_text("sleep 30\necho 'Hello, world!' > hello.txt\n")
    row = check_task(load_task(task), backend)
    assert (row["oracle_reward"], row["nop_reward"]) == (0.0, 0.0), row
    assert row["oracle_killed"].startswith("timeout after "), row
    assert row["errors"]["oracle"].endswith(
        f"its solution was killed by the {row['oracle_killed']}"
    )
    bench_row = {"id": "slow-oracle", "group": "harbor", "oracle": 0.0, "nop": 0.0}
    bench_row["oracle_killed"] = row["oracle_killed"]
    assert bench.cause(bench_row).startswith("oracle: its solution was killed by the timeout")
    assert bench.kind(bench_row) == "oracle killed"
