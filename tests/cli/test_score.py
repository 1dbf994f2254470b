import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from oracleproto.cli import app
from tests.scoring.synthetic import random_rows

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def write_trials(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_score_parquet_writes_every_artifact(tmp_path):
    trials = write_trials(tmp_path / "trials.parquet", random_rows(1, beliefs=True))
    out = tmp_path / "metrics"
    result = runner.invoke(app, ["score", "--trials", str(trials), "--out", str(out), "--bootstrap", "100", "--seed", "7"])
    assert result.exit_code == 0, result.output
    assert "model-0: composite_accuracy" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary) == ["model-0", "model-1", "model-2"]
    assert summary["model-0"]["brier_index"] is not None  # belief column present
    assert summary["model-0"]["composite_accuracy_ci_low"] is not None
    for name in ("buckets.csv", "buckets.md", "questions.parquet", "pairwise.csv", "leaderboard.md", "difficulty.csv", "plots/cost_accuracy.csv"):
        assert (out / name).exists(), name


def test_score_jsonl_with_weights_and_no_bootstrap(tmp_path):
    rows = [row for row in random_rows(2) if row["question_type"] == "yes_no"]
    trials = write_trials(tmp_path / "trials.jsonl", rows)
    out = tmp_path / "m"
    result = runner.invoke(app, ["score", "--trials", str(trials), "--out", str(out), "--weights", "yes_no=1", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    for metrics in summary.values():
        assert metrics["composite_accuracy"] == metrics["exam_yes_no"]
        assert metrics["pass1_avg_ci_low"] is None


def test_malformed_table_is_one_clear_error(tmp_path):
    rows = random_rows(3)
    rows.append(dict(rows[0]))  # a duplicated (model, q_id, trial)
    trials = write_trials(tmp_path / "trials.jsonl", rows)
    result = runner.invoke(app, ["score", "--trials", str(trials), "--out", str(tmp_path / "m")])
    assert result.exit_code == 1
    assert "breaks rule unique_trial" in result.output and f"q_id={rows[0]['q_id']!r}" in result.output
    assert not (tmp_path / "m" / "summary.json").exists()


def test_bad_options_and_missing_files(tmp_path):
    trials = write_trials(tmp_path / "trials.jsonl", random_rows(4))
    result = runner.invoke(app, ["score", "--trials", str(trials), "--out", str(tmp_path / "m"), "--weights", "open=1"])
    assert result.output == "error: score.weights.open: unknown key (known: yes_no, binary_named, mc)\n" and result.exit_code == 1
    result = runner.invoke(app, ["score", "--trials", str(tmp_path / "none.parquet"), "--out", str(tmp_path / "m")])
    assert result.exit_code == 1 and "cannot read parquet" in result.output
    result = runner.invoke(app, ["score", "--trials", str(trials), "--out", str(tmp_path / "m"), "--fallback-belief", "2"])
    assert result.exit_code == 1 and "error: score.fallback_belief: must be a number < 1, got 2.0" in result.output


def test_flags_override_the_params_file(tmp_path):
    trials = write_trials(tmp_path / "trials.jsonl", random_rows(2))
    params = tmp_path / "params.yaml"
    params.write_text("score:\n  bootstrap: 0\n  seed: 5\n")
    args = ["score", "--trials", str(trials), "--params", str(params)]
    assert runner.invoke(app, [*args, "--out", str(tmp_path / "file")]).exit_code == 0
    assert "Bootstrap disabled" in (tmp_path / "file" / "leaderboard.md").read_text()
    assert runner.invoke(app, [*args, "--out", str(tmp_path / "flag"), "--bootstrap", "40"]).exit_code == 0
    assert "B = 40, seed 5" in (tmp_path / "flag" / "leaderboard.md").read_text()
    params.write_text("score:\n  bootstrapp: 0\n")
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "bad")])
    assert result.output == "error: score.bootstrapp: unknown key (did you mean bootstrap?)\n" and result.exit_code == 1


def test_dvc_stage_module_reads_params(tmp_path):
    (tmp_path / "data" / "eval").mkdir(parents=True)
    write_trials(tmp_path / "data" / "eval" / "trials.parquet", random_rows(5))
    (tmp_path / "params.yaml").write_text("score:\n  weights: {yes_no: 0.5, binary_named: 0.0, mc: 0.5}\n  bootstrap: 50\n  seed: 3\n  fallback_belief: 0.05\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "oracleproto.stages.score"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "metrics" / "summary.json").read_text())
    assert all(m["fallback_share"] is not None and m["fss_ci_low"] is not None for m in summary.values())
    (tmp_path / "params.yaml").unlink()  # absent params: the defaults
    done = subprocess.run([sys.executable, "-m", "oracleproto.stages.score"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "B = 5000, seed 0" in (tmp_path / "metrics" / "leaderboard.md").read_text()
