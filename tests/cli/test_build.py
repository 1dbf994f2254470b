import json

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
