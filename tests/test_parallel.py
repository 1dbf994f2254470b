"""Ordered parallel maps and read-ahead: order kept, errors where they happened, bounded."""

import threading
import time

import pyarrow as pa
import pytest

from oracleproto.parallel import ordered_map, prefetched, take_rows


def test_ordered_map_keeps_the_order_of_its_inputs():
    def slow_for_evens(i):
        time.sleep(0.01 if i % 2 == 0 else 0)
        return i * i

    assert list(ordered_map(slow_for_evens, range(12), workers=3)) == [i * i for i in range(12)]


def test_prefetched_yields_every_item_in_order():
    assert list(prefetched(iter(range(100)), depth=2)) == list(range(100))
    assert list(prefetched([], depth=1)) == []


def test_prefetched_reads_ahead_on_another_thread_and_no_further_than_its_depth():
    read_on, produced = [], []

    def source():
        for i in range(10):
            read_on.append(threading.current_thread().name)
            produced.append(i)
            yield i

    items = prefetched(source(), depth=2)
    assert next(items) == 0
    time.sleep(0.3)  # the reader fills the queue, then waits
    assert len(produced) <= 1 + 2 + 1  # the one handed out, the queue, the one waiting to go in
    assert set(read_on) == {"prefetch"}
    assert list(items) == list(range(1, 10))


def test_a_reader_error_is_raised_where_its_item_would_have_come():
    def source():
        yield 1
        yield 2
        raise ValueError("row 3 is unreadable")

    items = prefetched(source())
    assert next(items) == 1
    assert next(items) == 2
    with pytest.raises(ValueError, match="row 3 is unreadable"):
        next(items)


def test_closing_early_stops_the_reader():
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    items = prefetched(endless(), depth=1)
    assert next(items) == 0
    items.close()  # joins the reader
    count = len(produced)
    time.sleep(0.3)
    assert len(produced) == count
    assert not any(t.name == "prefetch" for t in threading.enumerate())


def test_take_rows_is_the_table_take():
    table = pa.table({"a": [1, 2, 3], "b": [["x"], [], ["y", "z"]]})
    indices = pa.array([2, 0])
    assert take_rows(table, indices).equals(table.take(indices))
