import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.letters import (
    AnswerFormatError,
    answer_indices,
    canonical_answers,
    count_letters,
    format_answer,
    format_answers,
    is_canonical,
    join_letters,
    joined_letters,
    letter,
    letter_index,
    letters,
    parse_answers,
    split_answer,
)


def test_letters_past_z_follow_the_released_data():
    assert letters(3) == ["A", "B", "C"]
    assert [letter(i) for i in (25, 26, 27, 28, 32, 63)] == ["Z", "[", "\\", "]", "a", "\x80"]
    assert all(letter_index(letter(i)) == i for i in range(200))


def test_answers_are_canonical():
    assert format_answer([2, 0, 2]) == "A, C"
    assert split_answer("C,A  B") == ["C", "A", "B"]
    assert answer_indices(" C, A ") == [0, 2]
    assert is_canonical("A, C") and not is_canonical("C, A") and not is_canonical("A,C") and not is_canonical("AC")


@pytest.mark.parametrize("text", ["", " ", "AB", "A,,C", "A,", ",A", "A or B", "A;B"])
def test_what_does_not_read_with_certainty_is_an_error(text):
    with pytest.raises(AnswerFormatError):
        answer_indices(text)


def test_bad_letters_raise():
    with pytest.raises(ValueError):
        letter(-1)
    with pytest.raises(AnswerFormatError):
        letter_index("AB")
    with pytest.raises(AnswerFormatError):
        letter_index("!")  # sorts before "A"


def test_column_reading_names_rows_blank_malformed_and_indices():
    parsed = parse_answers(pa.array(["C, A", None, " ", "AB", "A, \x80", "!", ",", " é\t"]))
    assert parsed.indices.to_pylist() == [[2, 0], [], [], [0, 1], [0, 63], [-32], [], [168]]
    assert parsed.well_formed.tolist() == [True, False, False, False, True, True, False, True]
    assert parsed.blank.tolist() == [False, True, True, False, False, False, False, False]
    sliced = parse_answers(pa.array(["Z", None, "B, C", "D"]).slice(1, 2))
    assert sliced.indices.to_pylist() == [[], [1, 2]] and sliced.well_formed.tolist() == [False, True]
    assert parse_answers(pa.array(["A, C"], pa.large_string())).indices.to_pylist() == [[0, 2]]


def test_canonical_answers_are_recognised_by_column_as_one_by_one():
    texts = ["A, C", "C, A", "A,C", " A", "A, A", "\x80", "B, \x80", "AB", None, "!"]
    parsed = parse_answers(pa.array(texts))
    assert canonical_answers(pa.array(texts), parsed).tolist() == [t is not None and is_canonical(t) for t in texts]
    assert [t for t in texts if t is not None and is_canonical(t)] == ["A, C", "\x80", "B, \x80"]


def test_columns_are_written_canonically_in_utf8():
    indices = pa.array([[2, 0, 2], [], [63, 1], [2000], [-1, 0]], pa.list_(pa.int64()))
    assert format_answers(indices).to_pylist() == ["A, C", "", "B, \x80", chr(2065), None]
    assert count_letters(indices).tolist() == [2, 0, 2, 1, 0]


def test_joins_keep_the_order_given():
    assert join_letters(np.array([2, 0, 1]), np.array([0, 0, 2]), 3).to_pylist() == ["C, A", "", "B"]
    assert joined_letters(np.array([ord("B"), ord("A")], np.uint8), np.array([0, 0]), 1).to_pylist() == ["B, A"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="AB C,\t[é\x80!\u00a0", max_size=7), max_size=8))
def test_the_column_reader_agrees_with_the_scalar_reader(texts):
    parsed = parse_answers(pa.array(texts, pa.string()))
    assert canonical_answers(pa.array(texts, pa.string()), parsed).tolist() == [is_canonical(t) for t in texts]
    for text, indices, well_formed in zip(texts, parsed.indices.to_pylist(), parsed.well_formed):
        try:
            expected = answer_indices(text)
        except AnswerFormatError:
            assert not well_formed or min(indices) < 0
            continue
        assert well_formed and sorted(set(indices)) == expected
        assert format_answers(pa.array([indices], pa.list_(pa.int64()))).to_pylist() == [format_answer(expected)]
