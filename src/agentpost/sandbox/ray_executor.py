"""The executor interface on Ray, for replays that outgrow one machine (``pip install agentpost[ray]``).

Same contract as ``LocalExecutor``: results in item order, a ``JobFailure`` per raising job,
``on_done`` in completion order, at most ``max_workers`` jobs in flight. ``fn`` and the items
travel to Ray workers by cloudpickle, so they must be picklable (module-level functions and
plain data; a sandbox object is not: create it inside ``fn``). Each worker machine needs
bubblewrap. Ray is imported when the executor is created, never at package import.

Layer: edges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from agentpost.errors import InfraError
from agentpost.sandbox.executors import JobFailure, OnDone


class RayExecutor:
    name = "ray"

    def __init__(self, max_workers: int = 2, address: str | None = None, num_cpus: float = 1):
        import ray

        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self._ray = ray
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                kwargs["num_cpus"] = max_workers
            ray.init(address=address, **kwargs)
        self._run = ray.remote(num_cpus=num_cpus, max_retries=0)(_call)

    def submit(self, fn: Callable, item: Any) -> Future:
        return self._run.remote(fn, item).future()

    def map(
        self, fn: Callable, items: Iterable[Any], *, on_done: OnDone | None = None
    ) -> list[Any]:
        ray = self._ray
        todo = list(enumerate(items))
        results: list[Any] = [None] * len(todo)
        fn_ref = ray.put(fn)
        in_flight: dict[Any, int] = {}
        while todo or in_flight:
            while todo and len(in_flight) < self.max_workers:
                index, item = todo.pop(0)
                in_flight[self._run.remote(fn_ref, item)] = index
            [ref], _ = ray.wait(list(in_flight), num_returns=1)
            index = in_flight.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as e:  # a Ray error wraps the job's own exception
                outcome = _failure(index, e)
            results[index] = outcome
            if on_done is not None:
                on_done(index, outcome)
        return results

    def close(self) -> None:
        """Leaves Ray running: it may be shared with other work in this process."""

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _call(fn: Callable, item: Any) -> Any:
    return fn(item)


def _failure(index: int, error: Exception) -> JobFailure:
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        return JobFailure.from_exception(index, cause)
    failure = JobFailure.from_exception(index, error)
    # the job never ran to an answer (worker died, node lost): an infrastructure failure
    infra = failure.infra or not isinstance(error, InfraError | ValueError | TypeError)
    return JobFailure(index, failure.error_type, failure.message, infra, failure.traceback)
