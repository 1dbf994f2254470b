import collections

import pytest

from oracleproto.harness import baselines
from oracleproto.harness.baselines import (
    BaseRates,
    baseline_indices,
    boxed_answer,
    uniform_indices,
)
from oracleproto.parse import parse_answer


def pick(name, qtype="multiple_choice", ctype="single", options=("a", "b", "c", "d"), q_id="q", trial=1, rates=None):
    return baseline_indices(name, q_id=q_id, trial=trial, question_type=qtype, choice_type=ctype, options=options,
                            seed=0, base_rates=rates)


def test_uniform_is_seeded_by_question_and_trial_only():
    assert uniform_indices(0, "q1", 1, 4, "single") == uniform_indices(0, "q1", 1, 4, "single")
    draws = {tuple(uniform_indices(0, f"q{i}", 1, 4, "single")) for i in range(50)}
    assert len(draws) == 4  # every option gets drawn
    seed1 = [uniform_indices(1, f"q{i}", 1, 10, "multi") for i in range(20)]
    seed2 = [uniform_indices(2, f"q{i}", 1, 10, "multi") for i in range(20)]
    assert seed1 != seed2


def test_uniform_single_is_roughly_uniform():
    counts = collections.Counter(uniform_indices(0, f"q{i}", t, 4, "single")[0] for i in range(300) for t in (1, 2))
    assert all(120 <= counts[k] <= 180 for k in range(4))


def test_uniform_multi_is_a_nonempty_subset():
    for i in range(100):
        chosen = uniform_indices(3, f"q{i}", 1, 5, "multi")
        assert chosen and all(0 <= c < 5 for c in chosen) and chosen == sorted(set(chosen))


def test_uniform_on_binary_types_picks_one():
    assert len(pick("uniform", "yes_no", "single", ("Yes", "No"))) == 1


def test_first_and_no():
    assert pick("first") == [0]
    assert pick("no", "yes_no", options=("Yes", "No")) == [1]
    assert pick("no", options=("Up", "Down", "None of the above")) == [2]
    assert pick("no", "binary_named", options=("Team A", "Team B")) == [0]


def test_base_rate_per_bucket():
    rows = [
        ("yes_no", "single", "B"), ("yes_no", "single", "B"), ("yes_no", "single", "A"),
        ("multiple_choice", "single", "C"), ("multiple_choice", "single", "C"), ("multiple_choice", "single", "A"),
        ("multiple_choice", "multi", "A, B"), ("multiple_choice", "multi", "B, D"), ("multiple_choice", "multi", "B"),
        ("multiple_choice", "multi", "D, E"),
    ]
    rates = BaseRates.from_rows(rows)
    assert pick("base_rate", "yes_no", options=("Yes", "No"), rates=rates) == [1]
    assert pick("base_rate", rates=rates) == [2]
    # C is out of range on a 2-option... question: the most frequent in-range letter wins
    assert pick("base_rate", options=("x", "y"), rates=rates) == [0]
    # mc_multi: modal cardinality 2; letter frequencies B=3, D=2, A=1, E=1
    assert pick("base_rate", ctype="multi", options=("a", "b", "c", "d", "e"), rates=rates) == [1, 3]
    # binary_named absent from train: pooled letter counts (B most frequent)
    assert pick("base_rate", "binary_named", options=("X", "Y"), rates=rates) == [1]


def test_base_rate_ties_and_empty_train():
    empty = BaseRates.from_rows([])
    assert pick("base_rate", rates=empty) == [0]
    assert pick("base_rate", ctype="multi", rates=empty) == [0]
    with pytest.raises(ValueError, match="train split"):
        pick("base_rate")


@pytest.mark.parametrize(
    ("qtype", "ctype", "options", "indices"),
    [("yes_no", "single", ("Yes", "No"), [1]), ("binary_named", "single", ("Reds", "Blues"), [1]),
     ("multiple_choice", "single", ("a", "b", "c"), [2]), ("multiple_choice", "multi", ("a", "b", "c"), [0, 2])],
)
def test_replies_parse_back_to_the_pick(qtype, ctype, options, indices):
    reply = baselines.baseline_reply("x", qtype, options, indices)
    expected = ", ".join(chr(65 + i) for i in indices)
    assert parse_answer(reply, qtype, options, ctype) == expected
    assert boxed_answer(qtype, options, indices) in reply
