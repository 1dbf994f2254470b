"""Option letters: option i has letter chr(ord("A") + i) (A..Z, then "[", "\\", "]", ... as in
the paper's released data, which has questions with more than 26 options)."""

from __future__ import annotations

from collections.abc import Iterable

ANSWER_SEPARATOR = ", "


def letter(index: int) -> str:
    """Letter of the option at 0-based ``index``."""
    if index < 0:
        raise ValueError(f"option index must be >= 0, got {index}")
    return chr(ord("A") + index)


def letter_index(symbol: str) -> int:
    """0-based option index of ``symbol`` (inverse of :func:`letter`)."""
    if len(symbol) != 1:
        raise ValueError(f"a letter is one character, got {symbol!r}")
    return ord(symbol) - ord("A")


def letters(n_options: int) -> list[str]:
    """The letters of a question with ``n_options`` options, in option order."""
    return [letter(i) for i in range(n_options)]


def format_answer(indices: Iterable[int]) -> str:
    """Canonical answer string: distinct letters in option order joined by ", "."""
    return ANSWER_SEPARATOR.join(letter(i) for i in sorted(set(indices)))


def split_answer(answer: str) -> list[str]:
    """Letters of a canonical or loosely formatted answer ("A, C", "A,C", "C A")."""
    return [tok for tok in answer.replace(",", " ").split() if tok]


def answer_indices(answer: str) -> list[int]:
    """Sorted distinct 0-based indices of an answer string."""
    return sorted({letter_index(tok) for tok in split_answer(answer)})
