"""Import a folder's files in several processes, results in file order.

Layer: io. Spawned processes (not forked: the caller may hold threads or open sandboxes); each
runs ``run_chunk`` on a few units per task (``importing.import_chunk``: the GC paused, one
result per unit) and sends back trajectories (pickled models) or a skip reason or an error's
three fields (``InputError`` itself does not pickle). It knows nothing of importing itself, so
``importing`` calls it and not the other way round.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from multiprocessing import get_context
from typing import Any, TypeVar

Unit = TypeVar("Unit")


def parallel(
    units: list[Unit], run_chunk: Callable[[list[Unit]], list[Any]], workers: int, chunk: int = 8
) -> Iterator[Any]:
    """``run_chunk``'s results in unit order from ``workers`` spawned processes (``run_chunk``
    must pickle: a module-level function or a ``functools.partial`` of one; it returns one
    result per unit of its chunk). At most ``4 * workers`` chunks
    are in flight, so memory stays bounded however large the folder (results are not queued
    up faster than the caller consumes them). If a worker dies, the chunks it took and all
    later ones are imported in this process: the output stays the same, only slower."""
    chunks = (units[i : i + chunk] for i in range(0, len(units), chunk))
    pending: deque[tuple[list[Unit], Future | None]] = deque()
    broken = False
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:

        def push(part: list[Unit]) -> None:
            nonlocal broken
            future = None
            if not broken:
                try:
                    future = pool.submit(run_chunk, part)
                except BrokenProcessPool:
                    broken = True
            pending.append((part, future))

        for part in islice(chunks, 4 * workers):
            push(part)
        while pending:
            part, future = pending.popleft()
            results = None
            if future is not None:
                try:
                    results = future.result()
                except BrokenProcessPool:  # a worker died (OOM killer, a signal): infra fault
                    broken = True
            if results is None:  # so this chunk, and every later one, is imported here
                results = run_chunk(part)
            nxt = next(chunks, None)
            if nxt is not None:
                push(nxt)
            yield from results
