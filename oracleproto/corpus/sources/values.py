"""Records of Python values (JSON lines, SQLite rows, ForecastBench entries) → one Arrow table.

pyarrow infers one type per column and refuses a column whose rows disagree (a list in one
row, text in the next). Such a column is kept whole as text — text values as they are,
every other value as JSON — so the table loses nothing, and where the column is a field a
question is built from, each row whose value is not a kind that field takes gets a reason:
that row alone is quarantined, never the whole source.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

# Fields a question is built from, and the kinds of value each takes in a mixed column
# (the homogeneous case is decided per Arrow type by ``fields``, with the same outcome).
_NUMBER = (int, float)
FIELD_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    **{
        name: ((str, *_NUMBER), "text")
        for name in ("id", "choice_type", "question_type", "event", "answer", "end_time", "prompt", "ground_truth")
    },
    "options": ((str, list), "a list or JSON text"),
    "level": ((str, *_NUMBER), "an integer"),
}
_PYTHON_KINDS = {list: "a list", dict: "an object", bool: "a boolean", bytes: "bytes that are not UTF-8 text"}


def _kind_name(value: Any) -> str:
    return _PYTHON_KINDS.get(type(value), f"a {type(value).__name__}")


def _bytes_as_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _as_text(value: Any) -> tuple[str, bool]:
    """(text of ``value``, whether it is valid Unicode): text as it is, the rest as JSON;
    a lone surrogate (JSON allows ``"\\ud800"``, UTF-8 does not) is kept escaped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=_bytes_as_text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, default=_bytes_as_text), False
    return text, True


def column_from_values(name: str, values: Sequence[Any]) -> tuple[pa.Array, dict[int, str]]:
    """One Arrow column of ``values``, and the reasons of the rows it cannot serve as
    field ``name`` (only for a mixed column; see the module doc)."""
    try:
        return pa.array(values), {}
    except (pa.ArrowException, OverflowError, UnicodeEncodeError, RecursionError):
        pass  # the rows disagree (or a value does not fit Arrow): keep the column as text
    accepted, expected = FIELD_KINDS.get(name, ((object,), ""))
    texts: list[str | None] = []
    reasons: dict[int, str] = {}
    for row, value in enumerate(values):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            texts.append(None)  # JSON's NaN is missing, as in a float column
            continue
        text, valid = _as_text(value)
        texts.append(text)
        if not expected:
            continue
        if not valid:
            reasons[row] = f"{name} is not valid Unicode text"
        elif isinstance(value, bool) or not isinstance(value, accepted):
            reasons[row] = f"{name} is {_kind_name(value)}, not {expected}"
        elif isinstance(value, float) and math.isinf(value):
            reasons[row] = f"{name} is not a finite number"
    return pa.array(texts, pa.string()), reasons


def table_from_records(records: Sequence[dict[str, Any]]) -> tuple[pa.Table, dict[int, str]]:
    """The records as a table (columns in first-seen key order, absent keys null) and, per
    row, the first reason a field of that row cannot be used."""
    names = list(dict.fromkeys(key for record in records for key in record))
    columns: list[pa.Array] = []
    reasons: dict[int, str] = {}
    for name in names:
        column, column_reasons = column_from_values(name, [record.get(name) for record in records])
        columns.append(column)
        for row, reason in column_reasons.items():
            reasons.setdefault(row, reason)
    return pa.Table.from_arrays(columns, names=names), reasons


def reasons_array(reasons: dict[int, str], n: int) -> pa.Array | None:
    """Per-row reasons (row → text) as a string array, or None when there are none."""
    if not reasons:
        return None
    return pa.array([reasons.get(row) for row in range(n)], pa.string())
