"""The Ray executor on a real local Ray cluster gives the same results as the local executor:
task checks (bwrap, and docker where a daemon answers) and snapshot replays in fresh sandboxes.

Ray is the ``ray`` extra; CI installs it (scripts/setup.sh --ray), so these tests run there.
"""

from __future__ import annotations

import functools
import sys

import pytest

from agentpost.sandbox.executors import JobFailure, LocalExecutor
from agentpost.tasks.check import check_suite
from agentpost.tasks.loader import bundled_suite_path, load_task

ray = pytest.importorskip("ray", reason="ray is an optional extra (scripts/setup.sh --ray)")
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def ray_executor():
    import ray.cloudpickle

    from agentpost.sandbox.ray_executor import RayExecutor

    # Ray workers cannot import this test module by name: ship its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return RayExecutor(max_workers=2)


def _rows(result: dict) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "errors"} for r in result["tasks"]]


def test_task_checks_on_ray_match_local(backend, ray_executor):
    tasks = [load_task(bundled_suite_path() / n) for n in ("c-primes", "csv-to-json")]
    local = check_suite(tasks, backend, workers=2)
    on_ray = check_suite(tasks, backend, workers=2, executor="ray")
    assert _rows(on_ray) == _rows(local) and on_ray["ok"] and local["ok"]
    assert on_ray["producer"]["args"]["executor"] == "ray"


def test_docker_task_checks_on_ray_match_local(ray_executor, shared_data):
    from agentpost.sandbox.docker import DockerBackend

    docker = DockerBackend()
    if not docker.available():
        pytest.skip("no docker daemon answers (bash scripts/dockerd.sh start)")
    harbor = shared_data / "tasks" / "harbor-examples"
    tasks = [load_task(harbor / "hello-user"), load_task(harbor / "hello-multi-step-simple")]
    local = check_suite(tasks, docker, workers=2)
    on_ray = check_suite(tasks, docker, workers=2, executor="ray")
    assert _rows(on_ray) == _rows(local) and on_ray["ok"]


def _replay(snapshot, backend, command: str) -> str:
    """A replay job: restore a recorded state into a fresh sandbox and run one command."""
    with backend.restore(snapshot) as box:
        return box.exec(command).stdout


def test_snapshot_replays_on_ray_match_local(backend, ray_executor, tmp_path):
    snaps = []
    for i in range(3):
        with backend.create() as box:
            box.exec(f"echo state-{i} > /app/f; mkdir -p /app/d && echo {i} > /app/d/n")
            snaps.append(box.snapshot(str(tmp_path / f"s{i}.tar")))
    job = functools.partial(_replay, backend=backend, command="cat /app/f /app/d/n")
    with LocalExecutor(max_workers=2) as local:
        expected = local.map(job, snaps)
    assert expected == [f"state-{i}\n{i}\n" for i in range(3)]
    assert ray_executor.map(job, snaps) == expected
    gone = ray_executor.map(job, [type(snaps[0])(str(tmp_path / "missing.tar"), snaps[0].spec)])
    assert isinstance(gone[0], JobFailure) and gone[0].error_type == "FileNotFoundError"
