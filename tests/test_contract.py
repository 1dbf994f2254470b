"""The question contract: each rule fails on its own tiny case and nowhere else."""

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from oracleproto.arrays import blank
from oracleproto.config import EndTimeRange
from oracleproto.contract import (
    AUDITED_RULES,
    INVISIBLE_ONLY,
    MAX_ID_CHARS,
    MAX_OPTIONS,
    RULE_BY_NAME,
    RULES,
    QuestionColumns,
    failing_rows,
    invisible,
    rules_reading,
    table_failures,
)
from oracleproto.scoring.columns import QUESTION_RULES

VALID = {
    "id": "q", "choice_type": "single", "question_type": "multiple_choice", "event": "Which?",
    "options": ["x", "y", "z"], "answer": "B", "end_time": dt.date(2025, 1, 1),
}


def _columns(*rows: dict) -> QuestionColumns:
    return QuestionColumns(pa.Table.from_pylist([{**VALID, **row} for row in rows]))


CASES = {
    "missing_id": {"id": " "},
    "id_too_long": {"id": "q" * (MAX_ID_CHARS + 1)},
    "invisible_id": {"id": "\u202e\u2066"},  # a bidi override and an isolate
    "empty_event": {"event": ""},
    "invisible_event": {"event": "\u200b\u200c\u200d\ufeff"},  # zero-width space, joiners, BOM
    "bad_end_time": {"end_time": None},
    "end_time_out_of_range": {"end_time": dt.date(1899, 12, 31)},
    "too_few_options": {"options": ["x"], "answer": "A"},
    "too_many_options": {"options": [f"o{i}" for i in range(MAX_OPTIONS + 1)]},
    "blank_option": {"options": ["x", "  ", "z"]},
    "invisible_option": {"options": ["x", "\x00\x00", "z"]},  # NUL bytes
    "duplicate_options": {"options": ["Paris", " paris", "Rome"]},
    "empty_answer": {"answer": " "},
    "answer_not_letters": {"answer": "B or C"},
    "answer_out_of_range": {"answer": "D"},
    "answer_not_canonical": {"answer": "C, B", "choice_type": "multi"},
    "question_type_mismatch": {"question_type": "binary_named"},
    "yes_no_labels_not_canonical": {"question_type": "yes_no", "options": ["yes", "NO"], "answer": "A"},
    "choice_type_mismatch": {"answer": "A, B"},
}


def test_every_rule_has_a_case():
    assert set(CASES) | {"duplicate_id"} == {rule.name for rule in RULES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_fails_only_its_own_case(name):
    failing = failing_rows(_columns(VALID, {"id": "other", **CASES[name]}))
    assert {rule: mask.tolist() for rule, mask in failing.items() if mask.any()} == {name: [False, True]}


def test_duplicate_ids_fail_after_their_first_holder():
    failing = failing_rows(_columns({"id": "a"}, {"id": "b"}, {"id": "a", "event": "Other?"}))
    assert failing["duplicate_id"].tolist() == [False, False, True]


@pytest.mark.parametrize(
    ("choice_type", "answer", "fails"),
    [("single", "B", False), ("multi", "B", False), ("multi", "A, C", False), ("single", "A, C", True), ("several", "B", True)],
)
def test_single_is_one_gold_letter_and_multi_one_or_more(choice_type, answer, fails):
    assert failing_rows(_columns({"choice_type": choice_type, "answer": answer}))["choice_type_mismatch"].tolist() == [fails]


def test_sixty_four_options_and_their_last_letter_are_in_range():
    columns = _columns({"options": [f"o{i}" for i in range(MAX_OPTIONS)], "answer": "\x80"})
    assert not any(mask.any() for mask in failing_rows(columns).values())


def test_question_types_follow_the_options():
    columns = _columns(
        {"question_type": "yes_no", "options": ["Yes", "No"], "answer": "A"},
        {"question_type": "binary_named", "options": ["Red", "Blue"], "answer": "A"},
        {"question_type": "binary_named", "options": ["Yes", "No"], "answer": "A"},
        {"question_type": "multiple_choice", "options": ["Red", "Blue"], "answer": "A"},
        {"question_type": "numeric"},
    )
    assert failing_rows(columns)["question_type_mismatch"].tolist() == [False, False, True, True, True]
    assert columns.implied_question_type.tolist() == [0, 1, 0, 1, 2]


def test_messages_word_the_failure_per_row():
    columns = _columns({"choice_type": "single", "answer": "A, C"}, {"question_type": "yes_no"})
    choice = next(rule for rule in RULES if rule.name == "choice_type_mismatch")
    question = next(rule for rule in RULES if rule.name == "question_type_mismatch")
    assert choice.messages(columns, [0]) == ["choice_type 'single' but the answer has 2 letter(s)"]
    assert question.messages(columns, [1]) == ["question_type 'yes_no' does not fit 3 option(s); expected 'multiple_choice'"]


def test_present_only_leaves_empty_cells_to_the_caller():
    columns = _columns({"answer": None}, {"options": None})
    assert failing_rows(columns)["empty_answer"].tolist() == [True, False]
    judged = failing_rows(columns, present_only=True)
    assert not judged["empty_answer"].any() and not judged["too_few_options"].any() and not judged["answer_out_of_range"].any()


def test_the_audit_quarantines_under_every_rule_but_the_stored_form():
    assert [rule.name for rule in RULES if rule not in AUDITED_RULES] == ["answer_not_canonical", "yes_no_labels_not_canonical", "duplicate_id"]


def test_a_trial_table_carries_the_option_and_answer_rules_only():
    names = {rule.name for rule in rules_reading(("question_type", "choice_type", "options", "answer"))}
    id_rules = {"missing_id", "id_too_long", "invisible_id", "duplicate_id"}
    assert names == {rule.name for rule in RULES} - id_rules - {"empty_event", "invisible_event", "bad_end_time", "end_time_out_of_range"}


def test_filled_choice_type_keeps_what_the_source_states():
    columns = QuestionColumns(pa.table({"choice_type": pa.array([None, None, "multi"], pa.string()), "answer": ["A", "A, B", "A"], "options": [["x", "y"]] * 3}))
    assert columns.filled_choice_type().to_pylist() == ["single", "multi", "multi"]


def test_a_table_checked_in_chunks_gets_the_verdicts_of_one_pass():
    rows = [VALID, {"id": "b", **CASES["duplicate_options"]}, {"id": "q", "event": "Again?"}, {"id": "c", **CASES["choice_type_mismatch"]}]
    table = pa.Table.from_pylist([{**VALID, **row} for row in rows])
    whole = failing_rows(QuestionColumns(table))
    chunked = table_failures(table, chunk_rows=1)
    assert list(chunked) == list(whole)
    assert {name: mask.tolist() for name, mask in chunked.items()} == {name: mask.tolist() for name, mask in whole.items()}
    assert chunked["duplicate_id"].tolist() == [False, False, True, False]  # found across chunks


def test_an_id_of_max_id_chars_is_kept():
    failing = failing_rows(_columns({"id": "q" * MAX_ID_CHARS}, {"id": "é" * MAX_ID_CHARS}))
    assert not failing["id_too_long"].any()  # characters, not bytes


@pytest.mark.parametrize(
    "text",
    ["\u200b", "\x00", "\u202a\u202b\u202c\u202d\u202e", "\u2066\u2067\u2068\u2069", "\u200b \u00a0\u3000", "\x07\x1b", "\u3164"],
)
def test_text_made_only_of_invisible_characters_fails_in_every_field(text):
    failing = failing_rows(_columns({"id": text, "event": text, "options": ["x", text, "z"]}))
    assert [name for name in ("invisible_id", "invisible_event", "invisible_option") if failing[name].all()] == [
        "invisible_id", "invisible_event", "invisible_option"
    ]


@pytest.mark.parametrize("text", ["a\u200b", "\u200bYes", "Über\u00a0alles", "東京", "👍", "x\x00"])
def test_visible_text_with_invisible_characters_inside_passes(text):
    failing = failing_rows(_columns({"id": text, "event": text, "options": ["p", text, "z"]}))
    assert not any(failing[name].any() for name in ("invisible_id", "invisible_event", "invisible_option"))


def test_blank_text_is_its_own_rule_not_also_invisible():
    failing = failing_rows(_columns({"id": " ", "event": "\t", "options": ["x", "  ", "z"]}))
    assert not any(failing[name].any() for name in ("invisible_id", "invisible_event", "invisible_option"))


def _dates(*iso: str) -> pa.Array:
    """date32 of any year (Python dates stop at year 1)."""
    return pa.array(np.array(iso, dtype="datetime64[D]").astype(np.int32)).cast(pa.date32())


def test_end_time_bounds_are_inclusive_and_any_year_is_judged():
    ends = _dates("0000-01-01", "0001-01-01", "1899-12-31", "1900-01-01", "2100-12-31", "2101-01-01", "9999-12-31")
    columns = QuestionColumns(pa.table({"end_time": ends}))
    assert failing_rows(columns, [RULE_BY_NAME["end_time_out_of_range"]])["end_time_out_of_range"].tolist() == [
        True, True, True, False, False, True, True
    ]
    rule = RULE_BY_NAME["end_time_out_of_range"]
    assert rule.messages(columns, [0]) == ["end_time 0000-01-01 is outside the plausible range 1900-01-01 … 2100-12-31"]


def test_end_time_bounds_come_from_the_params():
    ends = _dates("1850-06-01", "2024-01-01")
    narrow = EndTimeRange(end_time_min=dt.date(1800, 1, 1), end_time_max=dt.date(2000, 1, 1))
    rule = RULE_BY_NAME["end_time_out_of_range"]
    assert failing_rows(QuestionColumns(pa.table({"end_time": ends}), narrow), [rule])[rule.name].tolist() == [False, True]
    assert table_failures(pa.table({"end_time": ends}), [rule], end_times=narrow, chunk_rows=1)[rule.name].tolist() == [False, True]


def test_cheap_bounds_come_before_the_rules_that_encode_text():
    names = [rule.name for rule in RULES]
    assert names.index("id_too_long") < names.index("invisible_id") < names.index("duplicate_id")


def test_the_audit_and_the_scorer_share_the_option_and_id_bounds():
    too_many = RULE_BY_NAME["too_many_options"]
    assert too_many in AUDITED_RULES and too_many in QUESTION_RULES
    assert {"id_too_long", "invisible_id", "invisible_event", "end_time_out_of_range"} <= {rule.name for rule in AUDITED_RULES}


def test_the_first_byte_shortcut_agrees_with_the_regex_on_slices_and_nulls():
    texts = ["x", "\u200b", None, "", " \u200b", "\u00e9", "\x00a", "\x7f", "\u3000", "A\u200b", "\ufeff\u202e", "\t"] * 3
    values = pa.array(texts)
    for start in range(0, 5):
        part = values.slice(start, 20)
        expected = np.asarray(pc.fill_null(pc.match_substring_regex(part, INVISIBLE_ONLY), False)) & ~blank(part)
        assert invisible(part).tolist() == expected.tolist()
    assert invisible(pa.chunked_array([values.slice(0, 3), values.slice(3)])).tolist() == invisible(values).tolist()
