import datetime as dt
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.admission import parse_cutoff
from oracleproto.config import parse_params
from oracleproto.corpus.admit import (
    AdmissionConfig,
    admission_config,
    admission_log,
    split_sets,
    summary,
)
from oracleproto.errors import ConfigError

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
        with pytest.raises(ConfigError, match="is not YYYY-MM-DD"):
            parse_cutoff(bad, "m")


def test_admission_rule_is_cutoff_le_tau_minus_delta():
    # κ = 2024-01-10, δ = 1: τ = 01-10 gives χ = 01-09 < κ (excluded); τ = 01-11 gives χ = κ (admitted)
    questions = _questions([D(2024, 1, 10), D(2024, 1, 11), D(2024, 1, 12), D(2024, 3, 1)])
    config = AdmissionConfig(models={"m": "2024-01-10"}, delta_days=1, test_fraction=0.5)
    ((name, train, test),) = split_sets(questions, config)
    assert name == "cutoff-2024-01-10"
    assert train.column("id").to_pylist() == ["q1"]
    assert test.column("id").to_pylist() == ["q2", "q3"]
    assert summary(questions, config)["models"]["m"] == {
        "cutoff": "2024-01-10", "split": "cutoff-2024-01-10", "admitted": 3, "train": 1, "test": 2, "excluded_by_cutoff": 1,
    }
    wider = summary(questions, AdmissionConfig(models={"m": "2024-01-10"}, delta_days=2))
    assert wider["models"]["m"]["admitted"] == 2  # χ = τ − 2 must still be ≥ κ


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
    ordered = [r["id"] for r in questions.sort_by([("end_time", "ascending"), ("id", "ascending")]).to_pylist()]
    test_ids = ordered[len(ordered) - round(len(ordered) * 0.34):]  # the corpus' newest 34 %
    for name, train, test in split_sets(questions, config):
        first = D(2024, 1, 2) if name == "cutoff-2024-01-01" else D(2024, 1, 5)
        admitted = [r["id"] for r in questions.sort_by([("end_time", "ascending"), ("id", "ascending")]).to_pylist() if r["end_time"] >= first]
        assert train.column("id").to_pylist() == [q for q in admitted if q not in test_ids]
        assert test.column("id").to_pylist() == [q for q in admitted if q in test_ids]


def test_the_summary_states_the_corpus_boundary():
    questions = _questions([D(2024, 1, d) for d in range(1, 11)])
    config = AdmissionConfig(models={"a": "2024-01-08"}, test_fraction=0.2)
    boundary = summary(questions, config)["test_boundary"]
    assert boundary["first_test_id"] == "q8" and boundary["first_test_end_time"] == "2024-01-09"
    assert (boundary["train_questions"], boundary["test_questions"]) == (8, 2)
    # a late cutoff admits only test questions: an empty train split, never a test question in train
    assert summary(questions, config)["models"]["a"] == {
        "cutoff": "2024-01-08", "split": "cutoff-2024-01-08", "admitted": 2, "train": 0, "test": 2, "excluded_by_cutoff": 8,
    }


def test_the_config_takes_the_cutoffs_of_models_and_the_admit_section():
    params = parse_params({"models": {"m": "2024-01", "n": {"cutoff": "2024-02-10", "label": "N"}}, "admit": {"delta_days": 3}})
    config = admission_config(params)
    assert config.models == {"m": D(2024, 1, 31), "n": D(2024, 2, 10)}
    assert (config.delta_days, config.test_fraction) == (3, 0.2)


@settings(max_examples=150, deadline=None)
@given(
    days=st.lists(st.integers(0, 60), min_size=0, max_size=40),
    cutoffs=st.lists(st.integers(-5, 65), min_size=1, max_size=6),
    fraction=st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]),
    delta=st.integers(1, 5),
)
def test_no_question_is_train_in_one_configuration_and_test_in_another(days, cutoffs, fraction, delta):
    questions = _questions([D(2024, 1, 1) + dt.timedelta(days=d) for d in days])
    models = {f"m{i}": (D(2024, 1, 1) + dt.timedelta(days=c)).isoformat() for i, c in enumerate(cutoffs)}
    config = AdmissionConfig(models=models, test_fraction=fraction, delta_days=delta)
    train_ids, test_ids = set(), set()
    for _, train, test in split_sets(questions, config):
        assert not set(train.column("id").to_pylist()) & set(test.column("id").to_pylist())
        train_ids |= set(train.column("id").to_pylist())
        test_ids |= set(test.column("id").to_pylist())
    assert not train_ids & test_ids  # the union of every configuration's train and test


def test_a_probed_cutoff_only_ever_makes_admission_stricter(tmp_path):
    def report(name: str, flagged: bool) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"model": name, "disclosed_cutoff": "2024-12-31", "effective_cutoff": "2025-06-30", "flagged": flagged}))
        return str(path)

    models = {
        "leaky": {"cutoff": "2024-12", "cutoff_source": "probed", "probe_report": report("leaky", True)},
        "honest": {"cutoff": "2024-12", "cutoff_source": "probed", "probe_report": report("honest", False)},
        "plain": "2024-12",
    }
    config = admission_config(parse_params({"models": models}))
    assert config.models == {"leaky": D(2025, 6, 30), "honest": D(2024, 12, 31), "plain": D(2024, 12, 31)}
    with pytest.raises(ConfigError, match="probe_report"):
        parse_params({"models": {"x": {"cutoff": "2024-12", "cutoff_source": "probed"}}})
