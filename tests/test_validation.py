import datetime as dt

import pyarrow as pa

from oracleproto.validation import validate_questions


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
