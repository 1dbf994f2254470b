"""The vectorised scorer agrees with the slow reference scorer (written from METRICS.md) to 1e-9."""

import pytest

from oracleproto.scoring.registry import METRICS
from oracleproto.scoring.scorer import score_table, summary
from tests.scoring import reference_scorer
from tests.scoring.synthetic import random_rows, to_table

TOLERANCE = 1e-9


def assert_agrees(rows, weights=None, fallback=None):
    expected = reference_scorer.score(rows, weights=weights, fallback=fallback)
    got = summary(score_table(to_table(rows), weights=weights, fallback_belief=fallback, n_bootstrap=0))
    assert sorted(got) == sorted(expected)
    for model, metrics in expected.items():
        assert set(metrics) == set(METRICS)
        for name, value in metrics.items():
            actual = got[model][name]
            assert (value is None) == (actual is None), (model, name, value, actual)
            if value is not None:
                assert abs(actual - value) <= TOLERANCE, (model, name, value, actual)


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_without_beliefs(seed):
    assert_agrees(random_rows(seed))


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_with_beliefs(seed):
    assert_agrees(random_rows(1000 + seed, beliefs=True))


@pytest.mark.parametrize("seed", range(15))
def test_random_tables_with_fallback_beliefs(seed):
    assert_agrees(random_rows(2000 + seed, beliefs=seed % 2 == 0), fallback=0.05)


@pytest.mark.parametrize("weights", [{"yes_no": 1.0}, {"mc": 0.5, "binary_named": 0.5}, {"yes_no": 0.2, "binary_named": 0.3, "mc": 0.5}])
def test_random_tables_with_other_weights(weights):
    for seed in range(5):
        assert_agrees(random_rows(3000 + seed), weights=weights)


def test_larger_table_many_models():
    assert_agrees(random_rows(7, n_models=6, n_questions=40, max_trials=5, beliefs=True), fallback=0.1)
