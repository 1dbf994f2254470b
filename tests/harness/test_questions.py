"""The evaluation's input check: a question table is read only if it keeps the question contract."""

import datetime as dt

import pyarrow as pa
import pytest

from oracleproto.errors import InputError
from oracleproto.harness.questions import question_records


def _table(**overrides):
    base = {
        "id": ["b", "a"], "choice_type": ["multi", "single"], "question_type": ["multiple_choice", "yes_no"],
        "event": ["Which?", "Will it?"], "options": [["x", "y", "z"], ["Yes", "No"]], "answer": ["C", "B"],
        "end_time": pa.array([dt.date(2025, 3, 1)] * 2),
    }
    return pa.table({**base, **overrides})


def test_multi_answer_question_with_one_gold_letter_is_evaluated():
    records = question_records(_table(), "q.parquet")
    assert [(r.q_id, r.choice_type, r.answer) for r in records] == [("a", "single", "B"), ("b", "multi", "C")]


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"choice_type": ["single", "single"], "answer": ["A, C", "B"]}, "row 0 (id 'b') column 'choice_type': failed choice_type_mismatch"),
        ({"options": [[f"o{i}" for i in range(65)], ["Yes", "No"]]}, "row 0 (id 'b') column 'options': failed too_many_options"),
        ({"answer": ["D", "B"]}, "row 0 (id 'b') column 'answer': failed answer_out_of_range value 'D'"),
        ({"id": ["a", "a"]}, "row 1 (id 'a') column 'id': failed duplicate_id"),
    ],
)
def test_a_table_breaking_the_contract_is_refused_naming_row_and_rule(overrides, named):
    with pytest.raises(InputError, match="q.parquet: question table breaks the question contract") as caught:
        question_records(_table(**overrides), "q.parquet")
    assert named in str(caught.value)


def test_missing_columns_are_named():
    with pytest.raises(InputError, match=r"lacks column\(s\) \['answer'\]"):
        question_records(_table().drop(["answer"]), "q.parquet")
