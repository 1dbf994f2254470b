"""The fuzz records (``tests/corpus/fuzz.py``) written in each adapter's real format by the
tools people use to make such files: ``json.dumps``, pandas and the csv module, pyarrow in
every string layout, SQLite in the paper's released layout, and a Hugging Face folder.

Each writer returns how many raw rows the file holds (a blank JSON line is no row; a
malformed line or a misshapen CSV row is one), so a test can check that none is lost.
"""

from __future__ import annotations

import csv
import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tests.corpus.fuzz import has_lone_surrogate, tabular_records

# JSON lines that hold no record: each is one raw row carrying its reason (blank lines are none).
HOSTILE_LINES: tuple[bytes, ...] = (
    b"{not json",
    b"[1, 2]",
    b"null",
    b'"just a string"',
    b"42",
    b"{}",
    b"caf\xe9 latin-1",
    b"\xff\xfe{\x00}",
    b'{"id": "x", "id": "y"}',
    b"[" * 50_000 + b"]" * 50_000,
    b'{"event": "unterminated',
    b"\x00\x00\x00",
    b"NaN",
    b'{"id": "dup-key", "event": "\\ud800 escaped surrogate"}',
)
BLANK_LINES: tuple[bytes, ...] = (b"", b"   ", b"\t", b"\r")

# CSV rows pyarrow cannot split into the header's columns: each is one raw row with its reason.
HOSTILE_CSV_ROWS: tuple[str, ...] = ("only,three,fields", "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", "lone")


def _json_line(record: dict[str, Any], ascii_only: bool) -> bytes:
    # ensure_ascii=False writes a lone surrogate as itself: not UTF-8, so that line is unreadable.
    return json.dumps(record, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def write_jsonl(records: list[dict[str, Any]], path: Path, ascii_only: bool = True, seed: int = 0) -> int:
    """JSON lines as json.dumps writes them, a BOM first, with the hostile and blank lines
    scattered among them."""
    rng = random.Random(seed)
    lines = [_json_line(r, ascii_only) for r in records]
    for extra in (*HOSTILE_LINES, *BLANK_LINES):
        lines.insert(rng.randrange(len(lines) + 1), extra)
    lines[0] = b"\xef\xbb\xbf" + lines[0]
    path.write_bytes(b"\r\n".join(lines[: len(lines) // 2]) + b"\r\n" + b"\n".join(lines[len(lines) // 2 :]) + b"\n")
    return len(records) + len(HOSTILE_LINES)


def write_pandas_csv(records: list[dict[str, Any]], path: Path) -> int:
    """pandas' to_csv of the records as they are (a list cell becomes its Python repr, a
    lone surrogate invalid UTF-8)."""
    pd.DataFrame(records).to_csv(path, index=False, errors="surrogatepass")
    return len(records)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def write_csv_module(records: list[dict[str, Any]], path: Path, seed: int = 0) -> int:
    """The csv module's writer (non-text values as JSON), with misshapen rows scattered in."""
    names = list(dict.fromkeys(key for record in records for key in record))
    rng = random.Random(seed)
    with open(path, "w", newline="", encoding="utf-8", errors="surrogatepass") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        extra = {rng.randrange(len(records)): row for row in HOSTILE_CSV_ROWS}
        for i, record in enumerate(records):
            writer.writerow([_csv_cell(record.get(name)) for name in names])
            if i in extra:
                fh.write(extra[i] + "\r\n")
    return len(records) + len(extra)


# ------------------------------------------------------------------------------- parquet
def in_layout(typ: pa.DataType, layout: str) -> pa.DataType:
    """``typ`` with its text (and lists of text) in ``layout``."""
    if pa.types.is_string(typ):
        return {"large_string": pa.large_string(), "string_view": pa.string_view(), "dictionary": pa.dictionary(pa.int32(), pa.string())}.get(layout, typ)
    if pa.types.is_list(typ):
        item = in_layout(typ.value_type, layout)
        return pa.large_list(item) if layout == "large_string" else pa.list_(item)
    return typ


def typed_table(records: list[dict[str, Any]]) -> pa.Table:
    """The records as one typed table (``tabular``): text, list<text> options, int64 level."""
    rows = tabular_records(records)
    names = list(rows[0])
    types = {name: pa.list_(pa.string()) if name == "options" else pa.int64() if name == "level" else pa.string() for name in names}
    return pa.Table.from_pylist(rows, schema=pa.schema([pa.field(name, types[name]) for name in names]))


def write_pyarrow_parquet(records: list[dict[str, Any]], path: Path, layout: str) -> int:
    table = typed_table(records)
    pq.write_table(table.cast(pa.schema([pa.field(f.name, in_layout(f.type, layout)) for f in table.schema])), path, row_group_size=3_000)
    return table.num_rows


def write_pandas_parquet(records: list[dict[str, Any]], path: Path) -> int:
    frame = pd.DataFrame(tabular_records(records))
    frame["level"] = frame["level"].astype("Int64")  # pandas' nullable integer, as a careful user writes it
    frame.to_parquet(path, index=False)
    return len(frame)


# ------------------------------------------------------------------------------- SQLite
_METADATA_TABLE = (
    "CREATE TABLE dataset_metadata (dataset_name TEXT NOT NULL, split_name TEXT NOT NULL, table_name TEXT NOT NULL, "
    "row_count INTEGER NOT NULL, imported_at_utc TEXT NOT NULL, features_json TEXT NOT NULL)"
)
_FEATURES = {"description": "fuzz", "prompt_reconstruction": {"system": "You forecast.", "user": {"nested": ["template"]}}}


def _sqlite_value(value: Any, rng: random.Random) -> Any:
    """A Python value as SQLite stores it: text, integer, real, NULL, or a BLOB; a list or
    object as JSON text (the paper's options); an integer past int64 as text."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=has_lone_surrogate(value))
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, str) and rng.random() < 0.01:
        return value.encode("utf-8", "surrogatepass")  # a BLOB cell (valid UTF-8 or not)
    if value is None and rng.random() < 0.05:
        return b"\xff\xfe\x00 not text"
    return value


def write_sqlite(records: list[dict[str, Any]], path: Path, typed: bool = True, seed: int = 0) -> int:
    """The paper's released layout (dataset_metadata + one question table). ``typed``
    declares the seven columns TEXT as the paper does (numbers become text, BLOBs stay);
    untyped columns keep every value's own storage class. Text with a lone surrogate is
    stored as invalid UTF-8 TEXT, as a careless writer leaves it."""
    rng = random.Random(seed)
    names = list(dict.fromkeys(key for record in records for key in record))
    declared = {name: ("INTEGER" if name == "level" else "TEXT") if typed else "" for name in names}
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(_METADATA_TABLE)
        conn.execute("INSERT INTO dataset_metadata VALUES ('fuzz', 'test', 'fuzz_set', ?, '2025-01-01T00:00:00Z', ?)", (len(records), json.dumps(_FEATURES)))
        conn.execute(f"CREATE TABLE fuzz_set ({', '.join(f'{n} {declared[n]}'.strip() for n in names)})")
        rows = [[_sqlite_value(record.get(name), rng) for name in names] for record in records]
        invalid = [(row, col) for row, values in enumerate(rows) for col, v in enumerate(values) if isinstance(v, str) and has_lone_surrogate(v)]
        for row, col in invalid:
            rows[row][col] = None
        conn.executemany(f"INSERT INTO fuzz_set VALUES ({', '.join('?' * len(names))})", rows)
        for row, col in invalid:
            text = records[row][names[col]].encode("utf-8", "surrogatepass")
            conn.execute(f"UPDATE fuzz_set SET {names[col]} = CAST(? AS TEXT) WHERE rowid = ?", (text, row + 1))
    conn.close()
    return len(records)


# ------------------------------------------------------------------------------- HF folder
_CARD = """---
license: cc-by-4.0
configs:
- config_name: default
  data_files:
  - split: train
    path: "data/train-*.{ext}"
  - split: test
    path: "data/test-*.{ext}"
---
# A hostile dataset

Rows for the adapter fuzz test.
"""


def write_hf_folder(records: list[dict[str, Any]], folder: Path, write: Callable[[list[dict[str, Any]], Path], int], ext: str) -> int:
    """A dataset card naming two splits, the train split in two files."""
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text(_CARD.replace("{ext}", ext), encoding="utf-8")
    third = len(records) // 3
    parts = {"train-00000-of-00002": records[:third], "train-00001-of-00002": records[third : 2 * third], "test-00000-of-00001": records[2 * third :]}
    return sum(write(part, folder / "data" / f"{name}.{ext}") for name, part in parts.items())
