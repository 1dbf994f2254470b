import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from oracleproto.arrays import (
    collapse_whitespace,
    iso_dates,
    list_from_flat,
)
from oracleproto.letters import joined_letters


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


def test_iso_dates_refuse_days_that_do_not_exist():
    texts = ["2025-02-30", "2023-02-29", "2025-04-31", "2025-13-01", "2025-00-10", "2025-1-3", "2025-01-3x", "", "soon", None]
    assert iso_dates(pa.array(texts, pa.string())).to_pylist() == [None] * len(texts)


def test_iso_dates_keep_real_days_and_ignore_what_follows():
    texts = ["2024-02-29", " 2025-12-31 ", "2026-03-04T10:00:00Z"]
    assert iso_dates(pa.array(texts)).to_pylist() == [dt.date(2024, 2, 29), dt.date(2025, 12, 31), dt.date(2026, 3, 4)]


@given(st.lists(st.tuples(st.integers(1900, 2100), st.integers(1, 12), st.integers(1, 31)), max_size=40))
def test_iso_dates_agree_with_the_calendar(triples):
    def calendar(y, m, d):
        try:
            return dt.date(y, m, d)
        except ValueError:
            return None

    texts = pa.array([f"{y:04d}-{m:02d}-{d:02d}" for y, m, d in triples], pa.string())
    assert iso_dates(texts).to_pylist() == [calendar(*t) for t in triples]


def _collapsed_by_python(text):
    """The reference: Arrow's trim, then runs of ASCII whitespace (RE2's \\s) as one space."""
    import re

    trimmed = pc.utf8_trim_whitespace(pa.array([text])).to_pylist()[0]
    return re.sub(r"[\t\n\f\r ]+", " ", trimmed) if re.search(r"[\t\n\f\r ]{2}|[\t\n\r\f\v]", trimmed) else trimmed


@given(st.lists(st.one_of(st.none(), st.text(alphabet=" \t\n\v\x1cab\u00a0\u3000é,", max_size=8)), max_size=12))
def test_collapse_whitespace_changes_exactly_what_trim_and_fold_change(texts):
    values = pa.array(texts, pa.string())
    got = collapse_whitespace(values)
    assert got.to_pylist() == [None if t is None else _collapsed_by_python(t) for t in texts]
    assert collapse_whitespace(values.slice(1)).to_pylist() == got.to_pylist()[1:]


def test_collapse_whitespace_leaves_clean_values_uncopied():
    values = pa.array(["Paris", "New York", "Rome"])
    assert collapse_whitespace(values) is values
    assert collapse_whitespace(pa.array([" Paris", "New  York", "a\tb", "ok"])).to_pylist() == ["Paris", "New York", "a b", "ok"]
