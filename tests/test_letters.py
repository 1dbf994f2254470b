import pytest

from oracleproto.letters import (
    answer_indices,
    format_answer,
    letter,
    letter_index,
    letters,
    split_answer,
)


def test_letters_past_z_follow_the_released_data():
    assert letters(3) == ["A", "B", "C"]
    assert [letter(i) for i in (25, 26, 27, 28, 32)] == ["Z", "[", "\\", "]", "a"]
    assert all(letter_index(letter(i)) == i for i in range(60))


def test_answers_are_canonical():
    assert format_answer([2, 0, 2]) == "A, C"
    assert split_answer("C,A  B") == ["C", "A", "B"]
    assert answer_indices("C, A") == [0, 2]


def test_bad_letters_raise():
    with pytest.raises(ValueError):
        letter(-1)
    with pytest.raises(ValueError):
        letter_index("AB")
