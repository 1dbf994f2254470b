"""File sources (``jsonl:``, ``parquet:``, ``csv:``, and the embedded ``sample``).

A file is either in the seven-column shape or in FutureX-Past's raw shape (it has ``prompt``
and ``ground_truth`` columns); the shape is detected from the columns. Whatever wrote the
file (pandas, pyarrow, a spreadsheet), the raw table is the same: a file that cannot be
read at all is one ``InputError`` naming it; a row that cannot be read is a raw row with
its reason, which the audit quarantines.
"""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from oracleproto.corpus.sources.batches import (
    BATCH_ROWS,
    ReadBatch,
    check_unique_columns,
    raw_batches,
    sliced,
)
from oracleproto.corpus.sources.registry import SourceData, one_line, register_source
from oracleproto.corpus.sources.values import reasons_array, table_from_records
from oracleproto.errors import InputError
from oracleproto.io import sha256_file

SAMPLE_PATH = Path("data/sample/futurex_sample.jsonl")
_UTF8_BOM = b"\xef\xbb\xbf"
_QUOTED_TEXT = 120  # characters of an unreadable line quoted in its reason
_MAX_BLOCK = 2**31 - 1  # pyarrow's CSV block size is a 32-bit int


def _check_file(path: str) -> Path:
    if not path:
        raise InputError("a file source needs a path, e.g. parquet:data/in.parquet")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"cannot read source {path}: no such file")
    return p


# ------------------------------------------------------------------------------- parquet
def _dictionary_below(typ: pa.DataType) -> bool:
    """Whether a dictionary type sits inside ``typ`` (a list or struct of dictionary text)."""
    return any(pa.types.is_dictionary(child) or _dictionary_below(child) for child in (typ.field(i).type for i in range(typ.num_fields)))


def parquet_batches(path: Path, split: str | None = None) -> Iterator[ReadBatch]:
    try:
        parquet = pq.ParquetFile(path)
        check_unique_columns(parquet.schema_arrow.names, str(path))
        # Each row group has its own dictionaries, and pyarrow cannot put a list of dictionary
        # text from two groups in one batch ("Nested data conversions not implemented for
        # chunked array outputs"): such a file is read group by group.
        by_group = any(_dictionary_below(f.type) for f in parquet.schema_arrow)
        for groups in ([[g] for g in range(parquet.num_row_groups)] if by_group else [None]):
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=groups):
                yield ReadBatch(pa.Table.from_batches([batch]), split=split)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read source {path}: {one_line(exc)}") from exc


# ------------------------------------------------------------------------------- JSON lines
def _json_line(line: bytes, lineno: int) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None), (None, reason) for a line that is no JSON object, (None, None) if blank."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"line {lineno} is not UTF-8 text (byte {exc.start})"
    if not text.strip():
        return None, None
    try:
        record = json.loads(text)
    except ValueError as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return None, f"line {lineno} is not JSON ({detail}): {text.strip()[:_QUOTED_TEXT]!r}"
    except RecursionError:
        return None, f"line {lineno} is JSON nested too deeply to read"
    if not isinstance(record, dict):
        return None, f"line {lineno} is not a JSON object but {type(record).__name__}"
    return record, None


def jsonl_batch(path: Path, split: str | None = None) -> ReadBatch:
    """The records of a JSON-lines file; unreadable lines become rows carrying their reason."""
    records: list[dict[str, Any]] = []
    reasons: dict[int, str] = {}
    try:
        with open(path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                record, reason = _json_line(line.removeprefix(_UTF8_BOM) if lineno == 1 else line, lineno)
                if reason is not None:
                    reasons[len(records)] = reason
                if record is not None or reason is not None:
                    records.append(record or {})
    except OSError as exc:
        raise InputError(f"cannot read source {path}: {exc.strerror or exc}") from exc
    table, field_reasons = table_from_records(records)
    if records and table.num_columns == 0:
        first_problem = f" ({next(iter(reasons.values()))})" if reasons else ""
        raise InputError(f"cannot read source {path}: no line holds a JSON object with fields{first_problem}")
    for row, reason in field_reasons.items():
        reasons.setdefault(row, reason)
    return ReadBatch(table, reasons_array(reasons, table.num_rows), split)


# ------------------------------------------------------------------------------- CSV
def _csv_header(path: Path) -> list[str]:
    try:
        with open(path, "rb") as fh:
            # Lines are decoded one at a time, so a bad byte in a later row is that row's
            # problem, not the header's; the csv module reads on while a quoted cell is open.
            lines = (line.removeprefix(_UTF8_BOM).decode("utf-8") if n == 0 else line.decode("utf-8") for n, line in enumerate(fh))
            header = next(csv.reader(lines), None)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read source {path}: the header row is not readable CSV text ({one_line(exc)})") from exc
    if not header:
        raise InputError(f"cannot read source {path}: it is empty (no header row)")
    check_unique_columns(header, str(path))
    return header


def _read_csv_bytes(path: Path, header: list[str], block_size: int | None) -> tuple[pa.Table, list[str]]:
    """Every column as bytes (the audit, not the reader, decides what is valid), and the
    reasons of the rows whose field count differs from the header's."""
    misshapen: list[str] = []

    def keep_misshapen(row: pacsv.InvalidRow) -> str:
        misshapen.append(
            f"a row has {row.actual_columns} fields where the header has {row.expected_columns}: {row.text[:_QUOTED_TEXT]!r}"
        )
        return "skip"

    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(block_size=block_size) if block_size else None,
        parse_options=pacsv.ParseOptions(newlines_in_values=True, invalid_row_handler=keep_misshapen),
        convert_options=pacsv.ConvertOptions(column_types={name: pa.binary() for name in header}),
    )
    return table, misshapen


def _as_text_where_valid(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A byte column as text when every cell is UTF-8 (else bytes: those rows get flagged)."""
    try:
        return column.cast(pa.string())
    except pa.ArrowInvalid:
        return column


def _read_csv_any_cell_size(path: Path, header: list[str]) -> tuple[pa.Table, list[str]]:
    try:
        return _read_csv_bytes(path, header, None)
    except pa.ArrowInvalid as exc:
        if "straddl" not in str(exc):
            raise
        # A cell larger than a block (1 MiB by default): read the file as one block.
        return _read_csv_bytes(path, header, min(path.stat().st_size + 1, _MAX_BLOCK))


@contextlib.contextmanager
def _unraisable_into(found: list[BaseException]) -> Iterator[None]:
    """Collect what pyarrow reports as "Exception ignored" (a traceback on stderr): its row
    callback decodes a misshapen row as UTF-8 before our handler sees it, and a row that is
    not UTF-8 raises there. The read then fails, and its error line says why."""
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: found.append(unraisable.exc_value)
    try:
        yield
    finally:
        sys.unraisablehook = previous


def csv_batch(path: Path, split: str | None = None) -> ReadBatch:
    header = _csv_header(path)
    ignored: list[BaseException] = []
    try:
        with _unraisable_into(ignored):
            table, misshapen = _read_csv_any_cell_size(path, header)
    except (OSError, pa.ArrowException) as exc:
        cause = f"; a row with the wrong number of fields is not UTF-8 text ({one_line(ignored[0])})" if ignored else ""
        raise InputError(f"cannot read source {path}: {one_line(exc)}{cause}") from exc
    table = pa.Table.from_arrays([_as_text_where_valid(c) for c in table.columns], names=table.column_names)
    reasons = None
    if misshapen:
        # Rows that could not be split into the header's columns: kept at the end, empty.
        table = pa.concat_tables([table, pa.table({f.name: pa.nulls(len(misshapen), f.type) for f in table.schema})])
        reasons = pa.array([None] * (table.num_rows - len(misshapen)) + misshapen, pa.string())
    return ReadBatch(table, reasons, split)


# ------------------------------------------------------------------------------- sources
def csv_batches(path: Path, split: str | None = None) -> Iterator[ReadBatch]:
    return sliced(csv_batch(path, split))


def jsonl_batches(path: Path, split: str | None = None) -> Iterator[ReadBatch]:
    return sliced(jsonl_batch(path, split))


FileReader = Callable[[Path, str | None], Iterator[ReadBatch]]
_READERS_BY_SUFFIX: dict[str, FileReader] = {
    ".parquet": parquet_batches,
    ".csv": csv_batches,
    ".jsonl": jsonl_batches,
    ".ndjson": jsonl_batches,
    ".json": jsonl_batches,
}


def file_batches(path: Path, split: str | None = None) -> Iterator[ReadBatch]:
    """The batches of one data file, by its suffix (parquet, csv, JSON lines)."""
    read = _READERS_BY_SUFFIX.get(path.suffix.lower())
    if read is None:
        raise InputError(f"cannot read source {path}: unsupported file type {path.suffix or '(none)'} (use parquet, csv or jsonl)")
    return read(path, split)


def _file_source(scheme: str, arg: str, read: FileReader) -> SourceData:
    path = _check_file(arg)
    return SourceData(uri=f"{scheme}:{arg}", batches=raw_batches(read(path, None)), source_hash=sha256_file(path))


@register_source("parquet")
def read_parquet_source(arg: str, options: dict[str, Any]) -> SourceData:
    return _file_source("parquet", arg, parquet_batches)


@register_source("jsonl")
def read_jsonl_source(arg: str, options: dict[str, Any]) -> SourceData:
    return _file_source("jsonl", arg, jsonl_batches)


@register_source("csv")
def read_csv_source(arg: str, options: dict[str, Any]) -> SourceData:
    return _file_source("csv", arg, csv_batches)


@register_source("sample")
def read_sample_source(arg: str, options: dict[str, Any]) -> SourceData:
    """The embedded sample corpus (FutureX raw shape), relative to the project root."""
    path = Path(options.get("sample_path") or SAMPLE_PATH)
    if not path.is_file():
        raise InputError(f"cannot read source sample: {path} not found (run from the project root)")
    data = read_jsonl_source(str(path), options)
    data.uri = "sample"
    data.metadata["sample_path"] = str(SAMPLE_PATH)
    return data
