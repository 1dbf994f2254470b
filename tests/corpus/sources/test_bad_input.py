"""Bad input never crashes: a file that cannot be read at all is one InputError naming the
file and the problem; a row that cannot be read is a raw row with its reason, which the
audit quarantines — that row only."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.config import Ingest
from oracleproto.corpus.audit import AuditConfig
from oracleproto.corpus.build import QUARANTINE, ingest, run_audit
from oracleproto.errors import InputError
from oracleproto.io import read_parquet
from tests.corpus.sources.helpers import FUTUREX, SEVEN, read_raw, reasons, write_jsonl

LINE = json.dumps(SEVEN[0]) + "\n"


def _jsonl(tmp_path, lines: list[str | bytes], name="q.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    return path


def _ingest_and_audit(uri: str, out) -> tuple[dict, list[dict]]:
    ingest(Ingest(source=uri), out)
    report = run_audit(out, AuditConfig(levels=None, post_resolution_phrases=(), outcome_markers=()), out)
    return report, read_parquet(out / QUARANTINE).select(["source_row", "rule", "message"]).to_pylist()


# ------------------------------------------------------------------------- whole-file errors
@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "holds no rows"),
        (b"\n\n  \n\r\n", "holds no rows"),
        (b"{}\n{}\n", "no line holds a JSON object with fields"),
        ("{\"event\": \"caf\xe9\"}\n".encode("latin-1"), "no line holds a JSON object with fields \\(line 1 is not UTF-8"),
    ],
)
def test_jsonl_with_nothing_readable_is_one_error(tmp_path, content, message):
    path = _jsonl(tmp_path, [content], name="empty.jsonl")
    with pytest.raises(InputError, match=f"empty.jsonl.*{message}"):
        ingest(Ingest(source=f"jsonl:{path}"), tmp_path / "out")
    assert not (tmp_path / "out" / "raw" / "rows.parquet").exists()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_column_named_twice_is_one_error(tmp_path, fmt):
    path = tmp_path / f"dup.{fmt}"
    if fmt == "csv":
        path.write_text("id,event,event\nq1,a,b\n")
    else:
        pq.write_table(pa.Table.from_arrays([pa.array(["q1"]), pa.array(["a"]), pa.array(["b"])], names=["id", "event", "event"]), path)
    with pytest.raises(InputError, match=f"dup.{fmt}.*'event' appear more than once"):
        read_raw(f"{fmt}:{path}")


@pytest.mark.parametrize("content, message", [(b"", "empty"), (b"\xff\xfeid,event\n", "header row is not readable")])
def test_csv_without_a_readable_header_is_one_error(tmp_path, content, message):
    path = tmp_path / "h.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=f"h.csv.*{message}"):
        read_raw(f"csv:{path}")


# ------------------------------------------------------------------------- per-row reasons
def test_jsonl_rows_that_cannot_be_read_are_flagged_alone(tmp_path):
    other = {**SEVEN[1], "id": "q3"}
    path = _jsonl(tmp_path, [
        LINE,
        "\n",  # blank lines are skipped, not rows
        "{not json\n",
        "[1, 2]\n",
        "caf\xe9\n".encode("latin-1"),
        "[" * 100_000 + "]" * 100_000 + "\n",
        json.dumps({**other, "event": ["a", "list"]}) + "\n",
        json.dumps({**other, "options": "not json"}) + "\n",
        json.dumps({**other, "answer": {"an": "object"}}) + "\n",
        json.dumps({**other, "level": "two"}) + "\n",
        json.dumps(other) + "\n",
    ])
    table, _ = read_raw(f"jsonl:{path}")
    got = reasons(table)
    assert got[0] is None and got[-1] is None
    assert got[1].startswith("line 3 is not JSON (Expecting property name")
    assert got[2] == "line 4 is not a JSON object but list"
    assert got[3] == "line 5 is not UTF-8 text (byte 3)"
    assert got[4] == "line 6 is JSON nested too deeply to read"
    assert got[5] == "event is a list, not text"
    assert got[6].startswith("options is not a JSON array")
    assert got[7] == "answer is an object, not text"
    assert got[8] == "level is not an integer (two)"
    assert table.column("event").to_pylist()[-1] == "Which B?"


def test_flagged_rows_are_quarantined_with_their_reason(tmp_path):
    path = _jsonl(tmp_path, [LINE, "{not json\n", json.dumps({**SEVEN[1], "event": {"x": 1}}) + "\n"])
    report, quarantine = _ingest_and_audit(f"jsonl:{path}", tmp_path / "out")
    assert (report["rows_in"], report["rows_out"]) == (3, 1)
    assert [(q["source_row"], q["rule"]) for q in quarantine] == [(1, "unparseable"), (2, "unparseable")]
    assert quarantine[1]["message"] == "raw: event is an object, not text"


def test_futurex_rows_with_wrong_types_are_flagged_alone(tmp_path):
    rows = [dict(r) for r in FUTUREX[:3]]
    rows[1]["prompt"] = {"not": "text"}
    rows[2]["level"] = [2]
    table, _ = read_raw(f"jsonl:{write_jsonl(tmp_path / 'f.jsonl', rows)}")
    assert reasons(table) == [None, "prompt is an object, not text", "level is a list, not an integer"]


def test_a_deeply_nested_extra_column_is_kept_as_json_text(tmp_path):
    deep = json.loads("[" * 60 + "1" + "]" * 60)  # parquet cannot read a schema nested this deep
    path = write_jsonl(tmp_path / "deep.jsonl", [{**SEVEN[0], "extra": deep}])
    report, _ = _ingest_and_audit(f"jsonl:{path}", tmp_path / "out")
    assert report["rows_out"] == 1
    original = read_parquet(tmp_path / "out" / "raw" / "rows.parquet").column("original").to_pylist()[0]
    assert json.loads(original["extra"]) == deep


def test_csv_level_cells(tmp_path):
    path = tmp_path / "levels.csv"
    header = "id,choice_type,question_type,event,options,answer,end_time,level\n"
    body = "".join(f'q{i},single,yes_no,Will {i}?,"[""Yes"", ""No""]",A,2024-01-01,{level}\n' for i, level in enumerate(["1", "", " 2 ", "two", "2.0", "1.5"]))
    path.write_text(header + body)
    table, _ = read_raw(f"csv:{path}")
    assert table.column("level").to_pylist() == [1, None, 2, None, 2, None]
    assert reasons(table) == [None, None, None, "level is not an integer (two)", None, "level is not an integer (1.5)"]


def test_csv_cell_over_a_megabyte_and_misshapen_rows(tmp_path):
    big = ("a long line of background text\n" * 50_000).strip()  # ≈1.5 MB with newlines
    path = tmp_path / "big.csv"
    path.write_text(
        "id,choice_type,question_type,event,options,answer,end_time\n"
        f'q1,single,yes_no,"{big}","[""Yes"", ""No""]",A,2024-01-01\n'
        "q2,single,yes_no,Will?,x,A,2024-01-01,one too many\n"
        'q3,single,yes_no,Will?,"[""Yes"", ""No""]",B,2024-01-02\n'
    )
    table, _ = read_raw(f"csv:{path}")
    assert len(table.column("event").to_pylist()[0]) == len(big)
    assert table.column("id").to_pylist() == ["q1", "q3", None]
    assert reasons(table)[:2] == [None, None]
    assert reasons(table)[2].startswith("a row has 8 fields where the header has 7: 'q2,single")


def test_csv_rows_that_are_not_utf8_are_flagged_alone(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(
        b'id,choice_type,question_type,event,options,answer,end_time\n'
        b'q1,single,yes_no,Will A?,"[""Yes"", ""No""]",A,2024-01-01\n'
        b'q2,single,yes_no,Will caf\xe9?,"[""Yes"", ""No""]",A,2024-01-01\n'
    )
    table, _ = read_raw(f"csv:{path}")
    assert reasons(table) == [None, "event is not UTF-8 text (byte 8)"]


def test_parquet_binary_column_with_invalid_utf8(tmp_path):
    rows = pa.Table.from_pylist(FUTUREX[:2])
    prompts = pa.array([FUTUREX[0]["prompt"].encode(), b"\xff" + FUTUREX[1]["prompt"].encode()], pa.binary())
    rows = rows.set_column(rows.schema.get_field_index("prompt"), "prompt", prompts)
    pq.write_table(rows, tmp_path / "b.parquet")
    table, _ = read_raw(f"parquet:{tmp_path / 'b.parquet'}")
    assert reasons(table) == [None, "prompt is not UTF-8 text (byte 0)"]
    assert table.column("answer").to_pylist()[0] == "B"


def test_a_lone_surrogate_is_flagged_and_kept_escaped(tmp_path):
    # JSON may escape a lone surrogate ("\ud800"); UTF-8 cannot hold one.
    path = _jsonl(tmp_path, [LINE.replace("Will A?", "Will \\ud800?"), json.dumps(SEVEN[1]).replace("}", ', "note": "\\udc00"}') + "\n"])
    table, _ = read_raw(f"jsonl:{path}")
    assert reasons(table) == ["event is not valid Unicode text", None]
    assert table.column("original").to_pylist()[1]["note"] == '"\\udc00"'


# ------------------------------------------------------------------------- found by the fuzz (test_fuzz.py)
def test_options_json_text_with_an_escaped_lone_surrogate_is_flagged(tmp_path):
    other = {**SEVEN[1], "id": "q3"}
    path = _jsonl(tmp_path, [LINE, json.dumps({**other, "options": '["x", "\\ud800"]'}) + "\n"])
    table, _ = read_raw(f"jsonl:{path}")
    assert reasons(table) == [None, "options holds a label that is not valid Unicode text"]


def test_nan_is_missing_and_infinity_is_flagged_where_text_belongs(tmp_path):
    """JSON's NaN (and a float column's NaN, pandas' missing value) is no value; an infinity
    is no text. Neither becomes the text "NaN" or "inf"."""
    rows = [{**SEVEN[0], "id": f"q{i}", "event": value} for i, value in enumerate([float("nan"), float("inf"), "Will A?"])]
    path = write_jsonl(tmp_path / "n.jsonl", [{**r, "event": r["event"]} for r in rows])
    table, _ = read_raw(f"jsonl:{path}")
    assert table.column("event").to_pylist()[0] is None and table.column("event").to_pylist()[2] == "Will A?"
    assert reasons(table) == [None, "event is not a finite number", None]
    floats = pa.table({**{k: [v] * 3 for k, v in SEVEN[0].items() if k != "event"}, "event": pa.array([float("nan"), float("inf"), 2.5])})
    pq.write_table(floats, tmp_path / "f.parquet")
    table, _ = read_raw(f"parquet:{tmp_path / 'f.parquet'}")
    assert table.column("event").to_pylist() == [None, None, "2.5"]
    assert reasons(table) == [None, "event is not a finite number", None]


def test_timestamps_outside_the_calendar_years_are_flagged_not_wrapped(tmp_path):
    """Arrow's cast wraps a timestamp past the year 9999 round to some other date."""
    seconds = pa.array([1_700_000_000, 2**52, -(2**52), None], pa.int64())
    columns = {k: [v] * 4 for k, v in SEVEN[0].items() if k != "end_time"}
    for typ in (pa.timestamp("s"), pa.timestamp("ms", tz="Asia/Shanghai")):
        values = seconds.cast(pa.timestamp("s")).cast(typ) if typ.unit == "s" else pa.array([1_700_000_000_000, 2**62, -(2**62), None], pa.int64()).cast(typ)
        pq.write_table(pa.table({**columns, "end_time": values}), tmp_path / "t.parquet")
        table, _ = read_raw(f"parquet:{tmp_path / 't.parquet'}")
        assert table.column("end_time").to_pylist() == [("2023-11-14" if typ.unit == "s" else "2023-11-15"), None, None, None]
        assert reasons(table) == [None, "end_time is a date outside the years 1-9999", "end_time is a date outside the years 1-9999", None]


def test_a_half_float_level_is_read(tmp_path):
    level = pa.array([1.0, 2.5, float("nan")], pa.float64()).cast(pa.float16())
    pq.write_table(pa.table({**{k: [v] * 3 for k, v in SEVEN[0].items()}, "level": level}), tmp_path / "h.parquet")
    table, _ = read_raw(f"parquet:{tmp_path / 'h.parquet'}")
    assert table.column("level").to_pylist() == [1, None, None]
    assert reasons(table) == [None, "level is not an integer", None]


def test_options_as_dictionary_text_over_several_row_groups(tmp_path):
    """Each row group has its own dictionary; pyarrow cannot join a list of them in one batch."""
    rows = [{**SEVEN[1], "id": f"q{i}", "event": f"Which {i}?", "options": [f"x{i}", f"y{i}", f"z{i}"]} for i in range(40)]
    table = pa.Table.from_pylist(rows)
    options = table.column("options").cast(pa.list_(pa.dictionary(pa.int32(), pa.string())))
    pq.write_table(table.set_column(table.schema.get_field_index("options"), "options", options), tmp_path / "d.parquet", row_group_size=10)
    raw, _ = read_raw(f"parquet:{tmp_path / 'd.parquet'}")
    assert raw.column("options").to_pylist() == [r["options"] for r in rows]


def test_a_quarantined_record_with_a_date_python_cannot_hold_keeps_it_as_text(tmp_path):
    days = pa.array([19_800, -800_000], pa.int32()).cast(pa.date32())  # 2024-03-18 and the year -221
    rows = {k: [v, v] for k, v in SEVEN[0].items()}
    rows["id"] = ["q1", "q2"]
    rows["answer"] = ["A", "Q"]  # the second row is quarantined, its original record kept
    pq.write_table(pa.table({**rows, "noted_on": days}), tmp_path / "y.parquet")
    report, quarantine = _ingest_and_audit(f"parquet:{tmp_path / 'y.parquet'}", tmp_path / "out")
    assert report["rows_out"] == 1 and [q["source_row"] for q in quarantine] == [1]
    raw = json.loads(read_parquet(tmp_path / "out" / QUARANTINE).column("raw").to_pylist()[0])
    assert raw["noted_on"] == "-0221-09-04"
