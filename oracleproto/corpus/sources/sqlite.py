"""``sqlite:PATH`` — the paper's released layout: one question table (seven columns, options
as JSON text) plus ``dataset_metadata`` whose ``features_json.prompt_reconstruction`` holds
the prompt templates.

The database is opened read-only and immutable, so it reads from read-only media and never
leaves ``-wal``/``-shm`` files beside the user's file. SQLite lets a column hold any type in
any row (text, numbers, BLOBs); such cells are judged per row like any other source's."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from oracleproto.corpus.sources.batches import ReadBatch, raw_batches, sliced
from oracleproto.corpus.sources.registry import SourceData, one_line, register_source
from oracleproto.corpus.sources.values import reasons_array, table_from_records
from oracleproto.errors import InputError
from oracleproto.io import sha256_file

_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _text_or_bytes(raw: bytes) -> str | bytes:
    """TEXT cells as text; one that is not UTF-8 stays bytes (flagged per row, not fatal)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _connect(path: Path) -> sqlite3.Connection:
    # immutable=1: no locks, no journal, no -wal/-shm files (the file must not change while read).
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    conn.text_factory = _text_or_bytes
    return conn


def _metadata(conn: sqlite3.Connection) -> tuple[str | None, dict[str, Any]]:
    """(question table name, features_json) from ``dataset_metadata``; both optional."""
    try:
        row = conn.execute("SELECT table_name, features_json FROM dataset_metadata LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        return None, {}
    if row is None:
        return None, {}
    try:
        features = json.loads(row[1]) if isinstance(row[1], str) and row[1] else {}
    except (ValueError, RecursionError):
        features = {}
    table_name = row[0] if isinstance(row[0], str) else None
    return table_name, features if isinstance(features, dict) else {}


def _templates(features: dict[str, Any]) -> dict[str, str] | None:
    recon = features.get("prompt_reconstruction")
    if not isinstance(recon, dict):
        return None
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        for key, value in recon.items()
    }


def _question_table(conn: sqlite3.Connection, named: str | None, where: str) -> str:
    if named is None:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name != 'dataset_metadata'")]
        if len(names) != 1:
            raise InputError(f"cannot read source {where}: no dataset_metadata row and {len(names)} candidate tables")
        named = names[0]
    if not _TABLE_NAME.match(named):
        raise InputError(f"cannot read source {where}: invalid table name {named!r}")
    return named


def _read(path: Path, table_option: str | None, where: str) -> tuple[ReadBatch, dict[str, Any]]:
    try:
        conn = _connect(path)
        try:
            table_name, features = _metadata(conn)
            table_name = _question_table(conn, table_option or table_name, where)
            cursor = conn.execute(f'SELECT * FROM "{table_name}" ORDER BY rowid')
            names = [d[0] for d in cursor.description]
            records = [dict(zip(names, row)) for row in cursor.fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot read source {where}: {one_line(exc)}") from exc
    table, reasons = table_from_records(records)
    return ReadBatch(table, reasons_array(reasons, table.num_rows)), features


@register_source("sqlite")
def read_sqlite_source(arg: str, options: dict[str, Any]) -> SourceData:
    path = Path(arg)
    where = f"sqlite:{arg}"
    if not arg or not path.is_file():
        raise InputError(f"cannot read source {where}: no such file")
    batch, features = _read(path, options.get("table"), where)
    metadata = {k: features[k] for k in ("description", "end_time_range", "release_date", "schema_version") if k in features}
    return SourceData(
        uri=where,
        batches=raw_batches(sliced(batch)),
        source_hash=sha256_file(path),
        prompt_templates=_templates(features),
        metadata=metadata,
    )
