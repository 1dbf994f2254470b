import numpy as np
import pyarrow as pa

from oracleproto.arrays import joined_letters, list_from_flat


def test_joined_letters_matches_a_python_join():
    rows = [["A"], [], ["B", "C"], ["A", "[", "\\"], []]
    codes = np.array([ord(c) for row in rows for c in row], dtype=np.uint8)
    parents = np.array([i for i, row in enumerate(rows) for _ in row], dtype=np.int64)
    joined = joined_letters(codes, parents, len(rows))
    joined.validate(full=True)
    assert joined.to_pylist() == [", ".join(row) for row in rows]


def test_joined_letters_of_no_rows():
    assert joined_letters(np.zeros(0, np.uint8), np.zeros(0, np.int64), 0).to_pylist() == []


def test_list_from_flat_keeps_empty_rows():
    lists = list_from_flat(pa.array(["x", "y", "z"]), np.array([0, 0, 2]), 4)
    assert lists.to_pylist() == [["x", "y"], [], ["z"], []]
