"""The seven-column layout (DESIGN §3.1) as files, SQLite tables and HF datasets hold it:
options as a list or as JSON text, answers as letters ("A, C"), any column type a source
may use (each coerced per row, see ``fields``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from oracleproto.corpus.sources.fields import (
    integer_field,
    options_field,
    source_fields,
    text_field,
)
from oracleproto.corpus.sources.raw import raw_table

SEVEN_COLUMNS = ("id", "choice_type", "question_type", "event", "options", "answer", "end_time")
_COERCIONS = {**{name: text_field for name in SEVEN_COLUMNS}, "options": options_field, "level": integer_field}


def seven_column_raw(batch: pa.Table, first_row: int = 0) -> pa.Table:
    """A batch in the seven-column shape → raw rows (missing columns become parse errors)."""
    fields, parse_error = source_fields(batch, _COERCIONS, required=SEVEN_COLUMNS)
    return raw_table(
        source_row=np.arange(first_row, first_row + batch.num_rows, dtype=np.int64),
        parse_error=parse_error,
        original=batch,
        **fields,
    )
