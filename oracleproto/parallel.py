"""Ordered, bounded parallel map over a stream.

pyarrow's compute kernels release the GIL, so per-batch work (parsing prompts, auditing a
chunk) runs on both cores of a small machine when two batches are in flight. Results come
back in input order, and at most ``workers + 1`` inputs are held at once, so streaming
stays streaming.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import pyarrow as pa

In = TypeVar("In")
Out = TypeVar("Out")


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def ordered_map(fn: Callable[[In], Out], items: Iterable[In], workers: int | None = None) -> Iterator[Out]:
    """``map(fn, items)`` on a thread pool: same order, bounded look-ahead."""
    workers = workers or default_workers()
    if workers == 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque[Future[Out]] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


_DONE = object()


def prefetched(items: Iterable[In], depth: int = 2) -> Iterator[In]:
    """``items`` read ahead on a thread of their own (at most ``depth`` waiting), in order.

    For a source whose reading releases the GIL (parquet decoding, file reads): the next
    batches are read while the consumer works on this one. An exception raised by the
    reader is raised here, where its item would have come; closing this generator early
    stops the reader."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(entry: tuple[bool, object]) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for item in items:
                if not offer((True, item)):
                    return
            offer((True, _DONE))
        except BaseException as exc:  # handed to the consumer, raised there
            offer((False, exc))

    reader = threading.Thread(target=read, name="prefetch", daemon=True)
    reader.start()
    try:
        while True:
            ok, item = ready.get()
            if not ok:
                raise item  # type: ignore[misc]
            if item is _DONE:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        reader.join()


def take_rows(table: pa.Table, indices: pa.Array) -> pa.Table:
    """``table.take(indices)`` one column per task: gathering long string and list columns is
    the cost, and Arrow's take releases the GIL."""
    columns = list(ordered_map(lambda column: column.take(indices), table.columns))
    return pa.Table.from_arrays(columns, schema=table.schema)
