import datetime as dt

import pyarrow as pa
import pytest

from oracleproto.admission import AdmissionError, parse_cutoff
from oracleproto.config import parse_params
from oracleproto.corpus.admit import (
    AdmissionConfig,
    admission_config,
    admission_log,
    split_sets,
    summary,
)

D = dt.date


def _questions(ends):
    return pa.table({
        "id": [f"q{i}" for i in range(len(ends))],
        "choice_type": ["single"] * len(ends), "question_type": ["yes_no"] * len(ends),
        "event": ["e"] * len(ends), "options": [["Yes", "No"]] * len(ends), "answer": ["A"] * len(ends),
        "end_time": pa.array(ends, pa.date32()),
    })


def test_month_cutoffs_take_the_last_day():
    assert parse_cutoff("2024-02") == D(2024, 2, 29)
    assert parse_cutoff("2023-10") == D(2023, 10, 31)
    assert parse_cutoff("2025-09-29") == D(2025, 9, 29)
    for bad in ("2024", "2024-13", "yesterday", "2024-02-30"):
        with pytest.raises(AdmissionError, match="is not YYYY-MM-DD"):
            parse_cutoff(bad, "m")


def test_admission_rule_is_cutoff_le_tau_minus_delta():
    # κ = 2024-01-10, δ = 1: τ = 01-10 gives χ = 01-09 < κ (excluded); τ = 01-11 gives χ = κ (admitted)
    questions = _questions([D(2024, 1, 10), D(2024, 1, 11), D(2024, 1, 12), D(2024, 3, 1)])
    config = AdmissionConfig(models={"m": "2024-01-10"}, delta_days=1, test_fraction=0.5)
    ((name, train, test),) = split_sets(questions, config)
    assert name == "cutoff-2024-01-10"
    assert train.column("id").to_pylist() == ["q1"]
    assert test.column("id").to_pylist() == ["q2", "q3"]
    assert summary(questions, config)["m"] == {"cutoff": "2024-01-10", "split": "cutoff-2024-01-10", "admitted": 3, "excluded_by_cutoff": 1}
    wider = summary(questions, AdmissionConfig(models={"m": "2024-01-10"}, delta_days=2))
    assert wider["m"]["admitted"] == 2  # χ = τ − 2 must still be ≥ κ


def test_chronological_disjoint_splits_and_shared_cutoffs():
    ends = [D(2024, 1, d) for d in range(1, 11)]
    config = AdmissionConfig(models={"a": "2023-12", "b": "2023-12-31", "c": "2024-01-04"}, test_fraction=0.2)
    splits = {name: (train, test) for name, train, test in split_sets(_questions(ends), config)}
    assert sorted(splits) == ["cutoff-2023-12-31", "cutoff-2024-01-04"]
    train, test = splits["cutoff-2023-12-31"]
    assert test.column("id").to_pylist() == ["q8", "q9"]
    assert max(train.column("end_time").to_pylist()) <= min(test.column("end_time").to_pylist())
    assert not set(train.column("id").to_pylist()) & set(test.column("id").to_pylist())
    log = pa.concat_tables(list(admission_log(_questions(ends), config)))
    assert log.num_rows == 30
    c_rows = log.filter(pa.compute.equal(log.column("model"), "c")).to_pylist()
    assert sum(r["admitted"] for r in c_rows) == 6
    assert {r["reason"] for r in c_rows if not r["admitted"]} == {"cutoff_after_prediction_cutoff"}


def test_unsorted_questions_split_like_the_sorted_table():
    # Out of (end_time, id) order, with ties on end_time broken by id.
    ends = [D(2024, 1, 5), D(2024, 1, 2), D(2024, 1, 9), D(2024, 1, 2), D(2024, 1, 7), D(2024, 1, 5)]
    questions = _questions(ends)
    config = AdmissionConfig(models={"a": "2024-01-01", "b": "2024-01-04"}, test_fraction=0.34)
    ordered = questions.sort_by([("end_time", "ascending"), ("id", "ascending")])
    for name, train, test in split_sets(questions, config):
        first = D(2024, 1, 2) if name == "cutoff-2024-01-01" else D(2024, 1, 5)
        admitted = [r["id"] for r in ordered.to_pylist() if r["end_time"] >= first]
        n_test = round(len(admitted) * 0.34)
        assert train.column("id").to_pylist() == admitted[: len(admitted) - n_test]
        assert test.column("id").to_pylist() == admitted[len(admitted) - n_test:]


def test_the_config_takes_the_cutoffs_of_models_and_the_admit_section():
    params = parse_params({"models": {"m": "2024-01", "n": {"cutoff": "2024-02-10", "label": "N"}}, "admit": {"delta_days": 3}})
    config = admission_config(params)
    assert config.models == {"m": D(2024, 1, 31), "n": D(2024, 2, 10)}
    assert (config.delta_days, config.test_fraction) == (3, 0.2)
