"""Every source adapter yields raw rows; unreadable sources fail with one clear line."""

import csv
import json
import sqlite3

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.corpus.sources import SourceError, open_source
from oracleproto.corpus.sources.futurex import ground_truth_literal, render_prompt

SEVEN = [
    {"id": "q1", "choice_type": "single", "question_type": "yes_no", "event": "Will A?", "options": ["Yes", "No"], "answer": "A", "end_time": "2024-05-01"},
    {"id": "q2", "choice_type": "multi", "question_type": "multiple_choice", "event": "Which B?", "options": ["x", "y", "z"], "answer": "A, C", "end_time": "2024-06-01"},
]


def _raw(uri, **options):
    data = open_source(uri, options)
    return pa.concat_tables(list(data.batches)), data


def test_sqlite_paper_layout_carries_templates(paper_db):
    table, data = _raw(f"sqlite:{paper_db}")
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
    table, _ = _raw(f"sqlite:{db}")
    errors = table.column("parse_error").to_pylist()
    assert errors[0] is None and errors[1].startswith("options is not a JSON array")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "csv"])
def test_seven_column_files(tmp_path, fmt):
    path = tmp_path / f"q.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in SEVEN))
    elif fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(SEVEN), path)
    else:
        with open(path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(SEVEN[0]))
            writer.writeheader()
            writer.writerows({**r, "options": json.dumps(r["options"])} for r in SEVEN)
    table, _ = _raw(f"{fmt}:{path}")
    assert table.column("options").to_pylist() == [["Yes", "No"], ["x", "y", "z"]]
    assert table.column("answer").to_pylist() == ["A", "A, C"]


def test_hf_local_folder_in_futurex_layout(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    rows = [
        {"id": "a" * 24, "prompt": render_prompt("Will X?", ["Yes", "No"], "2024-03-01", "yes_no"),
         "ground_truth": ground_truth_literal("yes_no", ["Yes", "No"], "B"), "end_time": "2024-03-01", "level": 1, "title": "Will X?"},
        {"id": "b" * 24, "prompt": render_prompt("Which Y?", ["p", "q", "r"], "2024-04-01", "multiple_choice"),
         "ground_truth": "['A', 'C']", "end_time": "2024-04-01", "level": 2, "title": "Which Y?"},
        {"id": "c" * 24, "prompt": "open-ended level 3 item", "ground_truth": "5.25%", "end_time": "2024-04-01", "level": 3, "title": "?"},
    ]
    repo = tmp_path / "Futurex-Past"
    (repo / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), repo / "data" / "train-00000-of-00001.parquet")
    table, data = _raw(f"hf:{repo}")
    assert table.column("answer").to_pylist() == ["B", "A, C", None]
    assert table.column("level").to_pylist() == [1, 2, 3]
    assert data.metadata["timezone"] == "Asia/Shanghai"


@pytest.mark.parametrize(
    "uri, message",
    [
        ("nosuch:x", "unknown source"),
        ("parquet:/nonexistent/file.parquet", "no such file"),
        ("sqlite:/nonexistent.db", "no such file"),
        ("jsonl:", "needs a path"),
    ],
)
def test_unreadable_sources_name_the_cause(uri, message):
    with pytest.raises(SourceError, match=message):
        _raw(uri)


def test_malformed_jsonl_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(SEVEN[0]) + "\n{not json\n")
    with pytest.raises(SourceError, match="line 2"):
        _raw(f"jsonl:{path}")


def test_corrupt_parquet(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(SourceError, match="bad.parquet"):
        _raw(f"parquet:{path}")
