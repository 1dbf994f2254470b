"""Source batches → raw-row batches: the layout is detected from the columns, readers'
per-row reasons are kept, and batches convert two at a time (pyarrow releases the GIL)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from oracleproto.corpus.sources.fields import first_reason
from oracleproto.corpus.sources.futurex import parse_futurex
from oracleproto.corpus.sources.plain import plain_table
from oracleproto.corpus.sources.seven import seven_column_raw
from oracleproto.errors import InputError
from oracleproto.parallel import ordered_map, prefetched

BATCH_ROWS = 50_000
FUTUREX_COLUMNS = frozenset({"prompt", "ground_truth"})


@dataclass(frozen=True)
class ReadBatch:
    """Source columns as read, with what the reader already knows about the rows."""

    table: pa.Table
    reasons: pa.Array | None = None  # per row, why the reader could not read it (null: fine)
    split: str | None = None  # the dataset split the rows come from (hf: sources)


def check_unique_columns(names: Iterable[str], where: str) -> None:
    """A column named twice cannot be told apart: refuse the file with one error."""
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise InputError(f"cannot read source {where}: column(s) {', '.join(map(repr, repeated))} appear more than once")


def _with_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, values)


def to_raw(batch: ReadBatch, first_row: int = 0) -> pa.Table:
    """One source batch → raw rows, in the layout its columns show (FutureX-Past's raw
    prompt + ground truth, or the seven columns)."""
    table = plain_table(batch.table)
    if FUTUREX_COLUMNS <= set(table.column_names):
        raw = parse_futurex(table, first_row)
    else:
        raw = seven_column_raw(table, first_row)
    if batch.reasons is not None:
        raw = _with_column(raw, "parse_error", first_reason(batch.reasons, raw.column("parse_error").combine_chunks()))
    if batch.split is not None:
        raw = _with_column(raw, "split", pa.array([batch.split] * raw.num_rows, pa.string()))
    return raw


def raw_batches(batches: Iterable[ReadBatch | pa.Table]) -> Iterator[pa.Table]:
    """Raw rows of each non-empty batch, numbered across batches, in order."""

    def numbered() -> Iterator[tuple[ReadBatch, int]]:
        first_row = 0
        for batch in batches:
            batch = batch if isinstance(batch, ReadBatch) else ReadBatch(batch)
            if batch.table.num_rows:
                yield batch, first_row
                first_row += batch.table.num_rows

    # The source is read on a thread of its own, ahead of the conversions.
    return ordered_map(lambda item: to_raw(*item), prefetched(numbered(), depth=1))


def sliced(batch: ReadBatch, rows: int = BATCH_ROWS) -> Iterator[ReadBatch]:
    """A large batch as slices of ``rows`` (bounded memory per conversion, and parallel)."""
    for start in range(0, batch.table.num_rows, rows):
        reasons = batch.reasons.slice(start, rows) if batch.reasons is not None else None
        yield ReadBatch(batch.table.slice(start, rows), reasons, batch.split)
