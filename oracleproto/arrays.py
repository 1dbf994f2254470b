"""Vectorised building blocks over Arrow arrays shared by the source adapters, the audit and
the question contract.

Per-element results go back into per-row lists by building the offsets with numpy (no
per-row Python); text is trimmed and folded by Arrow kernels.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def list_from_flat(values: pa.Array, parents: np.ndarray, n_rows: int) -> pa.ListArray:
    """Per-row lists of ``values`` (element i belongs to row ``parents[i]``, ascending)."""
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=n_rows), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def blank(values: pa.Array) -> np.ndarray:
    """Per row: null, or nothing but whitespace (tested in place: no trimmed copy)."""
    empty = pc.or_(pc.equal(pc.binary_length(values), 0), pc.utf8_is_space(values))
    return np.asarray(pc.fill_null(empty, True).to_numpy(zero_copy_only=False), dtype=bool)


def _collapse_each(values: pa.Array) -> pa.Array:
    """Trim, then fold inner runs of whitespace to one space, on every value."""
    values = pc.utf8_trim_whitespace(values)
    needs = pc.fill_null(pc.match_substring_regex(values, r"\s\s|[\t\n\r\f\v]"), False)
    if not pc.any(needs).as_py():
        return values
    fixed = pc.replace_substring_regex(pc.filter(values, needs), r"\s+", " ")
    return pc.replace_with_mask(values, needs, fixed)


def _byte_table(byte_values) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[list(byte_values)] = True
    return table


# A value can change only if it starts or ends with a character the trim removes (the ASCII
# ones asked of Arrow's own kernel; any non-ASCII character is a maybe) or holds \t \n \v \f
# \r or two spaces in a row: bytes >= 0x80 are never any of these, so the test is exact.
_EDGE_MAYBE = _byte_table(
    [i for i, kept in enumerate(pc.utf8_length(pc.utf8_trim_whitespace(pa.array([chr(i) for i in range(128)]))).to_pylist()) if not kept]
    + list(range(0x80, 0x100))
)


def _may_change(values: pa.Array) -> np.ndarray:
    """Per value: might collapsing change it? (Read from the UTF-8 bytes in place.)"""
    n = len(values)
    if n == 0 or values.buffers()[2] is None:
        return np.zeros(n, dtype=bool)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset : values.offset + n + 1].astype(np.int64)
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    starts, ends = offsets[:-1] - offsets[0], offsets[1:] - offsets[0]
    nonempty = np.flatnonzero(ends > starts)
    maybe = np.zeros(n, dtype=bool)
    maybe[nonempty] = _EDGE_MAYBE[data[starts[nonempty]]] | _EDGE_MAYBE[data[ends[nonempty] - 1]]
    inner = (data - np.uint8(0x09)) < 5  # \t \n \v \f \r (the subtraction wraps below 0x09)
    space = data == 0x20
    inner[:-1] |= space[:-1] & space[1:]
    maybe[np.searchsorted(ends, np.flatnonzero(inner), side="right")] = True
    return maybe


def collapse_whitespace(values: pa.Array) -> pa.Array:
    """Trim, and fold inner runs of whitespace to one space. Only the values that could
    change go through the string kernels: the rest are returned as they are, uncopied."""
    if values.type != pa.string():
        return _collapse_each(values)
    maybe = _may_change(values)
    if not maybe.any():
        return values
    return pc.replace_with_mask(values, pa.array(maybe), _collapse_each(values.filter(pa.array(maybe))))


def iso_dates(values: pa.Array) -> pa.Array:
    """date32 of ``YYYY-MM-DD`` text (surrounding space and anything after the date ignored);
    null where the text is not that shape or names no calendar day.

    Arrow's strptime rolls an impossible day over (2025-02-30 parses as 2025-03-02) and
    rejects only month 13 or day 00; an overflowing day (29-31) always lands on day 1-3 of
    the next month, so a parse is exact iff its day of the month is the day as written.
    """
    head = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(values), 0, 10)
    shaped = pc.match_substring_regex(head, r"^\d{4}-\d{2}-\d{2}$")
    parsed = pc.strptime(head, format="%Y-%m-%d", unit="s", error_is_null=True)
    written_day = pc.cast(pc.if_else(shaped, pc.utf8_slice_codeunits(head, 8, 10), "00"), pa.int64())
    same_day = pc.equal(pc.day(parsed), written_day)
    return pc.if_else(pc.and_(shaped, same_day), pc.cast(parsed, pa.date32()), pa.scalar(None, pa.date32()))
