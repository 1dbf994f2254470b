"""File sources (``jsonl:``, ``parquet:``, ``csv:``, and the embedded ``sample``).

A file is either in the seven-column shape or in FutureX-Past's raw shape (it has ``prompt``
and ``ground_truth`` columns); the shape is detected from the columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from oracleproto.corpus.sources import (
    SourceData,
    SourceError,
    as_text,
    raw_table,
    register_source,
)
from oracleproto.corpus.sources.futurex import parse_futurex
from oracleproto.io import SourceReadError, read_jsonl, sha256_file
from oracleproto.parallel import ordered_map

BATCH_ROWS = 50_000
SAMPLE_PATH = Path("data/sample/futurex_sample.jsonl")
FUTUREX_COLUMNS = {"prompt", "ground_truth"}
SEVEN_COLUMNS = ("id", "choice_type", "question_type", "event", "options", "answer", "end_time")


def _options_from_json_text(values: pa.Array) -> tuple[pa.Array, list[str | None]]:
    """Options stored as JSON text (CSV, SQLite): parse per row; bad text → parse error."""
    options: list[list[str] | None] = []
    errors: list[str | None] = []
    for text in values.to_pylist():
        try:
            parsed = json.loads(text) if text is not None else None
        except json.JSONDecodeError as exc:
            options.append(None)
            errors.append(f"options is not a JSON array ({exc.msg})")
            continue
        if not isinstance(parsed, list) or not all(isinstance(x, str) for x in parsed):
            options.append(None)
            errors.append("options is not a JSON array of strings")
            continue
        options.append(parsed)
        errors.append(None)
    return pa.array(options, pa.list_(pa.string())), errors


def seven_column_raw(batch: pa.Table, first_row: int = 0) -> pa.Table:
    """A batch in the seven-column shape → raw rows (missing columns become parse errors)."""
    n = batch.num_rows
    missing = [c for c in SEVEN_COLUMNS if c not in batch.column_names]
    cols: dict[str, Any] = {}
    errors: list[str | None] = [None] * n
    for name in SEVEN_COLUMNS:
        if name in missing:
            continue
        col = batch.column(name).combine_chunks()
        if name == "options":
            if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
                cols[name] = pc.cast(col, pa.list_(pa.string()))
            else:
                cols[name], errors = _options_from_json_text(as_text(col))
        else:
            cols[name] = as_text(col)
    if missing:
        errors = [f"missing column(s) {', '.join(missing)}"] * n
    return raw_table(
        source_row=np.arange(first_row, first_row + n, dtype=np.int64),
        parse_error=pa.array(errors, pa.string()),
        level=batch.column("level") if "level" in batch.column_names else None,
        original=batch,
        **cols,
    )


def _to_raw(batch: pa.Table, first_row: int) -> pa.Table:
    if FUTUREX_COLUMNS <= set(batch.column_names):
        return parse_futurex(batch, first_row)
    return seven_column_raw(batch, first_row)


def raw_batches(tables: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """Raw rows of each batch, in order (two batches parse at once on a 2-core machine)."""

    def numbered() -> Iterator[tuple[pa.Table, int]]:
        first_row = 0
        for batch in tables:
            yield batch, first_row
            first_row += batch.num_rows

    return ordered_map(lambda item: _to_raw(*item), numbered())


def _check_file(path: str) -> Path:
    if not path:
        raise SourceError("a file source needs a path, e.g. parquet:data/in.parquet")
    p = Path(path)
    if not p.is_file():
        raise SourceError(f"cannot read source {path}: no such file")
    return p


def _parquet_batches(path: Path) -> Iterator[pa.Table]:
    try:
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            yield pa.Table.from_batches([batch])
    except (OSError, pa.ArrowException) as exc:
        raise SourceError(f"cannot read source {path}: {exc}") from exc


def _jsonl_table(path: Path) -> pa.Table:
    try:
        records = read_jsonl(path)
    except SourceReadError as exc:
        raise SourceError(str(exc)) from exc
    try:
        return pa.Table.from_pylist(records)
    except (pa.ArrowException, TypeError) as exc:
        raise SourceError(f"cannot read source {path}: records do not share one shape ({exc})") from exc


def _csv_table(path: Path) -> pa.Table:
    try:
        # All columns as text: the audit, not the CSV reader, decides what is valid.
        with open(path, "rb") as fh:
            header = fh.readline().decode("utf-8").strip().split(",")
        types = {name.strip().strip('"'): pa.string() for name in header}
        return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=types))
    except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
        raise SourceError(f"cannot read source {path}: {exc}") from exc


@register_source("parquet")
def read_parquet_source(arg: str, options: dict[str, Any]) -> SourceData:
    path = _check_file(arg)
    return SourceData(uri=f"parquet:{arg}", batches=raw_batches(_parquet_batches(path)), source_hash=sha256_file(path))


@register_source("jsonl")
def read_jsonl_source(arg: str, options: dict[str, Any]) -> SourceData:
    path = _check_file(arg)
    return SourceData(uri=f"jsonl:{arg}", batches=raw_batches(iter([_jsonl_table(path)])), source_hash=sha256_file(path))


@register_source("csv")
def read_csv_source(arg: str, options: dict[str, Any]) -> SourceData:
    path = _check_file(arg)
    return SourceData(uri=f"csv:{arg}", batches=raw_batches(iter([_csv_table(path)])), source_hash=sha256_file(path))


@register_source("sample")
def read_sample_source(arg: str, options: dict[str, Any]) -> SourceData:
    """The embedded sample corpus (FutureX raw shape), relative to the project root."""
    path = Path(options.get("sample_path") or SAMPLE_PATH)
    if not path.is_file():
        raise SourceError(f"cannot read source sample: {path} not found (run from the project root)")
    data = read_jsonl_source(str(path), options)
    data.uri = "sample"
    data.metadata["sample_path"] = str(SAMPLE_PATH)
    return data
