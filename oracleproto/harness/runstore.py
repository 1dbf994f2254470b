"""Run store: one SQLite file (WAL) per evaluated model, keyed (q_id, trial).

Each finished trial is committed on its own, so a killed evaluation loses at most the
trials that were in flight. Resume follows paper Eq. 36: a (q_id, trial) is accounted for
iff it has a row whose error is null or ``skipped_training_cutoff``; rows with any other
error are redone and overwritten. A store remembers the fingerprint of the settings that
created it and refuses to resume under different ones.

``created_at`` lives only here (and in logs); :func:`export_trials` writes the canonical
``trials.parquet`` (exactly :data:`~oracleproto.schema.TRIAL_SCHEMA`, sorted by model,
q_id, trial) from the stored rows, with no wall-clock value in it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from oracleproto.errors import InputError
from oracleproto.io import write_json, write_parquet
from oracleproto.schema import CUTOFF_SKIP, TRIAL_SCHEMA

STORE_SCHEMA_VERSION = "3"
TRIAL_SORT = ("model", "q_id", "trial")
DATE_COLUMNS = tuple(f.name for f in TRIAL_SCHEMA if pa.types.is_date32(f.type))
# Long text columns get their own SQLite columns: no second JSON escaping of the traces.
TEXT_COLUMNS = ("raw_output", "messages", "tools", "search_calls")
ROW_COLUMNS = tuple(name for name in TRIAL_SCHEMA.names if name not in TEXT_COLUMNS)




def store_filename(label: str) -> str:
    """File name for a model label: readable, and unique even when two labels sanitise alike."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", label.replace("/", "__"))
    return f"{safe}.{hashlib.sha256(label.encode('utf-8')).hexdigest()[:8]}.db"


def _json_default(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def row_to_json(row: Mapping[str, Any]) -> str:
    """The short columns of a trial row as JSON (the text columns are stored beside it)."""
    missing = [name for name in TRIAL_SCHEMA.names if name not in row]
    if missing:
        raise InputError(f"trial row ({row.get('q_id')}, {row.get('trial')}) lacks column(s) {missing}")
    return json.dumps({name: row[name] for name in ROW_COLUMNS}, default=_json_default, ensure_ascii=False)


def row_from_json(text: str, texts: tuple[str | None, ...]) -> dict[str, Any]:
    row = json.loads(text)
    for name in DATE_COLUMNS:
        if row.get(name) is not None:
            row[name] = dt.date.fromisoformat(row[name])
    row.update(zip(TEXT_COLUMNS, texts))
    return {name: row[name] for name in TRIAL_SCHEMA.names}


def fingerprint_diff(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths where two fingerprints differ."""
    diffs = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            diffs.extend(fingerprint_diff(a, b, f"{prefix}{key}."))
        elif a != b:
            diffs.append(f"{prefix}{key}")
    return diffs


class RunStore:
    """The trials of one model label."""

    def __init__(self, path: str | Path, label: str) -> None:
        self.path = Path(path)
        self.label = label
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._open(label)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.path} is not a usable run store ({exc}); move it aside to start the model afresh") from None

    def _open(self, label: str) -> None:
        self._conn = sqlite3.connect(self.path, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS trials (q_id TEXT NOT NULL, trial INTEGER NOT NULL, error TEXT, "
            "created_at TEXT NOT NULL, row TEXT NOT NULL, "
            + ", ".join(f"{name} TEXT" for name in TEXT_COLUMNS)
            + ", PRIMARY KEY (q_id, trial))"
        )
        stored_label = self._meta("label")
        if stored_label is not None and stored_label != label:
            raise InputError(f"{self.path} holds model {stored_label!r}, not {label!r}")
        stored_version = self._meta("store_schema_version")
        if stored_version is not None and stored_version != STORE_SCHEMA_VERSION:
            raise InputError(
                f"{self.path} has run-store schema {stored_version}, this version writes {STORE_SCHEMA_VERSION}: "
                "use a new output directory"
            )
        self._set_meta("label", label)
        self._set_meta("store_schema_version", STORE_SCHEMA_VERSION)

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def bind_fingerprint(self, fingerprint: Mapping[str, Any]) -> None:
        """Remember ``fingerprint``, or check it equals the one this store was created with."""
        text = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False, default=_json_default)
        stored = self._meta("fingerprint")
        if stored is None:
            self._set_meta("fingerprint", text)
            return
        if stored != text:
            diffs = fingerprint_diff(json.loads(stored), json.loads(text))
            raise InputError(
                f"cannot resume {self.label!r} in {self.path.parent.parent}: it was started with different "
                f"settings ({', '.join(diffs) or 'fingerprint'}); use a new output directory or restore the settings"
            )

    def accounted(self) -> set[tuple[str, int]]:
        """(q_id, trial) pairs that need no more work (Eq. 36)."""
        rows = self._conn.execute("SELECT q_id, trial FROM trials WHERE error IS NULL OR error = ?", (CUTOFF_SKIP,))
        return {(q_id, trial) for q_id, trial in rows}

    def put(self, row: Mapping[str, Any]) -> None:
        """Write one finished trial (replacing an earlier error row), committed at once."""
        if row["model"] != self.label:
            raise InputError(f"row for model {row['model']!r} written to the store of {self.label!r}")
        created_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")
        self._conn.execute(
            f"INSERT OR REPLACE INTO trials (q_id, trial, error, created_at, row, {', '.join(TEXT_COLUMNS)}) "
            f"VALUES (?, ?, ?, ?, ?{', ?' * len(TEXT_COLUMNS)})",
            (row["q_id"], row["trial"], row["error"], created_at, row_to_json(row), *(row[name] for name in TEXT_COLUMNS)),
        )

    def discard(self, q_id: str, trial: int) -> bool:
        """Remove the row of (q_id, trial), if any, so a resume runs the trial again."""
        return self._conn.execute("DELETE FROM trials WHERE q_id = ? AND trial = ?", (q_id, trial)).rowcount > 0

    def rows(self) -> list[dict[str, Any]]:
        query = f"SELECT row, {', '.join(TEXT_COLUMNS)} FROM trials ORDER BY q_id, trial"
        return [row_from_json(text, tuple(texts)) for text, *texts in self._conn.execute(query)]

    def count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trials_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=TRIAL_SCHEMA)


def export_trials(rows: Iterable[Mapping[str, Any]], path: str | Path) -> pa.Table:
    """Write the canonical ``trials.parquet``; returns the table written."""
    table = trials_table(rows)
    write_parquet(table, path, TRIAL_SCHEMA, sort_by=TRIAL_SORT)
    return table


def write_manifest(manifest: Mapping[str, Any], path: str | Path) -> Path:
    """``manifest.json``: canonical JSON (sorted keys), no timestamps."""
    return write_json(manifest, path)

