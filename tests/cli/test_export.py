import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from tests.export.test_trajectories import (
    questions_table,
    trial,
    trials_table,
    write_splits,
)

runner = CliRunner()


@pytest.fixture
def run_inputs(tmp_path):
    trials = trials_table([trial("m1", "q1", 1, "A"), trial("m1", "q1", 2, "B"), trial("m1", "q2", 1, "A")])
    pq.write_table(trials, tmp_path / "trials.parquet")
    write_splits(tmp_path, {"cutoff-2025-09-29": questions_table()})
    (tmp_path / "params.yaml").write_text("export:\n  sft_mode: correct\n")
    return tmp_path


def invoke(root, *extra):
    args = ["export", "--trials", str(root / "trials.parquet"), "--splits", str(root / "splits"), "--out", str(root / "out")]
    return runner.invoke(app, [*args, "--params", str(root / "params.yaml"), *extra])


def test_export_writes_the_files_and_says_what_it_kept(run_inputs):
    result = invoke(run_inputs)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "sft (correct): 1 train + 0 test rows from 3 trials (3 parsed with a trace; 0 flagged; skipped: none)"
    assert lines[1] == "rl (with the web_search tool): 2 train + 0 test rows over 1 cutoffs"
    summary = json.loads((run_inputs / "out" / "summary.json").read_text())
    assert summary["sft"]["rows_by_model"] == {"m1": 1}
    assert pq.read_table(run_inputs / "out" / "rl" / "train.parquet").num_rows == 2


def test_mode_flag_overrides_the_params(run_inputs):
    result = invoke(run_inputs, "--mode", "all")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("sft (all): 3 train + 0 test rows from 3 trials")


def assert_one_line_error(result, message):
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    assert message in result.output


def test_unknown_mode_is_an_error(run_inputs):
    assert_one_line_error(invoke(run_inputs, "--mode", "some"), "error: export.sft_mode: must be one of 'correct', 'all' or 'best_of_n', got 'some'")


def test_missing_trial_table_is_an_error(run_inputs):
    (run_inputs / "trials.parquet").unlink()
    assert_one_line_error(invoke(run_inputs), f"error: cannot read parquet {run_inputs / 'trials.parquet'}")


def test_bad_export_params_are_an_error(run_inputs):
    (run_inputs / "params.yaml").write_text("export:\n  sft_mode: most\n")
    assert_one_line_error(invoke(run_inputs), "error: export.sft_mode: must be one of 'correct', 'all' or 'best_of_n', got 'most'")


def test_a_folder_without_split_sets_is_an_error(run_inputs):
    (run_inputs / "empty").mkdir()
    result = runner.invoke(app, ["export", "--trials", str(run_inputs / "trials.parquet"), "--splits", str(run_inputs / "empty"),
                                 "--out", str(run_inputs / "out"), "--params", str(run_inputs / "params.yaml")])  # fmt: skip
    assert_one_line_error(result, "no cutoff-YYYY-MM-DD split set (run the admit stage first)")
