"""Run many sandbox jobs concurrently, with a limit, without one failure sinking the batch.

``Executor.map(fn, items)`` returns one entry per item, in the items' order: ``fn(item)``'s
value, or a ``JobFailure`` naming the exception when ``fn`` raised. ``on_done(index, outcome)``
is called as each job finishes (in completion order), e.g. to write it to the result store so
a long run can be resumed. ``submit`` is the one-job form.

The local executor uses threads: each job spends its time waiting on sandbox subprocesses, so
the GIL is not the bottleneck and threads keep results in process (no pickling). The Ray
executor (``ray_executor.RayExecutor``) has the same interface for runs that outgrow a machine.

Layer: io.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from agentpost.errors import InfraError

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class JobFailure:
    """A job that raised instead of returning. ``infra`` marks errors worth retrying."""

    index: int
    error_type: str
    message: str
    infra: bool
    traceback: str = ""

    @classmethod
    def from_exception(cls, index: int, exc: BaseException) -> JobFailure:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(index, type(exc).__name__, str(exc), isinstance(exc, InfraError), tb)

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "error_type": self.error_type,
            "message": self.message,
            "infra": self.infra,
        }


OnDone = Callable[[int, Any], None]


class Executor(Protocol):
    name: str
    max_workers: int

    def map(
        self, fn: Callable[[T], R], items: Iterable[T], *, on_done: OnDone | None = None
    ) -> list[R | JobFailure]: ...

    def submit(self, fn: Callable[[T], R], item: T) -> Future: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Up to ``max_workers`` jobs at a time on threads of this process."""

    name = "local"

    def __init__(self, max_workers: int = 2):
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sandbox-job")

    def submit(self, fn: Callable[[T], R], item: T) -> Future:
        return self._pool.submit(fn, item)

    def map(
        self, fn: Callable[[T], R], items: Iterable[T], *, on_done: OnDone | None = None
    ) -> list[R | JobFailure]:
        futures = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        results: list[Any] = [None] * len(futures)
        for future in as_completed(futures):
            index = futures[future]
            exc = future.exception()
            outcome = JobFailure.from_exception(index, exc) if exc else future.result()
            results[index] = outcome
            if on_done is not None:
                on_done(index, outcome)
        return results

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


EXECUTORS = {
    "local": "agentpost.sandbox.executors:LocalExecutor",
    "ray": "agentpost.sandbox.ray_executor:RayExecutor",
}


def get_executor(name: str = "local", **kwargs) -> Executor:
    """An executor by name (``local`` or ``ray``), or a ``package.module:Class`` path."""
    from agentpost.components import load_named

    return load_named(EXECUTORS, name, "executor", **kwargs)
