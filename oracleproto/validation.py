"""A question table checked against the question contract (DESIGN.md §3.1).

The table's shape — the seven columns, their types, no empty cell — is checked here; every
rule on the values is a rule of :mod:`oracleproto.contract`, under its name.
:func:`check_failures` groups the failures by check (shape check or contract rule) in rule
order: each group has its count and its first rows as (row, id, column, check, value)
records, so a report is linear in rows however many share one bad value.
:func:`validate_questions` lists every failure; :func:`check_questions` raises on any.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import iso_dates
from oracleproto.config import EndTimeRange
from oracleproto.contract import (
    RULE_BY_NAME,
    RULES,
    day_numbers,
    day_text,
    table_failures,
)
from oracleproto.errors import InputError, shown
from oracleproto.schema import QUESTION_SCHEMA

# Shape checks (the value rules are the contract's)
COLUMN_PRESENT = "column_present"
COLUMN_IN_SCHEMA = "column_in_schema"
COLUMN_TYPES = "column_types"
NOT_NULLABLE = "not_nullable"
BAD_END_TIME = RULE_BY_NAME["bad_end_time"]
EXAMPLES_PER_CHECK = 5  # rows quoted per failed check in a report


@dataclass(frozen=True)
class Failure:
    row: int | None
    id: str | None
    column: str | None
    check: str
    value: str | None

    def __str__(self) -> str:
        where = f"row {self.row} (id {shown(self.id) if self.id is not None else None})" if self.row is not None else "table"
        column = f" column {self.column!r}" if self.column else ""
        value = f" value {shown(self.value)}" if self.value is not None else ""
        return f"{where}{column}: failed {self.check}{value}"


@dataclass(frozen=True)
class CheckFailures:
    """The failures of one check: how many, and the first of them."""

    column: str | None
    check: str
    count: int
    examples: tuple[Failure, ...]

    def lines(self) -> list[str]:
        column = f" (column {self.column!r})" if self.column else ""
        more = [f"  … and {self.count - len(self.examples)} more"] if self.count > len(self.examples) else []
        return [f"{self.check}{column}: {self.count} failure(s)", *(f"  {failure}" for failure in self.examples), *more]


def report_lines(groups: Sequence[CheckFailures]) -> list[str]:
    return [line for group in groups for line in group.lines()]


def failure_count(groups: Sequence[CheckFailures]) -> int:
    return sum(group.count for group in groups)


def _cell_text(value: Any) -> str | None:
    """A cell as the report shows it: text as is, a label list as JSON, a date in ISO form."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False)


def _cells(table: pa.Table, name: str, rows: np.ndarray) -> list[str | None]:
    """The cells of column ``name`` at ``rows`` as text (dates of any year, year 0 included)."""
    cells = table.column(name).take(pa.array(rows, pa.int64()))
    if pa.types.is_date32(cells.type):
        return [text if valid else None for text, valid in zip(day_text(day_numbers(cells)), cells.is_valid().to_pylist())]
    return [_cell_text(value) for value in cells.to_pylist()]


def _table_level(column: str | None, check: str, value: str | None = None) -> CheckFailures:
    return CheckFailures(column, check, 1, (Failure(None, None, column, check, value),))


def _group(
    table: pa.Table, column: str, check: str, mask: np.ndarray, values: Callable[[np.ndarray], list[str | None]], limit: int | None
) -> list[CheckFailures]:
    """The rows of ``mask`` as one group (none if no row fails); only the first ``limit``
    rows (None: all) are looked up."""
    rows = np.flatnonzero(mask)
    if len(rows) == 0:
        return []
    quoted = rows if limit is None else rows[:limit]
    ids = table.column("id").take(pa.array(quoted, pa.int64())).to_pylist()
    failures = tuple(Failure(int(r), qid, column, check, v) for r, qid, v in zip(quoted, ids, values(quoted)))
    return [CheckFailures(column, check, len(rows), failures)]


def _bools(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)


def _dates_from_text(table: pa.Table, limit: int | None) -> tuple[pa.Table, np.ndarray, list[CheckFailures]]:
    """A text ``end_time`` (JSON lines, CSV) as dates; text that names no calendar day
    (``2025-02-30``, ``next Tuesday``) fails the contract's date rule, showing the value,
    and is null after. Returns (table, rows failed, their group)."""
    text = table.column("end_time").combine_chunks()
    dates = iso_dates(text)
    bad = _bools(pc.and_(text.is_valid(), dates.is_null()))
    group = _group(table, BAD_END_TIME.field, BAD_END_TIME.name, bad, lambda rows: text.take(pa.array(rows, pa.int64())).to_pylist(), limit)
    return table.set_column(table.column_names.index("end_time"), "end_time", dates), bad, group


def _shape_and_rules(table: pa.Table, end_times: EndTimeRange | None, limit: int | None) -> list[CheckFailures]:
    """Seven columns of the right types: date text, empty cells, then every contract rule
    (judged where the cells it reads are present)."""
    groups: list[CheckFailures] = []
    bad_dates = np.zeros(table.num_rows, dtype=bool)
    end_type = table.schema.field("end_time").type
    if pa.types.is_string(end_type) or pa.types.is_large_string(end_type):
        table, bad_dates, date_groups = _dates_from_text(table, limit)
        groups += date_groups
    try:
        # Types are cast here; nulls are reported row by row below, not refused by the cast.
        table = table.cast(pa.schema([field.with_nullable(True) for field in QUESTION_SCHEMA]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        return groups + [_table_level(None, COLUMN_TYPES, str(exc))]
    for name in QUESTION_SCHEMA.names:
        nulls = _bools(table.column(name).is_null())
        if name == "end_time":
            nulls &= ~bad_dates  # already reported, with the text
        groups += _group(table, name, NOT_NULLABLE, nulls, lambda rows: [None] * len(rows), limit)
    failing = table_failures(table, present_only=True, end_times=end_times)
    for rule in RULES:
        groups += _group(table, rule.field, rule.name, failing[rule.name], lambda rows, rule=rule: _cells(table, rule.field, rows), limit)
    return groups


def check_failures(table: pa.Table, end_times: EndTimeRange | None = None, examples: int | None = EXAMPLES_PER_CHECK) -> list[CheckFailures]:
    """The failures of ``table`` against the question contract, one group per failed check,
    quoting at most ``examples`` rows each (None: every row). ``end_times`` is the ``audit``
    params section's plausible end_time range (None: its defaults). Empty list = valid."""
    missing = [name for name in QUESTION_SCHEMA.names if name not in table.column_names]
    if missing:
        return [_table_level(name, COLUMN_PRESENT) for name in missing]
    extra = [_table_level(name, COLUMN_IN_SCHEMA) for name in table.column_names if name not in QUESTION_SCHEMA.names]
    return extra + _shape_and_rules(table.select(QUESTION_SCHEMA.names), end_times, examples)


def validate_questions(table: pa.Table, end_times: EndTimeRange | None = None) -> list[Failure]:
    """Every failure of ``table`` against the question contract (empty list = valid)."""
    return [failure for group in check_failures(table, end_times, examples=None) for failure in group.examples]


def check_questions(table: pa.Table, end_times: EndTimeRange | None = None) -> None:
    groups = check_failures(table, end_times)
    if groups:
        raise InputError("\n".join([f"{failure_count(groups)} failure(s) of the question contract:", *report_lines(groups)]))
