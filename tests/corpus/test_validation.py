import datetime as dt

import pyarrow as pa

from oracleproto.corpus.validation import validate_questions


def _table(**overrides):
    base = {
        "id": ["a", "b"], "choice_type": ["single", "multi"], "question_type": ["yes_no", "multiple_choice"],
        "event": ["Will x?", "Which y?"], "options": [["Yes", "No"], ["p", "q", "r"]], "answer": ["A", "A, C"],
        "end_time": pa.array([dt.date(2024, 1, 1)] * 2),
    }
    return pa.table({**base, **overrides})


def test_valid_table_has_no_failures():
    assert validate_questions(_table()) == []


def test_failures_name_row_id_column_and_check():
    failures = validate_questions(_table(id=["a", "a"], answer=["A", "A, D"], choice_type=["single", "bogus"]))
    text = [str(f) for f in failures]
    assert "row 1 (id 'a') column 'id': failed field_uniqueness value 'a'" in text
    assert any("column 'choice_type': failed isin" in t and "row 1" in t for t in text)
    assert "row 1 (id 'a') column 'answer': failed answer_letters_within_options value 'A, D'" in text


def test_structural_rules():
    failures = validate_questions(_table(question_type=["yes_no", "binary_named"], choice_type=["multi", "multi"]))
    checks = {f.check for f in failures}
    assert {"binary_named_has_two_options", "choice_type_matches_answer"} <= checks


def test_missing_and_extra_columns():
    assert [f.check for f in validate_questions(_table().drop(["answer"]))] == ["column_present"]
    assert validate_questions(_table().append_column("extra", pa.array([1, 2])))  # strict schema


def test_empty_cells_are_named_by_row_not_refused_by_the_cast():
    failures = validate_questions(_table(id=["a", None], answer=[None, "A, C"]))
    assert {(f.row, f.id, f.column, f.check) for f in failures} == {(1, None, "id", "not_nullable"), (0, "a", "answer", "not_nullable")}


def test_text_dates_must_name_a_calendar_day():
    failures = validate_questions(_table(end_time=["2024-02-29", "2025-02-30"]))
    assert [(f.row, f.id, f.column, f.check, f.value) for f in failures] == [(1, "b", "end_time", "iso_calendar_date", "2025-02-30")]
    assert validate_questions(_table(end_time=["2024-02-29", " 2025-02-28 "])) == []
