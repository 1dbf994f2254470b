"""The canonical writers: fixed float precision, files that follow the umask."""

import json
import os
import stat

import pyarrow as pa

from oracleproto.io import (
    artifact_float,
    json_text,
    round_float_columns,
    write_csv,
    write_json,
)


def test_json_floats_are_written_at_nine_decimals_and_never_negative_zero():
    text = json_text({"a": 1 / 3, "noise": -1.1097655078353474e-10, "n": 3, "none": None, "nested": [2 / 3]})
    assert json.loads(text) == {"a": 0.333333333, "noise": 0.0, "n": 3, "none": None, "nested": [0.666666667]}
    assert "-0.0" not in text


def test_csv_floats_are_written_at_nine_decimals(tmp_path):
    path = write_csv(("x", "y"), [(0.1 + 0.2, "text"), (7, "")], tmp_path / "t.csv")
    assert path.read_text() == "x,y\n0.3,text\n7,\n"


def test_two_floats_that_differ_in_the_last_bits_write_the_same_bytes():
    a, b = 0.30000000000000004, 0.3
    assert a != b and artifact_float(a) == artifact_float(b)


def test_parquet_float_columns_are_rounded():
    table = round_float_columns(pa.table({"f": [1 / 3, -1e-12, None], "i": [1, 2, 3]}))
    assert table.column("f").to_pylist() == [0.333333333, 0.0, None]
    assert table.column("i").to_pylist() == [1, 2, 3]


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_json({"a": 1}, tmp_path / "x.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
