"""Wilson intervals and population-weighted shares, checked against hand values."""

import math

import pytest

from oracleproto.leakaudit.stats import (
    Stratum,
    proportion,
    stratified_share,
    wilson_interval,
)


def test_the_papers_residual_leak_rate_has_its_wilson_upper_bound():
    low, high = wilson_interval(3, 270)
    assert round(high, 3) == 0.032 and round(low, 4) == 0.0038


@pytest.mark.parametrize(
    "successes, n, expected",
    [
        (0, 10, (0.0, 0.2775327998628899)),
        (10, 10, (0.7224672001371101, 1.0)),
        (5, 10, (0.2365931918109653, 0.7634068081890347)),
        (0.5, 1, (0.0546, 0.9454)),  # fractional successes: a question half right over two trials
    ],
)
def test_wilson_by_hand(successes, n, expected):
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(expected[0], abs=1e-4) and high == pytest.approx(expected[1], abs=1e-4)


def test_no_observations_no_interval_and_impossible_counts_are_errors():
    assert wilson_interval(0, 0) is None
    assert proportion(0, 0).rate is None and not proportion(0, 0).covers(0.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_proportion_reports_rate_and_interval():
    p = proportion(3, 270)
    assert p.rate == pytest.approx(3 / 270) and p.covers(0.011) and not p.covers(0.05)
    assert p.to_json() == {"successes": 3, "n": 270, "rate": p.rate, "ci_low": p.low, "ci_high": p.high}


def test_a_share_weights_each_stratum_by_its_population():
    # dropped: 100 results, half leaks; kept: 900 results, 1 in 10 leaks -> 50 of 140 leaks dropped
    strata = {"dropped": Stratum(100, 5, 10), "kept": Stratum(900, 4, 40)}
    share = stratified_share(strata, ["dropped"])
    assert share.estimate == pytest.approx(50 / 140)
    assert share.low < share.estimate < share.high and share.reason is None


def test_a_share_is_seeded_and_defined_when_every_label_agrees():
    strata = {"dropped": Stratum(60, 20, 20), "kept": Stratum(120, 0, 40)}
    first, second = stratified_share(strata, ["dropped"]), stratified_share(strata, ["dropped"])
    assert first == second and first.estimate == 1.0
    assert 0.5 < first.low < 0.95 and 0.999 < first.high <= 1.0
    assert stratified_share(strata, ["dropped"], seed=1).low != first.low


def test_undefined_shares_say_why():
    assert stratified_share({"a": Stratum(10, 0, 0), "b": Stratum(5, 1, 2)}, ["a"]).reason == "no labelled sample in a"
    assert stratified_share({"a": Stratum(10, 0, 4), "b": Stratum(5, 0, 2)}, ["a"]).reason == "no positives labelled in any stratum"
    # a stratum nobody reached does not count
    assert stratified_share({"a": Stratum(0, 0, 0), "b": Stratum(5, 1, 2)}, ["b"]).estimate == 1.0


def test_stratum_counts_are_checked():
    with pytest.raises(ValueError):
        Stratum(10, 3, 2)
    assert math.isfinite(stratified_share({"a": Stratum(3, 1, 3)}, ["a"]).estimate)


@pytest.mark.parametrize("n", [1, 7, 10, 240])
def test_the_interval_holds_the_rate_exactly_at_zero_and_one(n):
    assert wilson_interval(n, n)[1] == 1.0 and wilson_interval(0, n)[0] == 0.0
