"""Vectorised building blocks over Arrow arrays shared by the source adapters and the audit.

Both turn per-element results back into per-row lists and answers; building the offsets and
string buffers with numpy avoids per-row Python and the string conversions numpy would do.
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


def joined_letters(codes: np.ndarray, parents: np.ndarray, n_rows: int) -> pa.Array:
    """Per row, its letters joined by the answer separator ("A, C"; "" for none): ``codes``
    are the letters' code points, ``parents`` their rows (ascending). The grammar and the
    writer live in :mod:`oracleproto.letters`; this form takes code points as the source
    adapters read them from text."""
    from oracleproto.letters import join_letters, letter_indices  # letters builds on this module

    return join_letters(letter_indices(codes), parents, n_rows)


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
