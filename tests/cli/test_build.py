import json
import time

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from tests.test_config import MISSPELT

runner = CliRunner()


def test_build_prints_counts_and_writes_layout(paper_db, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "--source", f"sqlite:{paper_db}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "80 rows in → 80 questions, 0 quarantined" in result.output
    assert json.loads((out / "audit" / "report.json").read_text())["rows_out"] == 80
    assert (out / "splits" / "cutoff-2026-02-25" / "train.parquet").exists()


def test_unreadable_source_is_one_line_and_nonzero(tmp_path):
    result = runner.invoke(app, ["build", "--source", "parquet:/no/such.parquet", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["error: cannot read source /no/such.parquet: no such file"]
    assert not (tmp_path / "o" / "questions.parquet").exists()


@pytest.mark.parametrize(("data", "message"), MISSPELT)
def test_a_misspelt_key_in_any_section_stops_the_build(tmp_path, data, message):
    params = tmp_path / "params.yaml"
    params.write_text(json.dumps(data))  # JSON is YAML
    result = runner.invoke(app, ["build", "--out", str(tmp_path / "o"), "--params", str(params)])
    assert result.exit_code == 1 and result.output.splitlines() == [f"error: {message}"]
    assert not (tmp_path / "o").exists()


def test_source_flag_overrides_the_params(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("ingest:\n  source: parquet:/no/such.parquet\n")
    result = runner.invoke(app, ["build", "--out", str(tmp_path / "o"), "--params", str(params)])
    assert result.output.splitlines() == ["error: cannot read source /no/such.parquet: no such file"]
    result = runner.invoke(app, ["build", "--source", "csv:/no/such.csv", "--out", str(tmp_path / "o"), "--params", str(params)])
    assert result.output.splitlines() == ["error: cannot read source /no/such.csv: no such file"]


def test_validate_reports_failure_cases(tmp_path):
    bad = tmp_path / "bad.jsonl"
    rows = [
        {"id": "a", "choice_type": "single", "question_type": "yes_no", "event": "Will x?", "options": ["Yes", "No"], "answer": "A", "end_time": "2024-01-01"},
        {"id": "b", "choice_type": "single", "question_type": "multiple_choice", "event": "Which?", "options": ["p", "q", "r"], "answer": "Q", "end_time": "2024-01-01"},
    ]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 1
    assert "row 1 (id 'b') column 'answer': failed answer_out_of_range value 'Q'" in result.output


def test_validate_names_a_date_that_does_not_exist(tmp_path):
    bad = tmp_path / "dates.jsonl"
    row = {"id": "feb", "choice_type": "single", "question_type": "yes_no", "event": "Will x?", "options": ["Yes", "No"], "answer": "A"}
    bad.write_text(json.dumps({**row, "end_time": "2025-02-30"}) + "\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 1
    assert "row 0 (id 'feb') column 'end_time': failed bad_end_time value '2025-02-30'" in result.output


def test_help_has_examples():
    result = runner.invoke(app, ["build", "--help"])
    assert "oracleproto build --source sample --out out/" in result.output


def _question(i, **changes):
    row = {"id": f"q{i}", "choice_type": "single", "question_type": "yes_no", "event": f"Will thing {i} happen?", "options": ["Yes", "No"], "answer": "A", "end_time": "2024-05-01"}
    return {**row, **changes}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("end_time", ["0000-01-01", "0001-01-01", "1899-12-31", "2101-01-01", "9999-12-31"])
def test_validate_refuses_an_implausible_end_time(tmp_path, end_time):
    result = runner.invoke(app, ["validate", str(_jsonl(tmp_path / "q.jsonl", [_question(1, end_time=end_time), _question(2)]))])
    assert result.exit_code == 1
    assert f"row 0 (id 'q1') column 'end_time': failed end_time_out_of_range value '{end_time}'" in result.output


def test_validate_reads_the_end_time_range_from_the_params(tmp_path):
    questions = _jsonl(tmp_path / "q.jsonl", [_question(1, end_time="1850-01-01")])
    assert runner.invoke(app, ["validate", str(questions)]).exit_code == 1
    params = tmp_path / "params.yaml"
    params.write_text("audit:\n  end_time_min: 1800-01-01\n")
    result = runner.invoke(app, ["validate", str(questions), "--params", str(params)])
    assert result.exit_code == 0 and result.output.strip().endswith("1 rows valid")


def test_validate_output_is_bounded_whatever_the_rows_share(tmp_path):
    n = 4000
    rows = [_question(0, end_time="0000-01-01", choice_type="bogus") for _ in range(n)]  # one id, one bad date, one bad type
    started = time.perf_counter()
    result = runner.invoke(app, ["validate", str(_jsonl(tmp_path / "q.jsonl", rows))])
    assert time.perf_counter() - started < 10
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) <= 30, result.output  # was one line per failure (and ~n² before that)
    assert "end_time_out_of_range (column 'end_time'): 4000 failure(s)" in lines
    assert "duplicate_id (column 'id'): 3999 failure(s)" in lines
    assert "  … and 3995 more" in lines
    assert lines[-1] == f"error: {tmp_path / 'q.jsonl'}: {3 * n - 1} failure(s) in {n} rows"


def test_build_quarantines_dates_it_cannot_use_and_lists_collapsed_copies(tmp_path):
    rows = [_question(1, end_time="0000-01-01"), _question(2, end_time="0001-01-01"), _question(3), _question(3), _question(4, event="\u200b")]
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "--source", f"jsonl:{_jsonl(tmp_path / 'q.jsonl', rows)}", "--out", str(out)])
    assert result.exit_code == 0, result.output  # was an OverflowError traceback
    assert "5 rows in → 1 questions, 3 quarantined, 1 duplicates collapsed" in result.output
    quarantine = pq.read_table(out / "audit" / "quarantine.parquet").select(["source_row", "rule"]).to_pylist()
    assert quarantine == [
        {"source_row": 0, "rule": "end_time_out_of_range"}, {"source_row": 1, "rule": "end_time_out_of_range"},
        {"source_row": 4, "rule": "invisible_event"},
    ]
    collapsed = pq.read_table(out / "audit" / "collapsed.parquet").to_pylist()
    assert collapsed == [{"source_row": 3, "id": "q3", "into_source_row": 2, "into": "kept", "into_rule": None}]
