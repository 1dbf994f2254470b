"""Every source adapter yields raw rows; unreadable sources fail with one clear line."""

import csv
import json
import sqlite3
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.corpus.sources import source_schemes
from oracleproto.errors import InputError
from tests.corpus.sources.helpers import SEVEN, read_raw, reasons, write_jsonl


def test_every_adapter_is_registered():
    assert source_schemes() == ["csv", "forecastbench", "hf", "jsonl", "parquet", "sample", "sqlite"]


def test_registry_imports_without_the_package_cycle():
    # The adapters import the registry, not the package: importing an adapter first works.
    code = "import oracleproto.corpus.sources.sqlite as s; import oracleproto.corpus.sources as p; print(p.source_schemes())"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "sqlite" in out and "forecastbench" in out


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "csv"])
def test_seven_column_files(tmp_path, fmt):
    path = tmp_path / f"q.{fmt}"
    if fmt == "jsonl":
        write_jsonl(path, SEVEN)
    elif fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(SEVEN), path)
    else:
        with open(path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(SEVEN[0]))
            writer.writeheader()
            writer.writerows({**r, "options": json.dumps(r["options"])} for r in SEVEN)
    table, _ = read_raw(f"{fmt}:{path}")
    assert table.column("options").to_pylist() == [["Yes", "No"], ["x", "y", "z"]]
    assert table.column("answer").to_pylist() == ["A", "A, C"]
    assert reasons(table) == [None, None]


def test_missing_columns_are_a_reason_on_every_row(tmp_path):
    path = write_jsonl(tmp_path / "q.jsonl", [{k: v for k, v in r.items() if k != "answer"} for r in SEVEN])
    table, _ = read_raw(f"jsonl:{path}")
    assert reasons(table) == ["missing column(s) answer"] * 2


@pytest.mark.parametrize(
    "uri, message",
    [
        ("nosuch:x", "unknown source"),
        ("parquet:/nonexistent/file.parquet", "no such file"),
        ("sqlite:/nonexistent.db", "no such file"),
        ("jsonl:", "needs a path"),
        ("forecastbench:/nonexistent", "no resolution_sets"),
    ],
)
def test_unreadable_sources_name_the_cause(uri, message):
    with pytest.raises(InputError, match=message):
        read_raw(uri)


def test_corrupt_parquet(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="bad.parquet"):
        read_raw(f"parquet:{path}")


def test_sqlite_paper_layout_carries_templates(paper_db):
    table, data = read_raw(f"sqlite:{paper_db}")
    assert table.num_rows == 80
    assert table.column("parse_error").null_count == 80
    assert {"agent_role", "prompt_template", "multiple_choice_multi_output_format"} <= set(data.prompt_templates)
    assert len(data.source_hash) == 64


def test_sqlite_with_broken_options_json(tmp_path):
    db = tmp_path / "q.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE qs (id TEXT, choice_type TEXT, question_type TEXT, event TEXT, options TEXT, answer TEXT, end_time TEXT)")
    conn.execute("INSERT INTO qs VALUES ('a','single','yes_no','Will?','[\"Yes\",\"No\"]','A','2024-01-01')")
    conn.execute("INSERT INTO qs VALUES ('b','single','yes_no','Will?','[Yes','A','2024-01-01')")
    conn.commit()
    conn.close()
    table, _ = read_raw(f"sqlite:{db}")
    errors = reasons(table)
    assert errors[0] is None and errors[1].startswith("options is not a JSON array")


def test_sqlite_reads_immutably_leaving_no_wal_or_shm(tmp_path, paper_db):
    # A WAL-mode database: a plain read-only connection would create -wal and -shm beside it.
    db = tmp_path / "dir with space#1" / "q?.db"
    db.parent.mkdir()
    db.write_bytes(paper_db.read_bytes())
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    before = sorted(p.name for p in db.parent.iterdir())
    table, _ = read_raw(f"sqlite:{db}")
    assert table.num_rows == 80
    assert sorted(p.name for p in db.parent.iterdir()) == before == ["q?.db"]


def test_sqlite_mixed_types_and_blobs_flag_their_rows_only(tmp_path):
    db = tmp_path / "mixed.db"
    conn = sqlite3.connect(db)
    # No declared types: SQLite keeps each value's own type (text, integer, BLOB).
    conn.execute("CREATE TABLE qs (id, choice_type, question_type, event, options, answer, end_time, level)")
    row = ("single", "yes_no", '["Yes", "No"]', "A", "2024-01-01")
    conn.execute("INSERT INTO qs VALUES ('ok', ?, ?, 'Will A?', ?, ?, ?, 1)", row)
    conn.execute("INSERT INTO qs VALUES (42, ?, ?, 'Will B?', ?, ?, ?, '2')", row)
    conn.execute("INSERT INTO qs VALUES ('blob', ?, ?, x'ff00', ?, ?, ?, 1)", row)
    conn.execute("INSERT INTO qs VALUES ('bad-text', ?, ?, CAST(x'c328' AS TEXT), ?, ?, ?, 1)", row)
    conn.execute("INSERT INTO qs VALUES ('utf8-blob', ?, ?, CAST('Will C?' AS BLOB), ?, ?, ?, 1.5)", row)
    conn.commit()
    conn.close()
    table, _ = read_raw(f"sqlite:{db}")
    assert table.column("id").to_pylist() == ["ok", "42", "blob", "bad-text", "utf8-blob"]
    assert table.column("level").to_pylist()[:2] == [1, 2]
    assert reasons(table) == [
        None,
        None,
        "event is not UTF-8 text (byte 0)",
        "event is not UTF-8 text (byte 0)",
        "level is not an integer (1.5)",
    ]
