"""The answer grammar: option letters, the ", " separator, answer strings ↔ option indices.

Option i has letter ``chr(ord("A") + i)`` (A..Z, then "[", "\\", "]", ... as in the paper's
released data, which has questions with more than 26 options). An answer string names one or
more options by their letters; its canonical form lists each letter once, in option order,
joined by ", " (``"A"``, ``"A, C"``).

Reading is strict: an answer is single-character tokens separated by one comma or blank
(spaces around it allowed), with nothing else. ``"C,A"`` and ``"A  C"`` read with certainty;
``"AB"``, ``"A,,C"``, ``"A or B"`` and ``""`` do not, and are errors — never guessed. The
blanks are ``\\t \\n \\f \\r`` and space, the set both Python's and Arrow's regex engines use.

Scalar forms (one string) and vectorised forms (an Arrow column) sit side by side and read
and write the same grammar.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import list_from_flat

FIRST_LETTER = "A"
ANSWER_SEPARATOR = ", "
_FIRST_CODE_POINT = ord(FIRST_LETTER)

_BLANK = r"[\t\n\f\r ]"
_TOKEN = r"[^\t\n\f\r ,]"
_SEPARATORS = r"[,\t\n\f\r ]+"
ANSWER_GRAMMAR = rf"{_BLANK}*{_TOKEN}{_BLANK}*(?:[,\t\n\f\r ]{_BLANK}*{_TOKEN}{_BLANK}*)*"
CANONICAL_SHAPE = rf"{_TOKEN}(?:{re.escape(ANSWER_SEPARATOR)}{_TOKEN})*"  # and letters ascending
BLANKS = "\t\n\f\r "
_ANSWER = re.compile(ANSWER_GRAMMAR)
_SPLIT = re.compile(_SEPARATORS)


class AnswerFormatError(ValueError):
    """A string that does not read as option letters with certainty."""


# ---------------------------------------------------------------------------------------
# Scalar


def letter(index: int) -> str:
    """Letter of the option at 0-based ``index``."""
    if index < 0:
        raise ValueError(f"option index must be >= 0, got {index}")
    return chr(_FIRST_CODE_POINT + index)


def letter_index(symbol: str) -> int:
    """0-based option index of ``symbol`` (inverse of :func:`letter`)."""
    if len(symbol) != 1:
        raise AnswerFormatError(f"a letter is one character, got {symbol!r}")
    index = ord(symbol) - _FIRST_CODE_POINT
    if index < 0:
        raise AnswerFormatError(f"{symbol!r} is not an option letter (letters start at {FIRST_LETTER!r})")
    return index


def letters(n_options: int) -> list[str]:
    """The letters of a question with ``n_options`` options, in option order."""
    return [letter(i) for i in range(n_options)]


def format_answer(indices: Iterable[int]) -> str:
    """Canonical answer string: distinct letters in option order joined by ", "."""
    return ANSWER_SEPARATOR.join(letter(i) for i in sorted(set(indices)))


def split_answer(answer: str) -> list[str]:
    """The letter tokens of an answer, as written; AnswerFormatError unless it follows the
    grammar ("A, C", "C,A" and "A C" do; "AB", "A,,C" and "" do not)."""
    if not _ANSWER.fullmatch(answer):
        raise AnswerFormatError(f"answer {answer!r} is not option letters such as 'A' or 'A, C'")
    return [token for token in _SPLIT.split(answer) if token]


def answer_indices(answer: str) -> list[int]:
    """Sorted distinct 0-based option indices of an answer string (strict, see module doc)."""
    return sorted({letter_index(token) for token in split_answer(answer)})


def is_canonical(answer: str) -> bool:
    """Whether ``answer`` is already in canonical form."""
    try:
        return format_answer(answer_indices(answer)) == answer
    except AnswerFormatError:
        return False


# ---------------------------------------------------------------------------------------
# Vectorised


@dataclass(frozen=True)
class ParsedAnswers:
    """A column of answer strings read by the grammar, row by row.

    ``indices``: the option index of every character that is not a blank or comma, as
    written (duplicates kept; negative for a character that sorts before "A") — in a
    well-formed row these are exactly its letters; ``well_formed``: the row follows the
    grammar; ``blank``: null, or blanks only."""

    indices: pa.ListArray
    well_formed: np.ndarray
    blank: np.ndarray


_ASCII_BLANK = np.zeros(128, dtype=bool)
_ASCII_BLANK[[ord(c) for c in BLANKS]] = True
_ASCII_SEPARATOR = _ASCII_BLANK.copy()
_ASCII_SEPARATOR[ord(",")] = True


def _utf8_characters(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(code point of every character of the non-null strings, the row it belongs to),
    decoded in place from the UTF-8 bytes: no strings are split or copied."""
    n = len(strings)
    if n == 0 or strings.buffers()[2] is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + n + 1].astype(np.int64)
    data = np.frombuffer(strings.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    if data.max(initial=0) < 0x80:  # all ASCII (the usual case): one byte per character
        points, rows = data.astype(np.int64), np.repeat(np.arange(n), np.diff(offsets))
    else:
        lead_at = np.flatnonzero((data & 0xC0) != 0x80)  # first byte of each character
        lead = data[lead_at].astype(np.int64)
        width = 1 + (lead >= 0xC0).astype(np.int64) + (lead >= 0xE0) + (lead >= 0xF0)
        points = np.where(width == 1, lead, lead & (0x7F >> width))
        for k in range(1, 4):
            more = width > k
            if more.any():
                points[more] = (points[more] << 6) | (data[lead_at[more] + k] & 0x3F)
        rows = np.searchsorted(offsets[1:] - offsets[0], lead_at, side="right")
    if strings.null_count:
        kept = np.asarray(strings.is_valid().to_numpy(zero_copy_only=False), dtype=bool)[rows]
        points, rows = points[kept], rows[kept]
    return points, rows


def _in_ascii_set(points: np.ndarray, table: np.ndarray) -> np.ndarray:
    return (points < 128) & table[np.minimum(points, 127)]


def letter_indices(code_points: np.ndarray) -> np.ndarray:
    """:func:`letter_index` over code points (negative where a code point sorts before "A")."""
    return np.asarray(code_points, dtype=np.int64) - _FIRST_CODE_POINT


def parse_answers(answers: pa.Array | pa.ChunkedArray) -> ParsedAnswers:
    """:func:`split_answer` / :func:`letter_index` over a whole string column: the grammar
    decides which rows are well formed, and in those every character that is not a blank or
    comma is one letter."""
    if isinstance(answers, pa.ChunkedArray):
        answers = answers.combine_chunks()
    if answers.type != pa.string():  # large or view strings, an all-null column
        answers = answers.cast(pa.string())
    n = len(answers)
    points, rows = _utf8_characters(answers)
    letter = ~_in_ascii_set(points, _ASCII_SEPARATOR)
    not_blank = ~_in_ascii_set(points, _ASCII_BLANK)
    well_formed = pc.fill_null(pc.match_substring_regex(answers, f"^{ANSWER_GRAMMAR}$"), False)
    return ParsedAnswers(
        list_from_flat(pa.array(letter_indices(points[letter]), pa.int64()), rows[letter], n),
        np.asarray(well_formed.to_numpy(zero_copy_only=False), dtype=bool),
        np.bincount(rows[not_blank], minlength=n) == 0,
    )


def canonical_answers(answers: pa.Array | pa.ChunkedArray, parsed: ParsedAnswers) -> np.ndarray:
    """:func:`is_canonical` over a column already read by :func:`parse_answers`: the exact
    canonical shape, letters strictly ascending (no string is rebuilt to compare)."""
    indices = np.asarray(pc.list_flatten(parsed.indices).to_numpy(zero_copy_only=False), dtype=np.int64)
    rows = pc.list_parent_indices(parsed.indices).to_numpy()
    not_canonical = np.zeros(len(answers), dtype=bool)
    step_back = (rows[1:] == rows[:-1]) & (indices[1:] <= indices[:-1])
    not_canonical[rows[1:][step_back]] = True
    not_canonical[rows[indices < 0]] = True
    shaped = pc.fill_null(pc.match_substring_regex(answers, f"^{CANONICAL_SHAPE}$"), False)
    return np.asarray(shaped.to_numpy(zero_copy_only=False), dtype=bool) & ~not_canonical


def _utf8_widths(code_points: np.ndarray) -> np.ndarray:
    """Bytes of each code point in UTF-8."""
    return 1 + (code_points >= 0x80).astype(np.int64) + (code_points >= 0x800) + (code_points >= 0x10000)


def _write_utf8(data: np.ndarray, at: np.ndarray, code_points: np.ndarray, width: np.ndarray) -> None:
    """Write each code point's UTF-8 bytes into ``data`` from position ``at``."""
    lead = np.select([width == 1, width == 2, width == 3], [code_points, 0xC0 | code_points >> 6, 0xE0 | code_points >> 12], 0xF0 | code_points >> 18)
    data[at] = lead
    for k in range(1, 4):
        more = width > k
        if more.any():
            data[at[more] + k] = 0x80 | ((code_points[more] >> (6 * (width[more] - 1 - k))) & 0x3F)


def join_letters(indices: np.ndarray, rows: np.ndarray, n_rows: int) -> pa.Array:
    """Per row, the letters of ``indices`` in the order given joined by ", " ("" for a row
    without letters); ``rows[i]`` is the row of ``indices[i]``, ascending. Written straight
    into the string buffers as UTF-8: no per-letter strings, no list join."""
    code_points = np.maximum(np.asarray(indices, dtype=np.int64) + _FIRST_CODE_POINT, 0)
    ascii_only = code_points.max(initial=0) < 0x80  # the usual case: one byte per letter
    width = np.ones(len(code_points), dtype=np.int64) if ascii_only else _utf8_widths(code_points)
    separator = np.frombuffer(ANSWER_SEPARATOR.encode(), dtype=np.uint8)
    counts = np.bincount(rows, minlength=n_rows)
    first = np.cumsum(counts) - counts  # index of each row's first letter
    rank = np.arange(len(rows)) - first[rows]
    if ascii_only:
        row_bytes = (1 + len(separator)) * counts
        before = (1 + len(separator)) * rank  # bytes of the row's earlier letters with separators
    else:
        step = width + len(separator)
        row_bytes = np.bincount(rows, weights=step, minlength=n_rows).astype(np.int64)
        passed = np.cumsum(step) - step
        before = passed - passed[first[rows]]
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(row_bytes - len(separator) * (counts > 0), out=offsets[1:])
    at = offsets[:-1][rows] + before
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    if ascii_only:
        data[at] = code_points.astype(np.uint8)
    else:
        _write_utf8(data, at, code_points, width)
    separated = rank < counts[rows] - 1
    separator_at = (at + width)[separated] if not ascii_only else at[separated] + 1
    for k, byte in enumerate(separator):
        data[separator_at + k] = byte
    return pa.Array.from_buffers(pa.string(), n_rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _distinct_letters(indices: pa.ListArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct indices of each row in option order, their rows, rows holding a negative
    index)."""
    flat = np.asarray(pc.list_flatten(indices).to_numpy(zero_copy_only=False), dtype=np.int64)
    rows = pc.list_parent_indices(indices).to_numpy().astype(np.int64)
    no_letter = np.zeros(len(indices), dtype=bool)
    no_letter[rows[flat < 0]] = True
    keys = np.sort(rows << 21 | np.clip(flat, 0, (1 << 21) - 1))  # row-major, then option order
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    keys = keys[first]
    return keys & ((1 << 21) - 1), keys >> 21, no_letter


def count_letters(indices: pa.ListArray) -> np.ndarray:
    """Number of distinct letters per row (0 where a row holds a negative index)."""
    _, rows, no_letter = _distinct_letters(indices)
    counts = np.bincount(rows, minlength=len(indices))
    counts[no_letter] = 0
    return counts


def format_answers(indices: pa.ListArray) -> pa.Array:
    """:func:`format_answer` over a list column; null where a row holds a negative index
    (no letter)."""
    flat, rows, no_letter = _distinct_letters(indices)
    text = join_letters(flat, rows, len(indices))
    if no_letter.any():
        text = pc.if_else(pa.array(no_letter), pa.scalar(None, pa.string()), text)
    return text


def joined_letters(codes: np.ndarray, parents: np.ndarray, n_rows: int) -> pa.Array:
    """Per row, its letters joined by the answer separator ("A, C"; "" for none): ``codes``
    are the letters' code points, ``parents`` their rows (ascending) — the form the source
    adapters read them in from text."""
    return join_letters(letter_indices(codes), parents, n_rows)
