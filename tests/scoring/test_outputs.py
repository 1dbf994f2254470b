"""The artifacts written by the scorer: content, layout and byte-identical reruns."""

import csv
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.scoring.registry import METRICS
from oracleproto.scoring.scorer import (
    difficulty_tertile,
    leaderboard_markdown,
    pareto_frontier,
    score_table,
    write_outputs,
)
from oracleproto.scoring.statistics import HEADLINES
from tests.scoring.synthetic import random_rows, to_table
from tests.scoring.test_metrics_by_hand import YES_NO, mc, trials

EXPECTED_FILES = {
    "summary.json", "buckets.csv", "buckets.md", "questions.parquet", "pairwise.csv", "leaderboard.md", "difficulty.csv",
    "plots/exam_by_bucket.csv", "plots/cost_accuracy.csv", "plots/reliability.csv", "plots/significance.csv",
    "plots/exam_by_bucket.svg", "plots/cost_accuracy.svg", "plots/reliability.svg", "plots/significance.svg",
    "headline/model-0.json", "headline/model-1.json", "headline/model-2.json",
}


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_rerun_is_byte_identical(tmp_path):
    table = to_table(random_rows(21, n_models=3, beliefs=True))
    write_outputs(score_table(table, n_bootstrap=200, seed=3), tmp_path / "a")
    write_outputs(score_table(table.take(np.arange(table.num_rows)[::-1]), n_bootstrap=200, seed=3), tmp_path / "b")
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert set(first) == EXPECTED_FILES
    assert first == second


def test_summary_has_exactly_the_metric_and_interval_keys(tmp_path):
    write_outputs(score_table(to_table(random_rows(2)), n_bootstrap=50), tmp_path)
    text = (tmp_path / "summary.json").read_text()
    summary = json.loads(text)
    expected = set(METRICS) | {f"{h.name}_ci_{end}" for h in HEADLINES for end in ("low", "high")}
    for model, metrics in summary.items():
        assert set(metrics) == expected
        assert list(metrics) == sorted(metrics)
        assert metrics["brier_index"] is None and metrics["brier_index_ci_low"] is None  # no beliefs
        assert metrics["composite_accuracy_ci_low"] <= metrics["composite_accuracy"] <= metrics["composite_accuracy_ci_high"]
    assert list(summary) == sorted(summary) and text.endswith("\n")


def small_result(**options):
    rows = trials("q1", YES_NO, "A", ["A", "B", None])
    rows += trials("q2", mc(3), "B", ["B", "B", "A"])
    rows += trials("q3", mc(3, multi=True), "A, C", ["A, C", "A", ("error", "network")])
    rows += trials("q4", YES_NO, "B", [("error", "skipped_training_cutoff")] * 3)
    rows += trials("q1", YES_NO, "A", ["A", "A", "A"], model="n", cost=0.1)
    options.setdefault("n_bootstrap", 0)
    return score_table(pa.Table.from_pylist(rows), **options)


def test_questions_table(tmp_path):
    write_outputs(small_result(), tmp_path)
    rows = pq.read_table(tmp_path / "questions.parquet").to_pylist()
    assert [(r["model"], r["q_id"]) for r in rows] == [("m", "q1"), ("m", "q2"), ("m", "q3"), ("m", "q4"), ("n", "q1")]
    q1, q2, q3, q4, n1 = rows
    assert q1["bucket"] == "yes_no" and q1["counted_trials"] == 3 and q1["parsed_trials"] == 2
    assert q1["exam_mean"] == pytest.approx(1 / 3) and q1["pass_any"] is True and q1["pass_all"] is False
    assert q1["modal_set"] is None  # {A} and {B} tie
    assert q1["vci"] == 0.5 and q1["entropy"] == pytest.approx(1.0, abs=1e-9)
    assert q2["modal_set"] == "B" and q2["vci"] == pytest.approx(2 / 3)
    assert q3["bucket"] == "mc_multi" and q3["counted_trials"] == 2 and q3["exam_mean"] == pytest.approx(0.75)
    assert q4["counted_trials"] == 0 and q4["exam_mean"] is None and q4["pass_any"] is None and q4["modal_set"] is None
    assert q1["difficulty"] == pytest.approx(1 - (1 / 3 + 1.0) / 2) == n1["difficulty"]


def test_bucket_tables(tmp_path):
    write_outputs(small_result(), tmp_path)
    rows = {(r["model"], r["bucket"]): r for r in read_csv(tmp_path / "buckets.csv")}
    assert len(rows) == 10  # 2 models × 5 buckets, empty ones kept
    assert rows[("m", "yes_no")] == {"model": "m", "bucket": "yes_no", "questions": "1", "trials": "3",
                                     "exam_mean": "0.333333333", "pass1_avg": "0.333333333"}  # 9 decimals
    assert rows[("m", "mc")]["questions"] == "2" and rows[("m", "mc")]["trials"] == "5"
    assert rows[("n", "mc")]["exam_mean"] == ""  # null
    markdown = (tmp_path / "buckets.md").read_text()
    assert "| m | mc_multi | 1 | 2 | 0.7500 | 0.5000 |" in markdown and "| n | mc | 0 | 0 | — | — |" in markdown


def test_difficulty_tertiles():
    difficulty = np.array([0.5, np.nan, 0.1, 0.9, 0.1, 0.3, 0.7])
    # sorted (difficulty, index): 2, 4, 5 | 0, 6 | 3  → sizes 2, 2, 2 for 6 defined
    assert difficulty_tertile(difficulty).tolist() == [1, -1, 0, 2, 0, 1, 2]
    assert difficulty_tertile(np.array([0.2, 0.1, 0.3, 0.4])).tolist() == [0, 0, 1, 2]  # first n mod 3 get one more


def test_difficulty_csv(tmp_path):
    write_outputs(small_result(), tmp_path)
    rows = read_csv(tmp_path / "difficulty.csv")
    assert [(r["model"], r["tertile"]) for r in rows] == [(m, t) for m in "mn" for t in ("easy", "medium", "hard")]
    # difficulties: q2 1 − 2/3, q1 1 − 2/3 (mean of 1/3 and 1), q3 1 − 0.75 → q3 easy, then q1, q2 (ties by q_id)
    easy, medium, hard = rows[:3]
    assert easy["questions"] == "1" and float(easy["exam_mean"]) == 0.75
    assert float(medium["exam_mean"]) == pytest.approx(1 / 3) and float(hard["exam_mean"]) == pytest.approx(2 / 3)
    assert rows[4]["questions"] == "1" and rows[3]["questions"] == "0"  # model n only answered q1


def test_pareto_frontier():
    cost = np.array([3.60, 7.06, 0.45, 3.21, 6.79, 0.89])
    accuracy = np.array([0.6016, 0.6002, 0.5896, 0.5494, 0.5800, 0.5858])
    # paper §4.3.1: Qwen and DeepSeek define the frontier
    assert pareto_frontier(cost, accuracy).tolist() == [True, False, True, False, False, False]
    assert pareto_frontier(np.array([1.0, 1.0]), np.array([0.5, np.nan])).tolist() == [True, False]


def test_plots(tmp_path):
    result = small_result(fallback_belief=0.05, n_bootstrap=100)
    write_outputs(result, tmp_path)
    cost = read_csv(tmp_path / "plots" / "cost_accuracy.csv")
    assert [r["model"] for r in cost] == ["m", "n"] and {r["pareto_frontier"] for r in cost} == {"true"}
    reliability = read_csv(tmp_path / "plots" / "reliability.csv")
    assert reliability and all(0 <= float(r["mean_prediction"]) <= 1 for r in reliability)
    assert sum(int(r["count"]) for r in reliability if r["model"] == "n") == 2  # q1's two options
    significance = read_csv(tmp_path / "plots" / "significance.csv")
    assert [(r["model_a"], r["model_b"]) for r in significance] == [("m", "n"), ("n", "m")]
    assert float(significance[0]["delta"]) == -float(significance[1]["delta"])
    exam = read_csv(tmp_path / "plots" / "exam_by_bucket.csv")
    assert ("n", "yes_no") in {(r["model"], r["bucket"]) for r in exam} and all(r["exam_mean"] for r in exam)
    write_outputs(small_result(), tmp_path / "plain")
    assert (tmp_path / "plain" / "plots" / "reliability.csv").read_text().count("\n") == 1  # header only


def test_leaderboard_marks_models_not_different_from_the_leader():
    rng = np.random.default_rng(8)
    rows = []
    for model, skill in (("leader", 0.8), ("close", 0.79), ("far", 0.3)):
        for q in range(150):
            rows += trials(f"q{q}", YES_NO, "A", ["A" if rng.random() < skill else "B" for _ in range(3)], model=model)
    result = score_table(pa.Table.from_pylist(rows), n_bootstrap=400, seed=0)
    text = leaderboard_markdown(result)
    lines = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| rank")]
    assert [line.split(" | ")[1] for line in lines] == ["leader", "close †", "far"]
    assert "[" in lines[0] and "B = 400" in text
    plain = leaderboard_markdown(score_table(pa.Table.from_pylist(rows), n_bootstrap=0))
    assert "†" not in plain.split("\n\n")[1] and "Bootstrap disabled" in plain


def test_the_leaderboard_never_ranks_models_asked_different_questions_together():
    rows = trials("q1", YES_NO, "A", ["A"] * 3, model="a@cutoff-x") + trials("q2", YES_NO, "B", ["B"] * 3, model="a@cutoff-x")
    rows += trials("q1", YES_NO, "A", ["B"] * 3, model="b@cutoff-x") + trials("q2", YES_NO, "B", ["A"] * 3, model="b@cutoff-x")
    rows += trials("q3", YES_NO, "A", ["A"] * 3, model="c@cutoff-y")
    text = leaderboard_markdown(score_table(pa.Table.from_pylist(rows), n_bootstrap=0))
    sections = text.split("## ")[1:]
    assert [s.splitlines()[0] for s in sections] == ["`cutoff-x`: 2 question(s), 2 model(s)", "`cutoff-y`: 1 question(s), 1 model(s)"]
    ranks = [[line.split(" | ")[:2] for line in s.splitlines() if line.startswith("| ") and "rank" not in line] for s in sections]
    assert ranks == [[["| 1", "a@cutoff-x"], ["| 2", "b@cutoff-x"]], [["| 1", "c@cutoff-y"]]]
