"""Red team, issue 26 part A: a task directory may not make the host read a file outside it.

A task directory comes from elsewhere (a benchmark checkout, a colleague's folder). The host
reads some of its files itself: the config, the instruction (sent to the model, kept in every
trajectory), the setup script and TB1's ``run-tests.sh`` (copied into the sandbox, where the
agent can read them), the solution and wrong-solution scripts (written into the sandbox by the
scripted policies). On main each was read through a symlink: ``instruction.md -> ~/.netrc`` put a
host file into the prompt, ``environment/agentpost-setup.sh -> /etc/shadow`` into the agent's
``/tmp``. Now the loader refuses such a task with one ``InputError`` naming the file, and the
readers read only by descent below the task directory (``ingress``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from host_canaries import HostCanaries

from agentpost.errors import InputError
from agentpost.tasks.loader import bundled_suite_path, load_task

TB1 = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "tb1-hello"
HARBOR = bundled_suite_path() / "csv-to-json"


def _link(task: Path, rel: str, target: Path) -> None:
    p = task / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.exists():
        p.unlink()
    os.symlink(target, p)


@pytest.mark.parametrize(
    "rel",
    ["instruction.md", "task.toml", "environment/agentpost-setup.sh", "solution/solve.sh",
     "solution/helper.py", "wrong/solve.sh"],
)  # fmt: skip
def test_a_link_in_a_harbor_task_reads_no_host_file(tmp_path, rel):
    canaries = HostCanaries(tmp_path / "host")
    task = tmp_path / "tasks" / "t"
    shutil.copytree(HARBOR, task)
    _link(task, rel, canaries.root / "canary.txt")
    with pytest.raises(InputError) as e:
        load_task(task)
    assert rel.split("/")[-1] in e.value.one_line() and "canary" not in e.value.one_line()
    assert canaries.untouched(), canaries.changes()


@pytest.mark.parametrize("rel", ["task.yaml", "run-tests.sh", "solution.sh"])
def test_a_link_in_a_terminal_bench_1_task_reads_no_host_file(tmp_path, rel):
    canaries = HostCanaries(tmp_path / "host")
    task = tmp_path / "tasks" / "t"
    shutil.copytree(TB1, task)
    _link(task, rel, canaries.root / "canary.txt")
    with pytest.raises(InputError) as e:
        load_task(task)
    assert rel in e.value.one_line()
    assert canaries.untouched(), canaries.changes()


def test_a_linked_solution_dir_reads_no_host_file(tmp_path):
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "solve.sh").write_text("cat /etc/hostname\n")  # a host dir with a script
    canaries = HostCanaries(tmp_path / "host")
    task = tmp_path / "tasks" / "t"
    shutil.copytree(HARBOR, task)
    shutil.rmtree(task / "solution")
    (task / "solution").symlink_to(canaries.root, target_is_directory=True)
    with pytest.raises(InputError):
        load_task(task)
    assert canaries.untouched(), canaries.changes()


def test_honest_tasks_still_load(tmp_path):
    for src in (HARBOR, TB1):
        task = tmp_path / src.name
        shutil.copytree(src, task)
        loaded = load_task(task)
        assert loaded.instruction.strip() and loaded.path == task.resolve()


def test_files_linked_after_loading_are_not_read_either(tmp_path):
    """The readers themselves go by descent: a link planted after the task was loaded is refused
    where the host reads the file (the setup script copied into the sandbox, the oracle's
    script written into it by the scripted policy)."""
    from agentpost.agent.policies import write_and_run
    from agentpost.sandbox.registry import get_backend
    from agentpost.tasks.evaluate import prepare, spec_for

    backend = get_backend("bwrap")
    if not backend.available():
        pytest.skip("bubblewrap unavailable")
    canaries = HostCanaries(tmp_path / "host")
    task_dir = tmp_path / "tasks" / "t"
    shutil.copytree(HARBOR, task_dir)
    task = load_task(task_dir)
    _link(task_dir, "environment/agentpost-setup.sh", canaries.root / "canary.txt")
    _link(task_dir, "solution/solve.sh", canaries.root / "passwd")
    with backend.create(spec_for(task)) as box, pytest.raises(InputError):
        prepare(task, box)
    with pytest.raises(InputError):
        write_and_run(task.solution_script, "s")
    assert canaries.untouched(), canaries.changes()
