"""The raw-row table every adapter yields (``RAW_COLUMNS`` + ``original``).

Raw rows: the seven question fields as the source gives them (nullable, unnormalised),
``level``, ``parse_error`` (why a row could not be read into fields; the audit quarantines
it), ``split`` and the extra context columns of ``RAW_SCHEMA``, and ``original`` (a struct of
the source's own columns, in their plain layouts, so a quarantined row keeps everything).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from oracleproto.corpus.sources.plain import plain_table
from oracleproto.schema import RAW_SCHEMA

RAW_COLUMNS = tuple(name for name in RAW_SCHEMA.names if name != "raw")


def _as_array(values: Any, typ: pa.DataType, n: int) -> pa.Array:
    if values is None:
        return pa.nulls(n, typ)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, np.ndarray):
        values = pa.array(values)
    if not isinstance(values, pa.Array):
        values = pa.array(values, typ)
    return values if values.type == typ else values.cast(typ)


def _struct_of(table: pa.Table) -> pa.StructArray:
    if table.num_columns == 0:
        raise ValueError("a source table without columns has no original record to keep")
    table = plain_table(table).combine_chunks()
    children = [column.chunk(0) if column.num_chunks else pa.array([], column.type) for column in table.columns]
    return pa.StructArray.from_arrays(children, names=table.column_names)


def raw_table(*, original: pa.Table, **columns: Any) -> pa.Table:
    """Assemble a raw-row batch: the RAW_COLUMNS given (missing ones null) plus ``original``."""
    unknown = set(columns) - set(RAW_COLUMNS)
    if unknown:
        raise TypeError(f"not raw columns: {sorted(unknown)}")
    n = original.num_rows
    arrays = [_as_array(columns.get(name), RAW_SCHEMA.field(name).type, n) for name in RAW_COLUMNS]
    return pa.Table.from_arrays([*arrays, _struct_of(original)], names=[*RAW_COLUMNS, "original"])
