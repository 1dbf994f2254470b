"""One Arrow layout per logical type, so every source gives the same raw table.

The same text reaches us as ``string``, ``large_string`` (pandas 3 writes it),
``string_view`` or dictionary-encoded; lists as ``list``, ``large_list``, ``list_view`` or
``fixed_size_list`` with any item-field name. Code that reads buffers (offsets, views) must
see one layout, and the raw table must not depend on which writer made the file, so every
source table is brought to the plain layouts first: ``string``, ``binary``, ``list<item>``,
structs of those.
"""

from __future__ import annotations

import json

import pyarrow as pa

# Parquet readers refuse schemas nested much deeper than this (≈50 levels), so a deeper
# source column is kept in the raw table as JSON text instead.
MAX_NESTING = 16

_TEXT_TYPES = (pa.types.is_large_string, pa.types.is_string_view)
_BYTES_TYPES = (pa.types.is_large_binary, pa.types.is_binary_view, pa.types.is_fixed_size_binary)
_LIST_TYPES = (
    pa.types.is_list,
    pa.types.is_large_list,
    pa.types.is_list_view,
    pa.types.is_large_list_view,
    pa.types.is_fixed_size_list,
)


def plain_type(typ: pa.DataType) -> pa.DataType:
    """The plain layout of ``typ`` (itself when it is plain already)."""
    if pa.types.is_dictionary(typ):
        return plain_type(typ.value_type)
    if any(check(typ) for check in _TEXT_TYPES):
        return pa.string()
    if any(check(typ) for check in _BYTES_TYPES):
        return pa.binary()
    if any(check(typ) for check in _LIST_TYPES):
        return pa.list_(plain_type(typ.value_type))
    if pa.types.is_struct(typ):
        return pa.struct([pa.field(f.name, plain_type(f.type)) for f in typ])
    return typ


def nesting_depth(typ: pa.DataType) -> int:
    if typ.num_fields == 0:
        return 0
    return 1 + max(nesting_depth(typ.field(i).type) for i in range(typ.num_fields))


def _json_text(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Each value as JSON text (for columns too deep to store as they are)."""
    texts = [None if v is None else json.dumps(v, ensure_ascii=False, default=str) for v in values.to_pylist()]
    return pa.array(texts, pa.string())


def plain_column(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """``values`` in its plain layout (no copy when it already is)."""
    if nesting_depth(values.type) > MAX_NESTING:
        return _json_text(values)
    target = plain_type(values.type)
    return values if values.type == target else values.cast(target)


def plain_table(table: pa.Table) -> pa.Table:
    """Every column of ``table`` in its plain layout."""
    if all(plain_type(f.type) == f.type and nesting_depth(f.type) <= MAX_NESTING for f in table.schema):
        return table
    columns = [plain_column(column) for column in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names)
