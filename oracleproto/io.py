"""Canonical, atomic writers: the same logical table always gives the same bytes.

Rules (ECOSYSTEM.md §2): explicit Arrow schema, sorted rows, combined chunks, fixed
compression and row-group size, schema metadata under our own key only (no pandas
metadata, no timestamps, no host data), written to a temp file then renamed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from oracleproto import SCHEMA_VERSION
from oracleproto.errors import InputError
from oracleproto.schema import TABLE_METADATA_KEY

_PARQUET_OPTIONS = dict(
    compression="zstd",
    compression_level=3,
    use_dictionary=True,
    write_statistics=True,
    data_page_version="1.0",
    version="2.6",
    store_schema=True,
)
ROW_GROUP_SIZE = 1_000_000
# Floats in JSON and CSV artifacts are written rounded to this many decimal places: the
# last bits of a float computed on one CPU (vectorised log/exp, summation order) may differ
# on another, and an artifact must not. 1e-9 is far below any figure a report reads.
ARTIFACT_FLOAT_DECIMALS = 9


def _file_mode() -> int:
    """0o666 less the process umask: what ``open()`` would have given the file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def artifact_float(value: float) -> float:
    """``value`` at the artifacts' fixed precision (and never -0.0)."""
    return round(float(value), ARTIFACT_FLOAT_DECIMALS) + 0.0


def _fixed_precision(obj: Any) -> Any:
    if isinstance(obj, float):
        return artifact_float(obj) if obj == obj and abs(obj) != float("inf") else obj
    if isinstance(obj, dict):
        return {key: _fixed_precision(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_fixed_precision(value) for value in obj]
    return obj


def round_float_columns(table: pa.Table) -> pa.Table:
    """Every float64 column of ``table`` at the artifacts' fixed precision."""
    for index, field in enumerate(table.schema):
        if pa.types.is_floating(field.type):
            rounded = pc.round(table.column(index), ARTIFACT_FLOAT_DECIMALS)
            table = table.set_column(index, field, pc.add(rounded, pa.scalar(0.0, field.type)))
    return table




@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temp path beside ``path``; rename it over ``path`` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, _file_mode())  # mkstemp makes 0600 files; artifacts follow the umask
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _metadata(extra: dict[str, Any] | None) -> dict[bytes, bytes]:
    meta = {"schema_version": SCHEMA_VERSION, **(extra or {})}
    return {TABLE_METADATA_KEY: json.dumps(meta, sort_keys=True, ensure_ascii=False).encode()}


def table_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON metadata our writer stores in a parquet file's schema."""
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta.get(TABLE_METADATA_KEY, b"{}"))


def canonical_table(
    table: pa.Table,
    schema: pa.Schema,
    sort_by: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
) -> pa.Table:
    """Cast to ``schema`` (column order and types), sort, combine chunks, set metadata."""
    table = table.select(schema.names).cast(schema.remove_metadata())
    if sort_by and table.num_rows:
        table = table.sort_by([(name, "ascending") for name in sort_by])
    return table.combine_chunks().replace_schema_metadata(_metadata(metadata))


def write_parquet(
    table: pa.Table,
    path: str | os.PathLike[str],
    schema: pa.Schema,
    sort_by: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write ``table`` canonically and atomically; returns the path."""
    table = canonical_table(table, schema, sort_by, metadata)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, row_group_size=ROW_GROUP_SIZE, **_PARQUET_OPTIONS)
    return Path(path)


def write_parquet_parts(
    parts: Iterable[pa.Table],
    path: str | os.PathLike[str],
    schema: pa.Schema,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Stream already-ordered ``parts`` into one file, one row group per part.

    For large tables built piecewise (e.g. one admission-log block per model): the row
    order and row-group layout are fixed by the caller's deterministic part order.
    """
    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema.with_metadata(_metadata(metadata)), **_PARQUET_OPTIONS) as writer:
            for part in parts:
                if part.num_rows:
                    part = part.select(schema.names).cast(schema.remove_metadata()).combine_chunks()
                    writer.write_table(part, row_group_size=ROW_GROUP_SIZE)
    return Path(path)


def json_text(obj: Any) -> str:
    """Canonical JSON text: sorted keys, 2-space indent, UTF-8, trailing newline."""
    return json.dumps(_fixed_precision(obj), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_text(text: str, path: str | os.PathLike[str]) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes(data: bytes, path: str | os.PathLike[str]) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    return write_text(json_text(obj), path)


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]], path: str | os.PathLike[str]) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([repr(artifact_float(v)) if isinstance(v, float) and v == v and abs(v) != float("inf") else v for v in row] for row in rows)
    return write_text(buf.getvalue(), path)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """sha256 hex digest of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_parquet(path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> pa.Table:
    """One parquet file (read_table would import pyarrow.dataset, and pandas with it: ≈0.3 s)."""
    try:
        return pq.ParquetFile(path).read(columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read parquet {path}: {exc}") from exc


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Records of a JSON-lines file; a bad line is an error naming the line number."""
    records: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"cannot read {path}: line {lineno} is not JSON ({exc.msg})") from exc
                if not isinstance(obj, dict):
                    raise InputError(f"cannot read {path}: line {lineno} is not a JSON object")
                records.append(obj)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return records


def read_table(path: str | os.PathLike[str]) -> pa.Table:
    """A parquet or JSON-lines file as an Arrow table (by extension)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return read_parquet(path)
    if suffix in (".jsonl", ".json", ".ndjson"):
        records = read_jsonl(path)
        return pa.Table.from_pylist(records) if records else pa.table({})
    raise InputError(f"cannot read {path}: unsupported file type {suffix or '(none)'} (use .parquet or .jsonl)")
