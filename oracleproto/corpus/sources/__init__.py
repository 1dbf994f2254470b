"""Source adapters: each turns a source into batches of *raw rows* for the audit.

A source is named by a URI: ``sample``, ``hf:futurex-ai/Futurex-Past`` (or ``hf:/local/dir`` in
the same layout), ``sqlite:PATH``, ``jsonl:PATH``, ``parquet:PATH``, ``csv:PATH``. Adapters
register by scheme behind one small protocol: ``read(arg, options) -> SourceData``.

Raw rows (``RAW_COLUMNS``): the seven question fields as the source gives them (nullable,
unnormalised), ``level``, ``parse_error`` (why a row could not be read into fields) and
``original`` (a struct of the source's own columns, so a quarantined row keeps everything).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.config import Ingest
from oracleproto.errors import OracleProtoError
from oracleproto.schema import RAW_SCHEMA

RAW_COLUMNS = tuple(name for name in RAW_SCHEMA.names if name != "raw")


class SourceError(OracleProtoError, RuntimeError):
    """A source could not be opened or read: one line naming the source and the cause."""


@dataclass
class SourceData:
    """What an adapter returns: raw-row batches plus the metadata that travels with the table."""

    uri: str
    batches: Iterator[pa.Table]
    source_hash: str
    prompt_templates: dict[str, str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


SourceReader = Callable[[str, dict[str, Any]], SourceData]
_READERS: dict[str, SourceReader] = {}


def register_source(scheme: str) -> Callable[[SourceReader], SourceReader]:
    def decorate(reader: SourceReader) -> SourceReader:
        _READERS[scheme] = reader
        return reader

    return decorate


def source_schemes() -> list[str]:
    return sorted(_READERS)


def split_uri(uri: str) -> tuple[str, str]:
    scheme, sep, arg = uri.partition(":")
    if not sep:
        return uri, ""
    return scheme, arg


def open_source(uri: str, options: Ingest | Mapping[str, Any] | None = None) -> SourceData:
    """Open the source named by ``uri``; unknown schemes and unreadable sources raise SourceError.

    Readers get the ``ingest`` params as a dict with every key (defaults: oracleproto.config).
    """
    scheme, arg = split_uri(uri)
    reader = _READERS.get(scheme)
    if reader is None:
        raise SourceError(f"unknown source {uri!r}: use one of {', '.join(s + ':' if s != 'sample' else s for s in source_schemes())}")
    settings = options if isinstance(options, Ingest) else Ingest.checked(**(options or {}))
    return reader(arg, settings.model_dump())



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


def as_text(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A source column as text; dates and timestamps become ``YYYY-MM-DD``."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_timestamp(values.type):
        values = pc.cast(values, pa.date32())
    if pa.types.is_date(values.type):
        return pc.strftime(values, "%Y-%m-%d")
    return pc.cast(values, pa.string())


def raw_table(*, original: pa.Table, **columns: Any) -> pa.Table:
    """Assemble a raw-row batch: the RAW_COLUMNS (missing ones null) plus ``original``."""
    n = original.num_rows
    arrays = [_as_array(columns.get(name), RAW_SCHEMA.field(name).type, n) for name in RAW_COLUMNS]
    original = original.combine_chunks()
    struct = pa.StructArray.from_arrays(
        [col.chunk(0) if col.num_chunks else pa.array([], col.type) for col in original.columns],
        names=original.column_names,
    ) if original.num_columns else pa.nulls(n, pa.struct([]))
    return pa.Table.from_arrays([*arrays, struct], names=[*RAW_COLUMNS, "original"])


# Register the built-in adapters.
from oracleproto.corpus.sources import files as _files  # noqa: E402,F401
from oracleproto.corpus.sources import hf as _hf  # noqa: E402,F401
from oracleproto.corpus.sources import sqlite as _sqlite  # noqa: E402,F401
