"""Executors run real sandbox jobs concurrently, keep order and record failures by type."""

from __future__ import annotations

import sys
import threading
import time

import pytest
import sandbox_testkit
from sandbox_testkit import bwrap_backend

from agentpost.errors import InfraError
from agentpost.sandbox.executors import JobFailure, LocalExecutor, get_executor


def _sandbox_job(n: int) -> str:
    if n == 3:
        raise InfraError("sandbox vanished")
    if n == 5:
        raise ValueError("bad item 5")
    with bwrap_backend().create() as box:
        return box.exec(f"sleep 0.2; echo job-{n}").stdout.strip()


def test_local_executor_keeps_order_and_types_failures():
    bwrap_backend()
    done: list[int] = []
    with LocalExecutor(max_workers=2) as ex:
        results = ex.map(_sandbox_job, range(7), on_done=lambda i, _r: done.append(i))
    assert [r for i, r in enumerate(results) if i not in (3, 5)] == [
        f"job-{i}" for i in (0, 1, 2, 4, 6)
    ]
    assert isinstance(results[3], JobFailure) and results[3].infra
    assert results[3].error_type == "InfraError" and results[3].index == 3
    assert results[5] == JobFailure(5, "ValueError", "bad item 5", False, results[5].traceback)
    assert "bad item 5" in results[5].traceback
    assert sorted(done) == list(range(7))


def test_local_executor_respects_the_limit():
    running = 0
    peak = 0
    lock = threading.Lock()

    def job(_item: int) -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1

    with get_executor("local", max_workers=3) as ex:
        ex.map(job, range(12))
        assert ex.submit(lambda x: x * 2, 21).result() == 42
    assert peak == 3
    with pytest.raises(ValueError):
        LocalExecutor(max_workers=0)
    with pytest.raises(ValueError, match="unknown executor 'slurm'"):
        get_executor("slurm")
    with pytest.raises(ValueError, match="cannot load executor"):
        get_executor("no_such_mod:Executor")


def _square_or_fail(n: int) -> int:
    if n == 2:
        raise KeyError("two")
    return n * n


def test_ray_executor_same_contract():
    pytest.importorskip("ray", reason="ray is an optional extra (pip install agentpost[ray])")
    import ray.cloudpickle

    from agentpost.sandbox.ray_executor import RayExecutor

    # Ray workers cannot import this test module by name: ship its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.cloudpickle.register_pickle_by_value(sandbox_testkit)

    ex = RayExecutor(max_workers=2)
    seen: list[int] = []
    results = ex.map(_square_or_fail, range(5), on_done=lambda i, _r: seen.append(i))
    assert results[:2] == [0, 1] and results[3:] == [9, 16]
    assert isinstance(results[2], JobFailure) and results[2].error_type == "KeyError"
    assert sorted(seen) == list(range(5))
    assert ex.submit(_square_or_fail, 4).result() == 16
    real = ex.map(_sandbox_job, [0, 3])  # real sandboxes on Ray workers
    assert real[0] == "job-0" and isinstance(real[1], JobFailure) and real[1].infra
