"""The evaluation's input check: a question table is read only if it keeps the question contract."""

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from oracleproto.config import EndTimeRange
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


@pytest.mark.parametrize("end_time", ["0000-01-01", "0001-01-01", "9999-12-31"])
def test_an_implausible_end_time_is_refused_before_any_prompt_computes_tau_minus_delta(end_time):
    day = pa.array(np.array([end_time, "2025-03-01"], dtype="datetime64[D]").astype(np.int32)).cast(pa.date32())
    with pytest.raises(InputError) as caught:
        question_records(_table(end_time=day), "q.parquet")
    assert f"row 0 (id 'b') column 'end_time': failed end_time_out_of_range value '{end_time}'" in str(caught.value)


def test_the_end_time_range_is_the_params_one():
    old = _table(end_time=pa.array([dt.date(1850, 1, 1)] * 2))
    with pytest.raises(InputError, match="end_time_out_of_range"):
        question_records(old, "q.parquet")
    assert len(question_records(old, "q.parquet", EndTimeRange(end_time_min=dt.date(1800, 1, 1)))) == 2


def test_the_report_quotes_a_few_rows_per_rule_however_many_fail():
    n = 1000
    table = pa.table({
        "id": [f"q{i}" for i in range(n)], "choice_type": ["single"] * n, "question_type": ["yes_no"] * n, "event": ["\u200b"] * n,
        "options": [["Yes", "No"]] * n, "answer": ["A"] * n, "end_time": pa.array([dt.date(2025, 3, 1)] * n),
    })  # fmt: skip
    with pytest.raises(InputError) as caught:
        question_records(table, "q.parquet")
    assert len(str(caught.value).splitlines()) < 10 and f"… and {n - 5} more" in str(caught.value)
