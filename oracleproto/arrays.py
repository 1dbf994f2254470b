"""Vectorised building blocks over Arrow arrays shared by the source adapters and the audit.

Both turn per-element results back into per-row lists and answers; building the offsets and
string buffers with numpy avoids per-row Python and the string conversions numpy would do.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def list_from_flat(values: pa.Array, parents: np.ndarray, n_rows: int) -> pa.ListArray:
    """Per-row lists of ``values`` (element i belongs to row ``parents[i]``, ascending)."""
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=n_rows), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def joined_letters(codes: np.ndarray, parents: np.ndarray, n_rows: int) -> pa.Array:
    """Per row, its letters joined by ", " ("A, C"; "" for none): ``codes`` are the letters'
    ASCII bytes (uint8), ``parents`` their rows (ascending). Written straight into the
    string buffers: no per-letter strings, no list join."""
    counts = np.bincount(parents, minlength=n_rows)
    offsets = np.zeros(n_rows + 1, dtype=np.int32)
    np.cumsum(np.where(counts > 0, 3 * counts - 2, 0), out=offsets[1:])
    first = np.cumsum(counts) - counts  # index of each row's first code
    rank = np.arange(len(codes)) - first[parents]
    at = offsets[:-1][parents] + 3 * rank
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    data[at] = codes
    separated = at[rank < counts[parents] - 1]
    data[separated + 1] = ord(",")
    data[separated + 2] = ord(" ")
    return pa.Array.from_buffers(pa.string(), n_rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
