import datetime as dt
import time

import numpy as np
import pyarrow as pa
import pytest

from oracleproto.config import EndTimeRange
from oracleproto.errors import InputError
from oracleproto.validation import (
    EXAMPLES_PER_CHECK,
    check_failures,
    check_questions,
    failure_count,
    report_lines,
    validate_questions,
)


def _table(**overrides):
    base = {
        "id": ["a", "b"], "choice_type": ["single", "multi"], "question_type": ["yes_no", "multiple_choice"],
        "event": ["Will x?", "Which y?"], "options": [["Yes", "No"], ["p", "q", "r"]], "answer": ["A", "A, C"],
        "end_time": pa.array([dt.date(2024, 1, 1)] * 2),
    }
    return pa.table({**base, **overrides})


def test_valid_table_has_no_failures():
    assert validate_questions(_table()) == []


def test_failures_name_row_id_column_and_the_contract_rule():
    failures = validate_questions(_table(id=["a", "a"], answer=["A", "A, D"], choice_type=["single", "bogus"]))
    assert [str(f) for f in failures] == [
        "row 1 (id 'a') column 'answer': failed answer_out_of_range value 'A, D'",
        "row 1 (id 'a') column 'choice_type': failed choice_type_mismatch value 'bogus'",
        "row 1 (id 'a') column 'id': failed duplicate_id value 'a'",
    ]


def test_type_rules_and_stored_form():
    failures = validate_questions(_table(question_type=["yes_no", "binary_named"], options=[["yes", "no"], ["p", "q", "r"]], answer=["A", "C, A"]))
    assert {(f.row, f.check) for f in failures} == {
        (0, "yes_no_labels_not_canonical"), (1, "question_type_mismatch"), (1, "answer_not_canonical")
    }


def test_multi_answer_question_with_one_gold_letter_is_valid():
    assert validate_questions(_table(answer=["A", "B"])) == []
    failures = validate_questions(_table(choice_type=["single", "single"]))
    assert [(f.row, f.check, f.value) for f in failures] == [(1, "choice_type_mismatch", "single")]


def test_missing_and_extra_columns():
    assert [f.check for f in validate_questions(_table().drop(["answer"]))] == ["column_present"]
    assert [(f.column, f.check) for f in validate_questions(_table().append_column("extra", pa.array([1, 2])))] == [("extra", "column_in_schema")]


def test_empty_cells_are_named_by_row_not_refused_by_the_cast():
    failures = validate_questions(_table(id=["a", None], answer=[None, "A, C"]))
    assert {(f.row, f.id, f.column, f.check) for f in failures} == {(1, None, "id", "not_nullable"), (0, "a", "answer", "not_nullable")}


def test_text_dates_must_name_a_calendar_day():
    failures = validate_questions(_table(end_time=["2024-02-29", "2025-02-30"]))
    assert [(f.row, f.id, f.column, f.check, f.value) for f in failures] == [(1, "b", "end_time", "bad_end_time", "2025-02-30")]
    assert validate_questions(_table(end_time=["2024-02-29", " 2025-02-28 "])) == []


def test_list_values_are_shown_as_json():
    failures = validate_questions(_table(options=[["Yes", "No"], ["p", "P ", "r"]]))
    assert [str(f) for f in failures] == ["row 1 (id 'b') column 'options': failed duplicate_options value '[\"p\", \"P \", \"r\"]'"]


def test_dates_of_any_year_are_judged_and_shown():
    failures = validate_questions(_table(end_time=["0000-01-01", "9999-12-31"]))
    assert [str(f) for f in failures] == [
        "row 0 (id 'a') column 'end_time': failed end_time_out_of_range value '0000-01-01'",
        "row 1 (id 'b') column 'end_time': failed end_time_out_of_range value '9999-12-31'",
    ]
    dates = pa.array(np.array(["0001-01-01", "2100-12-31"], dtype="datetime64[D]").astype(np.int32)).cast(pa.date32())
    assert [(f.row, f.check) for f in validate_questions(_table(end_time=dates))] == [(0, "end_time_out_of_range")]
    assert validate_questions(_table(end_time=["1900-01-01", "2100-12-31"])) == []


def test_the_end_time_range_is_the_one_given():
    table = _table(end_time=["1850-01-01", "2024-01-01"])
    assert [f.row for f in validate_questions(table)] == [0]
    assert validate_questions(table, EndTimeRange(end_time_min=dt.date(1800, 1, 1))) == []


def test_a_long_id_or_value_is_cut_in_the_report():
    failures = validate_questions(_table(id=["x" * 2_000_000, "b"]))
    [failure] = failures
    assert failure.check == "id_too_long" and len(failure.id) == 2_000_000
    text = str(failure)
    assert len(text) < 300 and "(2000000 characters)" in text


def test_the_report_groups_by_check_and_quotes_a_few_rows_of_each():
    n = 4000
    table = _table(
        id=[f"q{i}" for i in range(n)], choice_type=["bogus"] * n, question_type=["yes_no"] * n, event=["Will x?"] * n,
        options=[["Yes", "No"]] * n, answer=["A"] * n, end_time=["0000-01-01"] * n,
    )
    groups = check_failures(table)
    assert [(g.check, g.count, len(g.examples)) for g in groups] == [
        ("end_time_out_of_range", n, EXAMPLES_PER_CHECK), ("choice_type_mismatch", n, EXAMPLES_PER_CHECK)
    ]
    lines = report_lines(groups)
    assert len(lines) == 2 * (EXAMPLES_PER_CHECK + 2) and lines[-1] == f"  … and {n - EXAMPLES_PER_CHECK} more"
    assert failure_count(groups) == 2 * n


def test_the_report_is_linear_in_rows():
    n = 100_000
    table = _table(
        id=["same"] * n, choice_type=["single"] * n, question_type=["yes_no"] * n, event=["\u200b"] * n,
        options=[["Yes", "No"]] * n, answer=["A"] * n, end_time=pa.array([dt.date(2024, 1, 1)] * n),
    )
    started = time.perf_counter()
    groups = check_failures(table)
    assert time.perf_counter() - started < 10
    assert [(g.check, g.count) for g in groups] == [("invisible_event", n), ("duplicate_id", n - 1)]
    assert len(report_lines(groups)) == 2 * (EXAMPLES_PER_CHECK + 2)


def test_check_questions_raises_the_grouped_report():
    with pytest.raises(InputError) as caught:
        check_questions(_table(id=["\u202e", "\u202e\u2066"]))
    assert str(caught.value).splitlines() == [
        "2 failure(s) of the question contract:",
        "invisible_id (column 'id'): 2 failure(s)",
        r"  row 0 (id '\u202e') column 'id': failed invisible_id value '\u202e'",  # shown escaped: visible
        r"  row 1 (id '\u202e\u2066') column 'id': failed invisible_id value '\u202e\u2066'",
    ]
