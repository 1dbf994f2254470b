"""Issue 11's fuzz: 10,000 hostile rows through every source adapter, built for real.

Each file is written by the other side's tools (``writers``) and built with ``oracleproto
build``. The outcome is one of two, never a traceback: one ``error:`` line (the file cannot
be read at all), or a complete build in which every raw row is exactly one of kept,
quarantined (with its rule) or collapsed, and the kept questions pass ``oracleproto
validate``. The same logical rows give the same questions whichever writer and Arrow layout
hold them. Rule counts are not pinned: the contract may gain rules; the invariants hold.
"""

from __future__ import annotations

import json
import traceback
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.config import Params
from oracleproto.corpus.audit import RULES, audit
from oracleproto.corpus.build import (
    AUDIT_REPORT,
    QUARANTINE,
    QUESTIONS,
    RAW_ROWS,
    audit_config,
    ingest,
    run_audit,
)
from oracleproto.io import read_parquet
from oracleproto.validation import validate_questions
from tests.corpus import fuzz
from tests.corpus.sources import writers
from tests.corpus.sources.helpers import read_raw

runner = CliRunner()


@pytest.fixture(scope="module")
def seven() -> list[dict[str, Any]]:
    return fuzz.seven_records()


@pytest.fixture(scope="module")
def futurex() -> list[dict[str, Any]]:
    return fuzz.futurex_records()


def build_outcome(uri: str, out: Path) -> dict[str, Any] | None:
    """Build ``uri`` into ``out`` with the CLI and check the outcome: None for one
    ``error:`` line, else the audit report of a build that lost no row."""
    result = runner.invoke(app, ["build", "--source", uri, "--out", str(out)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        pytest.fail(f"build of {uri} raised:\n{''.join(traceback.format_exception(result.exception))}")
    if result.exit_code != 0:
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.output
        assert "Traceback" not in result.output
        return None
    return checked_outputs(out)


def checked_outputs(out: Path) -> dict[str, Any]:
    """The audit report under ``out``, after checking that no row was lost: every raw row is
    kept, quarantined with a rule and a message, or collapsed; the kept questions are valid."""
    report = json.loads((out / AUDIT_REPORT).read_text())
    n_in, kept, quarantined, collapsed = (report[k] for k in ("rows_in", "rows_out", "rows_quarantined", "duplicates_collapsed"))
    assert n_in == kept + quarantined + collapsed, report
    assert read_parquet(out / RAW_ROWS, columns=["source_row"]).num_rows == n_in
    quarantine = read_parquet(out / QUARANTINE)
    assert quarantine.num_rows == quarantined
    rules = quarantine.column("rule").to_pylist()
    assert set(rules) <= set(RULES), set(rules) - set(RULES)
    assert pc.all(pc.greater(pc.utf8_length(quarantine.column("message")), 0)).as_py() in (True, None)
    rows = quarantine.column("source_row").to_pylist()
    assert len(set(rows)) == len(rows) and all(0 <= r < n_in for r in rows)
    questions = read_parquet(out / QUESTIONS)
    assert questions.num_rows == kept
    assert validate_questions(questions) == []
    assert pc.count_distinct(questions.column("id")).as_py() == kept
    return report


def audited(uri: str, out: Path) -> dict[str, Any]:
    """Ingest and audit ``uri`` (the library path of the build, without admission)."""
    params = Params().overridden({"ingest": {"source": uri}})
    ingest(params.ingest, out)
    run_audit(out, audit_config(params), out)
    return checked_outputs(out)


def built(uri: str, out: Path, rows: int) -> dict[str, Any]:
    """A build that must complete (the file is readable), holding ``rows`` raw rows."""
    report = build_outcome(uri, out)
    assert report is not None, f"{uri} was refused as a whole"
    assert report["rows_in"] == rows
    return report


def _kept_and_rejected(out: Path) -> tuple[pa.Table, list[tuple[int, str, str]]]:
    quarantine = read_parquet(out / QUARANTINE)
    return read_parquet(out / QUESTIONS), sorted(zip(*(quarantine.column(k).to_pylist() for k in ("source_row", "rule", "message"))))


# ------------------------------------------------------------------------------ seven columns
SEVEN_WRITERS = {
    "jsonl": (writers.write_jsonl, "jsonl", "q.jsonl"),
    "jsonl-utf8": (partial(writers.write_jsonl, ascii_only=False), "jsonl", "q.jsonl"),
    "pandas-csv": (writers.write_pandas_csv, "csv", "q.csv"),
    "csv-module": (writers.write_csv_module, "csv", "q.csv"),
    "pandas-parquet": (writers.write_pandas_parquet, "parquet", "q.parquet"),
    **{f"pyarrow-{layout}": (partial(writers.write_pyarrow_parquet, layout=layout), "parquet", "q.parquet") for layout in ("string", "large_string", "string_view", "dictionary")},
    "sqlite-paper": (writers.write_sqlite, "sqlite", "q.db"),
    "sqlite-untyped": (partial(writers.write_sqlite, typed=False), "sqlite", "q.db"),
    "hf-jsonl": (lambda records, folder: writers.write_hf_folder(records, folder, writers.write_jsonl, "jsonl"), "hf", "hub"),
    "hf-parquet": (lambda records, folder: writers.write_hf_folder(records, folder, partial(writers.write_pyarrow_parquet, layout="large_string"), "parquet"), "hf", "hub"),
}
# One fast fuzz per adapter stays in the default suite; the other writers are slow-marked.
FAST = {"jsonl", "csv-module", "pyarrow-string_view", "sqlite-untyped", "hf-jsonl"}


def _writer_params(names: dict[str, Any]) -> list[Any]:
    return [pytest.param(name, marks=() if name in FAST else pytest.mark.slow) for name in sorted(names)]


@pytest.mark.parametrize("writer", _writer_params(SEVEN_WRITERS))
def test_seven_column_fuzz_builds_without_losing_a_row(tmp_path, offline_hub, seven, writer):
    write, scheme, name = SEVEN_WRITERS[writer]
    rows = write(seven, tmp_path / name)
    report = built(f"{scheme}:{tmp_path / name}", tmp_path / "out", rows)
    # The fuzz is hostile and valid at once: both outcomes are present in quantity.
    assert report["rows_out"] > 1_000 and report["rows_quarantined"] > 1_000
    assert report["duplicates_collapsed"] > 0 and {"conflicting_duplicate_id", "duplicate_content"} <= set(report["by_rule"])


# ------------------------------------------------------------------------------ FutureX-Past
FUTUREX_WRITERS = {
    "jsonl": (writers.write_jsonl, "jsonl", "f.jsonl"),
    "pandas-csv": (writers.write_pandas_csv, "csv", "f.csv"),
    "pyarrow-large_string": (partial(writers.write_pyarrow_parquet, layout="large_string"), "parquet", "f.parquet"),
    "hf-parquet": (lambda records, folder: writers.write_hf_folder(records, folder, partial(writers.write_pyarrow_parquet, layout="string"), "parquet"), "hf", "hub"),
}
FUTUREX_FAST = {"jsonl", "pyarrow-large_string"}


@pytest.mark.parametrize("writer", [pytest.param(n, marks=() if n in FUTUREX_FAST else pytest.mark.slow) for n in sorted(FUTUREX_WRITERS)])
def test_futurex_fuzz_builds_without_losing_a_row(tmp_path, offline_hub, futurex, writer):
    write, scheme, name = FUTUREX_WRITERS[writer]
    rows = write(futurex, tmp_path / name)
    report = built(f"{scheme}:{tmp_path / name}", tmp_path / "out", rows)
    assert report["rows_out"] > 1_000 and report["by_rule"].get("unparseable", 0) > 500


# ------------------------------------------------------------------------------ same rows, same questions
LAYOUTS = ("string", "large_string", "string_view", "dictionary")


@pytest.mark.parametrize("shape", ["seven", pytest.param("futurex", marks=pytest.mark.slow)])
def test_every_parquet_layout_and_jsonl_give_the_same_questions(tmp_path, seven, futurex, shape):
    """The typed rows (what parquet can hold) as JSON lines, as pandas' parquet and as
    pyarrow's parquet in each string layout: the same questions, the same quarantine."""
    records = fuzz.tabular_records(seven if shape == "seven" else futurex)
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert audited(f"jsonl:{jsonl}", tmp_path / "jsonl")["rows_in"] == len(records)
    expected = _kept_and_rejected(tmp_path / "jsonl")
    assert expected[0].num_rows > 1_000
    files = {f"pyarrow-{layout}": partial(writers.write_pyarrow_parquet, layout=layout) for layout in LAYOUTS}
    files["pandas"] = writers.write_pandas_parquet
    for name, write in files.items():
        path = tmp_path / f"{name}.parquet"
        rows = write(records, path)
        assert audited(f"parquet:{path}", tmp_path / name)["rows_in"] == rows
        kept, rejected = _kept_and_rejected(tmp_path / name)
        assert kept.equals(expected[0]), name
        assert rejected == expected[1], name


# ------------------------------------------------------------------------------ column types
def _hostile_columns(n: int) -> dict[str, pa.Array]:
    """Arrow columns of every kind a parquet file may hold where a field is expected."""
    i = list(range(n))
    text = [f"v{k}" if k % 7 else None for k in i]
    return {
        "int64": pa.array([k - n // 2 for k in i], pa.int64()),
        "uint64": pa.array([2**64 - 1 - k for k in i], pa.uint64()),
        "float64": pa.array([[2.0, 2.5, float("nan"), float("inf"), -float("inf"), 1e300, None][k % 7] for k in i], pa.float64()),
        "float16": pa.array([[1.0, 2.0, float("nan"), None][k % 4] for k in i], pa.float64()).cast(pa.float16()),
        "decimal": pa.array([None if k % 5 == 0 else k / 4 for k in i]).cast(pa.decimal128(12, 2)),
        "bool": pa.array([k % 3 == 0 if k % 4 else None for k in i], pa.bool_()),
        "date32": pa.array([[-800_000, 0, 19_800, 2_900_000, None][k % 5] for k in i], pa.int32()).cast(pa.date32()),
        "date64": pa.array([[-(2**60), 0, 1_700_000_000_000, 2**60, None][k % 5] for k in i], pa.int64()).cast(pa.date64()),
        "timestamp-s": pa.array([[-(2**52), 0, 1_700_000_000, 2**52, None][k % 5] for k in i], pa.int64()).cast(pa.timestamp("s")),
        "timestamp-ms-tz": pa.array([[0, 1_700_000_000_000, 2**62, None][k % 4] for k in i], pa.int64()).cast(pa.timestamp("ms", tz="Asia/Shanghai")),
        "timestamp-ns": pa.array([[0, 1_700_000_000 * 10**9, None][k % 3] for k in i], pa.int64()).cast(pa.timestamp("ns")),
        "time32": pa.array([k % 86_400 for k in i], pa.int32()).cast(pa.time32("s")),
        "duration": pa.array(i, pa.int64()).cast(pa.duration("s")),
        "binary": pa.array([None if k % 9 == 0 else (b"\xff" if k % 5 == 0 else f"b{k}".encode()) for k in i], pa.binary()),
        "large_binary": pa.array([f"b{k}".encode() for k in i], pa.large_binary()),
        "fixed_size_binary": pa.array([b"%04d" % (k % 10_000) for k in i], pa.binary(4)),
        "string_view": pa.array(text, pa.string_view()),
        "dictionary-int8": pa.array([f"d{k % 5}" for k in i]).dictionary_encode().cast(pa.dictionary(pa.int8(), pa.string())),
        "null": pa.nulls(n),
        "list<int64>": pa.array([[k, k + 1] if k % 3 else None for k in i], pa.list_(pa.int64())),
        "list<list<string>>": pa.array([[["a"], ["b", None]] for _ in i], pa.list_(pa.list_(pa.string()))),
        "large_list<large_string>": pa.array([["Yes", "No"] if k % 4 else [] for k in i], pa.large_list(pa.large_string())),
        "fixed_size_list<string>": pa.array([["p", None] for _ in i], pa.list_(pa.string(), 2)),
        "list<dictionary>": pa.array([["x", "y"] for _ in i], pa.list_(pa.string())).cast(pa.list_(pa.dictionary(pa.int32(), pa.string()))),
        "list<binary>": pa.array([[b"ok", b"\xfe"] if k % 2 else [b"a", b"b"] for k in i], pa.list_(pa.binary())),
        "struct": pa.array([{"a": f"s{k}", "b": k} for k in i], pa.struct([("a", pa.string()), ("b", pa.int64())])),
        "map": pa.array([[("k", f"m{k}")] for k in i], pa.map_(pa.string(), pa.string())),
        "deep": pa.array([fuzz.deep_json(20) for _ in i]),
    }


HOSTILE_COLUMNS = sorted(_hostile_columns(1))


@pytest.mark.parametrize("shape", ["seven", "futurex"])
def test_every_arrow_type_in_every_field_is_read_or_flagged_per_row(tmp_path, seven, futurex, shape):
    """Each field of a parquet file in each Arrow type a writer may use: the file builds,
    and no row is lost (a type the field cannot take flags the rows that hold a value)."""
    n = 300
    base = writers.typed_table((seven if shape == "seven" else futurex)[:n])
    columns = _hostile_columns(n)
    fields = [name for name in base.column_names if name not in ("note", "title")]
    for field in fields:
        for kind in HOSTILE_COLUMNS:
            table = base.set_column(base.schema.get_field_index(field), field, columns[kind])
            path = tmp_path / f"{field}-{kind}.parquet"
            pq.write_table(table, path)
            raw, _ = read_raw(f"parquet:{path}")
            assert raw.num_rows == n, (field, kind)
            result = audit(raw, audit_config(Params()))
            report = result.report
            assert report["rows_in"] == report["rows_out"] + report["rows_quarantined"] + report["duplicates_collapsed"]
            assert set(result.quarantine.column("rule").to_pylist()) <= set(RULES)
            assert validate_questions(result.questions) == [], (field, kind)


# ------------------------------------------------------------------------------ ForecastBench
def test_forecastbench_fuzz_builds_without_losing_a_row(tmp_path):
    question_set, resolution_set = fuzz.forecastbench_sets()
    root = tmp_path / "fb"
    (root / "question_sets").mkdir(parents=True)
    (root / "resolution_sets").mkdir()
    (root / "question_sets" / question_set["question_set"]).write_text(json.dumps(question_set))
    (root / "resolution_sets" / "2025-10-26_resolution_set.json").write_text(json.dumps(resolution_set))
    report = built(f"forecastbench:{root}", tmp_path / "out", len(resolution_set["resolutions"]))
    assert report["rows_out"] > 100 and report["rows_quarantined"] > 1_000


# ------------------------------------------------------------------------------ damaged files
@pytest.mark.parametrize("writer", ["jsonl", "csv-module", "pandas-csv", "pyarrow-string", "sqlite-paper"])
@pytest.mark.parametrize("damage", ["truncated", "garbage-tail", "garbage"])
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # no traceback on stderr either
def test_a_damaged_file_is_one_error_or_rows_with_reasons(tmp_path, seven, writer, damage):
    """A file cut short or overwritten (a failed copy, a disk error): one ``error:`` line
    when nothing can be read, else a build that loses no row it could read."""
    write, scheme, name = SEVEN_WRITERS[writer]
    path = tmp_path / name
    write(seven[:500], path)
    data = path.read_bytes()
    cut = {"truncated": data[: len(data) // 2], "garbage-tail": data[: len(data) // 2] + bytes(range(256)) * 4, "garbage": bytes(range(256)) * 64}
    path.write_bytes(cut[damage])
    build_outcome(f"{scheme}:{path}", tmp_path / "out")
