"""Letter sets as uint64 bit masks: bit i is the option with letter ``letter(i)``.

Every set operation the scorer needs (equality, intersection, difference, size, first
letter) becomes one numpy operation over a whole column. Answer strings are parsed once
per *distinct* string (dictionary encoding), never once per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.contract import MAX_OPTIONS
from oracleproto.letters import (
    AnswerFormatError,
    answer_indices,
    format_answer,
    parse_answers,
)

INVALID = np.uint64(0)  # the mask of an unparseable string (a real set is never empty)


def parse_letter_set(text: str) -> int | None:
    """Bit mask of an answer string ("A, C"; read by :mod:`oracleproto.letters`), None if it
    is not letters or names a letter beyond the first MAX_OPTIONS."""
    try:
        indices = answer_indices(text)
    except AnswerFormatError:
        return None
    if indices[-1] >= MAX_OPTIONS:
        return None
    return sum(1 << i for i in indices)


def format_letter_set(mask: int) -> str:
    """Canonical answer string of a mask."""
    return format_answer(i for i in range(MAX_OPTIONS) if mask >> i & 1)


def _masks_of_strings(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(mask, valid) of each string, parsed as one column by the answer grammar."""
    parsed = parse_answers(strings)
    indices = pc.list_flatten(parsed.indices).to_numpy()
    rows = pc.list_parent_indices(parsed.indices).to_numpy()
    in_range = (indices >= 0) & (indices < MAX_OPTIONS)
    valid = parsed.well_formed.copy()
    valid[rows[~in_range]] = False
    masks = np.zeros(len(strings), dtype=np.uint64)
    np.bitwise_or.at(masks, rows[in_range], np.left_shift(np.uint64(1), indices[in_range].astype(np.uint64)))
    masks[~valid] = INVALID
    return masks, valid


def _as_string_array(values: pa.Array | pa.ChunkedArray | Sequence[str | None] | np.ndarray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(list(values), type=pa.string())
    if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
        values = values.cast(pa.string())
    if pa.types.is_null(values.type):
        values = values.cast(pa.string())
    return values


def letter_set_codes(
    values: pa.Array | pa.ChunkedArray | Sequence[str | None] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Masks of a string column, plus a dense code per distinct set.

    Returns ``(masks, present, valid, set_code)``: ``present`` is False for nulls, ``valid``
    is False for present strings that are not letter sets; masks are 0 and set_code is -1
    wherever not valid; equal sets (however written) share one set_code.
    """
    array = _as_string_array(values)
    if len(array) == 0:
        empty = np.zeros(0, dtype=bool)
        return np.zeros(0, dtype=np.uint64), empty, empty, np.zeros(0, dtype=np.int64)
    encoded = pc.dictionary_encode(array)
    n_distinct = len(encoded.dictionary)
    masks, valid = _masks_of_strings(encoded.dictionary)
    # nulls take a sentinel slot appended at the end of the dictionary
    dict_valid = np.append(valid, False)
    dict_masks = np.append(masks, INVALID)
    _, dict_code = np.unique(dict_masks, return_inverse=True)
    dict_code = np.where(dict_valid, dict_code.ravel(), -1)
    codes = encoded.indices.fill_null(n_distinct).to_numpy(zero_copy_only=False).astype(np.int64)
    present = codes < n_distinct
    return dict_masks[codes], present, dict_valid[codes], dict_code[codes]


def letter_set_masks(values: pa.Array | pa.ChunkedArray | Sequence[str | None] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(masks, present, valid)`` of :func:`letter_set_codes`."""
    masks, present, valid, _ = letter_set_codes(values)
    return masks, present, valid


def set_size(masks: np.ndarray) -> np.ndarray:
    """Number of letters in each set."""
    return np.bitwise_count(masks).astype(np.int64)


def lowest_letter(masks: np.ndarray) -> np.ndarray:
    """0-based index of the alphabetically first letter of each non-empty set (-1 if empty)."""
    lowest_bit = masks & (~masks + np.uint64(1))  # isolate the lowest set bit
    out = np.bitwise_count(lowest_bit - np.uint64(1)).astype(np.int64)
    out[masks == 0] = -1
    return out


_FULL_MASKS = np.array([(1 << k) - 1 for k in range(MAX_OPTIONS + 1)], dtype=np.uint64)


def full_mask(n_options: np.ndarray) -> np.ndarray:
    """Mask of all options of questions with ``n_options`` options (0 ≤ n_options ≤ 64)."""
    return _FULL_MASKS[np.asarray(n_options, dtype=np.int64)]


def masks_from_indices(index_sets: Iterable[Iterable[int]]) -> np.ndarray:
    """Masks from 0-based index sets (test helper and small inputs)."""
    return np.array([sum(1 << i for i in set(s)) for s in index_sets], dtype=np.uint64)
