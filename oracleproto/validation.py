"""A question table checked against the question contract (DESIGN.md §3.1).

The table's shape — the seven columns, their types, no empty cell — is checked here; every
rule on the values is a rule of :mod:`oracleproto.contract`, under its name.
``validate_questions`` returns the failures as (row, id, column, rule, value) records so that
the CLI and the stages can print exactly what is wrong; ``check_questions`` raises on any.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import iso_dates
from oracleproto.contract import RULE_BY_NAME, RULES, table_failures
from oracleproto.errors import InputError
from oracleproto.schema import QUESTION_SCHEMA

# Shape checks (the value rules are the contract's)
COLUMN_PRESENT = "column_present"
COLUMN_IN_SCHEMA = "column_in_schema"
COLUMN_TYPES = "column_types"
NOT_NULLABLE = "not_nullable"
BAD_END_TIME = RULE_BY_NAME["bad_end_time"]


@dataclass(frozen=True)
class Failure:
    row: int | None
    id: str | None
    column: str | None
    check: str
    value: str | None

    def __str__(self) -> str:
        where = f"row {self.row} (id {self.id!r})" if self.row is not None else "table"
        column = f" column {self.column!r}" if self.column else ""
        value = f" value {self.value!r}" if self.value is not None else ""
        return f"{where}{column}: failed {self.check}{value}"


def _cell_text(value: Any) -> str | None:
    """A cell as the report shows it: text as is, a label list as JSON, a date in ISO form."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dt.date):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False)


def _ids(table: pa.Table, rows: np.ndarray) -> list[str | None]:
    return table.column("id").take(pa.array(rows, pa.int64())).to_pylist()


def _dates_from_text(table: pa.Table) -> tuple[pa.Table, list[Failure]]:
    """A text ``end_time`` (JSON lines, CSV) as dates; text that names no calendar day
    (``2025-02-30``, ``next Tuesday``) fails the contract's date rule, showing the value,
    and is null after."""
    text = table.column("end_time").combine_chunks()
    dates = iso_dates(text)
    rows = np.flatnonzero(pc.and_(text.is_valid(), dates.is_null()).to_numpy(zero_copy_only=False))
    values = text.take(pa.array(rows, pa.int64())).to_pylist()
    failures = [Failure(int(row), qid, BAD_END_TIME.field, BAD_END_TIME.name, value) for row, qid, value in zip(rows, _ids(table, rows), values)]
    return table.set_column(table.column_names.index("end_time"), "end_time", dates), failures


def _null_failures(table: pa.Table, reported: set[tuple[int | None, str | None]]) -> list[Failure]:
    """Empty cells of the seven columns, row by row."""
    failures: list[Failure] = []
    for name in QUESTION_SCHEMA.names:
        column = table.column(name)
        if column.null_count:
            rows = np.array([r for r in np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False)) if (r, name) not in reported], np.int64)
            failures.extend(Failure(int(r), qid, name, NOT_NULLABLE, None) for r, qid in zip(rows, _ids(table, rows)))
    return failures


def _rule_failures(table: pa.Table) -> list[Failure]:
    """Every contract rule over the table, judged where the cells it reads are present."""
    failures: list[Failure] = []
    failing = table_failures(table, present_only=True)
    for rule in RULES:
        rows = np.flatnonzero(failing[rule.name])
        values = table.column(rule.field).take(pa.array(rows, pa.int64())).to_pylist()
        failures.extend(Failure(int(row), qid, rule.field, rule.name, _cell_text(value)) for row, qid, value in zip(rows, _ids(table, rows), values))
    return failures


def validate_questions(table: pa.Table) -> list[Failure]:
    """All failures of ``table`` against the question contract (empty list = valid)."""
    missing = [name for name in QUESTION_SCHEMA.names if name not in table.column_names]
    if missing:
        return [Failure(None, None, name, COLUMN_PRESENT, None) for name in missing]
    failures = [Failure(None, None, name, COLUMN_IN_SCHEMA, None) for name in table.column_names if name not in QUESTION_SCHEMA.names]
    table = table.select(QUESTION_SCHEMA.names)
    end_type = table.schema.field("end_time").type
    if pa.types.is_string(end_type) or pa.types.is_large_string(end_type):
        table, date_failures = _dates_from_text(table)
        failures += date_failures
    try:
        # Types are cast here; nulls are reported row by row below, not refused by the cast.
        table = table.cast(pa.schema([field.with_nullable(True) for field in QUESTION_SCHEMA]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        return failures + [Failure(None, None, None, COLUMN_TYPES, str(exc))]
    failures += _null_failures(table, {(f.row, f.column) for f in failures})
    return failures + _rule_failures(table)




def check_questions(table: pa.Table) -> None:
    failures = validate_questions(table)
    if failures:
        raise InputError(failures)
