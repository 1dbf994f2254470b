"""pandera checks of the question table (DESIGN.md §3.1), pyarrow backend.

``validate_questions`` returns the failures as (row id, column, check) records so that the
CLI and the stages can print exactly what is wrong; ``check_questions`` raises on any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import narwhals.stable.v1 as nw
import numpy as np
import pandera.pyarrow as ppa
import pyarrow as pa
import pyarrow.compute as pc
from pandera.errors import SchemaError, SchemaErrors

from oracleproto.arrays import iso_dates
from oracleproto.errors import OracleProtoError
from oracleproto.schema import CHOICE_TYPES, QUESTION_SCHEMA, QUESTION_TYPES

_ANSWER = r"^[^\s,](, [^\s,])*$"


class QuestionModel(ppa.DataFrameModel):
    """The seven-column question table."""

    id: pa.string() = ppa.Field(unique=True, str_length={"min_value": 1})
    choice_type: pa.string() = ppa.Field(isin=list(CHOICE_TYPES))
    question_type: pa.string() = ppa.Field(isin=list(QUESTION_TYPES))
    event: pa.string() = ppa.Field(str_length={"min_value": 1})
    options: pa.list_(pa.string())
    answer: pa.string() = ppa.Field(str_matches=_ANSWER)
    end_time: pa.date32()

    @ppa.check("options", name="at_least_two_options")
    def at_least_two_options(cls, data) -> pa.Array:
        return pc.greater_equal(pc.list_value_length(data.table[data.key]), 2)

    @ppa.dataframe_check(native=False, name="choice_type_matches_answer")
    def choice_type_matches_answer(cls, frame):
        return (nw.col("choice_type") == "single") == ~nw.col("answer").str.contains(",")

    @ppa.dataframe_check(native=False, name="yes_no_has_yes_no_options")
    def yes_no_options(cls, frame):
        n = nw.col("options").list.len()
        return (nw.col("question_type") != "yes_no") | (n == 2)

    @ppa.dataframe_check(native=False, name="binary_named_has_two_options")
    def binary_named_options(cls, frame):
        n = nw.col("options").list.len()
        return (nw.col("question_type") != "binary_named") | (n == 2)

    @ppa.dataframe_check(native=False, name="multiple_choice_has_three_or_more")
    def multiple_choice_options(cls, frame):
        n = nw.col("options").list.len()
        return (nw.col("question_type") != "multiple_choice") | (n >= 3)

    class Config:
        strict = True


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


def _letter_range_failures(table: pa.Table) -> list[Failure]:
    """Letters beyond the options — a per-row list check pandera has no built-in for."""
    from oracleproto.corpus.audit import letters_out_of_range

    answer = table.column("answer").combine_chunks()
    out_of_range = letters_out_of_range(answer, table.column("options").combine_chunks())
    bad = np.flatnonzero(out_of_range & answer.is_valid().to_numpy(zero_copy_only=False))  # a null is reported once, as such
    ids = table.column("id").take(pa.array(bad)).to_pylist()
    answers = answer.take(pa.array(bad)).to_pylist()
    return [Failure(int(row), qid, "answer", "answer_letters_within_options", a) for row, qid, a in zip(bad, ids, answers)]


def _dates_from_text(table: pa.Table) -> tuple[pa.Table, list[Failure]]:
    """A text ``end_time`` (JSON lines, CSV) as dates; text that names no calendar day
    (``2025-02-30``, ``next Tuesday``) is a failure showing the value, and null after."""
    text = table.column("end_time").combine_chunks()
    dates = iso_dates(text)
    rows = np.flatnonzero(pc.and_(text.is_valid(), dates.is_null()).to_numpy(zero_copy_only=False))
    ids = table.column("id").to_pylist()
    failures = [Failure(int(row), ids[row], "end_time", "iso_calendar_date", text[int(row)].as_py()) for row in rows]
    return table.set_column(table.column_names.index("end_time"), "end_time", dates), failures


def _null_failures(table: pa.Table, ids: list, reported: set[tuple[int | None, str | None]]) -> list[Failure]:
    """Empty cells of the seven columns, row by row (pandera names only the column)."""
    failures: list[Failure] = []
    for name in QUESTION_SCHEMA.names:
        column = table.column(name)
        if column.null_count:
            rows = np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))
            failures.extend(Failure(int(r), ids[r], name, "not_nullable", None) for r in rows if (r, name) not in reported)
    return failures


def _records(cases) -> list[dict]:
    """pandera's failure cases as dicts, whatever frame type the backend returned."""
    if isinstance(cases, pa.Table):
        return cases.to_pylist()
    return nw.from_native(cases, eager_only=True).to_arrow().to_pylist()


def _locate(records: list[dict], table: pa.Table, ids: list) -> list[Failure]:
    """Name the rows behind pandera's failure cases (its pyarrow backend leaves ``index``
    empty): a dataframe check reports the row as JSON (its id tells the row); a column
    check reports the value, which we look up in that column."""
    row_of = {qid: row for row, qid in reversed(list(enumerate(ids)))}
    failures: list[Failure] = []
    for rec in records:
        column, check, value = rec.get("column"), str(rec.get("check")), rec.get("failure_case")
        if check == "not_nullable":
            continue  # _null_failures names these rows
        if column == QuestionModel.__name__:
            try:
                qid = json.loads(value).get("id")
            except (TypeError, ValueError, AttributeError):
                qid = None
            failures.append(Failure(row_of.get(qid), qid, None, check, None))
            continue
        if column in table.column_names and value is not None:
            values = [None if v is None else str(v) for v in table.column(column).to_pylist()]
            rows = [row for row, v in enumerate(values) if v == str(value)]
            if column == "id" and check == "field_uniqueness":
                rows = rows[1:]  # the first holder of an id is not the duplicate
            for row in rows or [None]:
                failures.append(Failure(row, ids[row] if row is not None else None, column, check, str(value)))
        else:
            failures.append(Failure(None, None, column, check, None if value is None else str(value)))
    return failures


def validate_questions(table: pa.Table) -> list[Failure]:
    """All failures of ``table`` against the question contract (empty list = valid)."""
    missing = [name for name in QUESTION_SCHEMA.names if name not in table.column_names]
    if missing:
        return [Failure(None, None, name, "column_present", None) for name in missing]
    failures: list[Failure] = []
    end_type = table.schema.field("end_time").type
    if pa.types.is_string(end_type) or pa.types.is_large_string(end_type):
        table, failures = _dates_from_text(table)
    try:
        table = table.select(QUESTION_SCHEMA.names + [c for c in table.column_names if c not in QUESTION_SCHEMA.names])
        # Types are cast here; nulls are reported row by row below, not refused by the cast.
        types = [field.with_nullable(True) for field in QUESTION_SCHEMA]
        table = table.cast(pa.schema(types + [table.schema.field(c) for c in table.column_names[7:]]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        return [Failure(None, None, None, "column_types", str(exc))]
    ids = table.column("id").to_pylist()
    failures += _null_failures(table, ids, {(f.row, f.column) for f in failures})
    try:
        QuestionModel.validate(table, lazy=True)
    except (SchemaErrors, SchemaError) as exc:
        cases = getattr(exc, "failure_cases", None)
        if cases is None:
            failures.append(Failure(None, None, None, str(exc).splitlines()[0], None))
        else:
            failures.extend(_locate(_records(cases), table, ids))
    failures.extend(_letter_range_failures(table))
    return failures


class QuestionTableError(OracleProtoError, ValueError):
    def __init__(self, failures: list[Failure]) -> None:
        self.failures = failures
        lines = [str(f) for f in failures[:20]]
        more = f"\n… and {len(failures) - 20} more" if len(failures) > 20 else ""
        super().__init__(f"question table invalid ({len(failures)} failure(s)):\n" + "\n".join(lines) + more)


def check_questions(table: pa.Table) -> None:
    failures = validate_questions(table)
    if failures:
        raise QuestionTableError(failures)
