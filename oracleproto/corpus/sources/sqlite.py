"""``sqlite:PATH`` — the paper's released layout: one question table (seven columns, options
as JSON text) plus ``dataset_metadata`` whose ``features_json.prompt_reconstruction`` holds
the prompt templates."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa

from oracleproto.corpus.sources import SourceData, SourceError, register_source
from oracleproto.corpus.sources.files import raw_batches
from oracleproto.io import sha256_file

_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COLUMNS = ("id", "choice_type", "question_type", "event", "options", "answer", "end_time")


def _metadata(conn: sqlite3.Connection) -> tuple[str | None, dict[str, Any]]:
    """(question table name, features_json) from ``dataset_metadata``; both optional."""
    try:
        row = conn.execute("SELECT table_name, features_json FROM dataset_metadata LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        return None, {}
    if row is None:
        return None, {}
    try:
        features = json.loads(row[1]) if row[1] else {}
    except json.JSONDecodeError:
        features = {}
    return row[0], features if isinstance(features, dict) else {}


def _templates(features: dict[str, Any]) -> dict[str, str] | None:
    recon = features.get("prompt_reconstruction")
    if not isinstance(recon, dict):
        return None
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        for key, value in recon.items()
    }


@register_source("sqlite")
def read_sqlite_source(arg: str, options: dict[str, Any]) -> SourceData:
    path = Path(arg)
    if not arg or not path.is_file():
        raise SourceError(f"cannot read source sqlite:{arg}: no such file")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        table_name, features = _metadata(conn)
        table_name = options.get("table") or table_name
        if table_name is None:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name != 'dataset_metadata'")]
            if len(names) != 1:
                raise SourceError(f"cannot read source sqlite:{arg}: no dataset_metadata row and {len(names)} candidate tables")
            table_name = names[0]
        if not _TABLE_NAME.match(table_name):
            raise SourceError(f"cannot read source sqlite:{arg}: invalid table name {table_name!r}")
        cur = conn.execute(f'SELECT * FROM "{table_name}" ORDER BY rowid')
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        conn.close()
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"cannot read source sqlite:{arg}: {exc}") from exc
    table = pa.table({name: pa.array([r[i] for r in rows]) for i, name in enumerate(names)}) if rows else pa.table(
        {name: pa.array([], pa.string()) for name in names}
    )
    metadata = {k: features[k] for k in ("description", "end_time_range", "release_date", "schema_version") if k in features}
    return SourceData(
        uri=f"sqlite:{arg}",
        batches=raw_batches(iter([table])),
        source_hash=sha256_file(path),
        prompt_templates=_templates(features),
        metadata=metadata,
    )
