"""Bootstrap intervals and paired comparisons: coverage, determinism, the weighted-sum
formulation against re-scoring resampled tables, and the pairwise statistics."""

import numpy as np
import pyarrow as pa
import pytest

from oracleproto.config import Score
from oracleproto.scoring.prepare import prepare
from oracleproto.scoring.registry import ScoreContext
from oracleproto.scoring.scorer import score_table, summary
from oracleproto.scoring.statistics import (
    PairedSums,
    active_headlines,
    bootstrap,
    bootstrap_p_value,
    column_matrix,
    holm_adjust,
    percentile_interval,
    probability_better,
    resampled_universe,
    weighted_headlines,
)
from tests.scoring import reference_scorer
from tests.scoring.synthetic import random_rows, to_table

YES_NO = dict(question_type="yes_no", choice_type="single", options=["Yes", "No"], answer="A")


def bernoulli_table(rng: np.random.Generator, success: np.ndarray, n_trials: int, model: str = "m") -> list[dict]:
    rows = []
    for q, p in enumerate(success):
        for t in range(1, n_trials + 1):
            rows.append(dict(YES_NO, model=model, q_id=f"q{q:04d}", trial=t, pred="A" if rng.random() < p else "B", error=None, cost_usd=0.0))
    return rows


def test_pass1_interval_covers_the_true_value_about_95_percent():
    """400 replications: 150 questions with success probability p_q ~ Beta(2, 3) (true
    pass@1 = E[p] = 0.4), 3 trials each; B = 1000 percentile intervals. Observed: 0.950
    (380/400). Validation is skipped here (the tables are generated well-formed)."""
    rng = np.random.default_rng(20261202)
    q_ids = pa.array([f"q{q:04d}" for q in range(150)]).take(pa.array(np.repeat(np.arange(150), 3)))
    covered = 0
    for replication in range(400):
        success = np.repeat(rng.beta(2, 3, size=150), 3)
        pred = np.where(rng.random(len(success)) < success, "A", "B")
        table = pa.table({
            "model": ["m"] * len(pred), "q_id": q_ids, "question_type": ["yes_no"] * len(pred),
            "choice_type": ["single"] * len(pred), "options": [["Yes", "No"]] * len(pred), "answer": ["A"] * len(pred),
            "trial": np.tile([1, 2, 3], 150), "pred": pred, "error": pa.nulls(len(pred), pa.string()), "cost_usd": np.zeros(len(pred)),
        })
        data = prepare(table)
        context = ScoreContext(data, None, Score().weights)
        interval = bootstrap(context, 1000, seed=replication).intervals["m"]["pass1_avg"]
        covered += interval.low <= 0.4 <= interval.high
    assert 0.93 <= covered / 400 <= 0.97, covered / 400


def test_same_seed_same_output_other_seed_moves_only_interval_ends():
    table = to_table(random_rows(5, n_models=3, n_questions=12, beliefs=True))
    first, again = summary(score_table(table, n_bootstrap=300, seed=1)), summary(score_table(table, n_bootstrap=300, seed=1))
    assert first == again
    other = summary(score_table(table, n_bootstrap=300, seed=2))
    changed = {name for model in first for name in first[model] if first[model][name] != other[model][name]}
    assert changed and all(name.endswith(("_ci_low", "_ci_high")) for name in changed)


def test_bootstrap_zero_disables_the_statistics():
    result = score_table(to_table(random_rows(3)), n_bootstrap=0)
    assert all(value is None for model in summary(result).values() for name, value in model.items() if "_ci_" in name)
    assert all(pair.p_value is None and pair.ci_low is None for pair in result.statistics.pairs)
    assert any(pair.delta is not None for pair in result.statistics.pairs)  # observed differences remain


def test_weighted_sums_equal_rescoring_the_resampled_table():
    """A replicate with question weights w equals the reference scorer on a table where each
    question appears w times (copies get new ids), for every headline metric."""
    rows = random_rows(11, n_models=2, n_questions=10, beliefs=True)
    result = score_table(to_table(rows), n_bootstrap=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        universe = resampled_universe(result.context)
        weights = np.bincount(rng.integers(0, len(universe), len(universe)), minlength=len(universe))
        values = weighted_headlines(result.context, weights[None, :].astype(float))
        question_ids = result.context.data.questions.ids
        copies = {question_ids[q]: int(w) for q, w in zip(universe, weights)}
        resampled = [dict(r, q_id=f"{r['q_id']}#{c}") for r in rows for c in range(copies.get(r["q_id"], 0))]
        expected = reference_scorer.score(resampled)
        for name, per_model in values.items():
            for m, model in enumerate(result.models):
                want = expected.get(model, {}).get(name)
                got = per_model[0, m]
                if want is None:
                    assert not np.isfinite(got), (name, model)
                else:
                    assert got == pytest.approx(want, abs=1e-9), (name, model)


def test_identical_models_do_not_differ():
    rng = np.random.default_rng(3)
    rows = bernoulli_table(rng, rng.uniform(size=60), 3, model="a")
    rows += [dict(r, model="b") for r in rows]
    result = score_table(pa.Table.from_pylist(rows), n_bootstrap=500, seed=0)
    for pair in result.statistics.pairs:
        assert pair.delta == 0.0 and pair.ci_low == 0.0 and pair.ci_high == 0.0
        assert pair.p_value == 1.0 and pair.prob_a_better == 0.5 and pair.significant is False


def test_a_clearly_better_model_wins_significantly():
    rng = np.random.default_rng(4)
    rows = bernoulli_table(rng, np.full(200, 0.8), 3, model="good") + bernoulli_table(rng, np.full(200, 0.3), 3, model="poor")
    result = score_table(pa.Table.from_pylist(rows), n_bootstrap=500, seed=0)
    pair = next(p for p in result.statistics.pairs if p.metric == "composite_accuracy")
    assert (pair.model_a, pair.model_b) == ("good", "poor")
    assert pair.delta > 0.4 and pair.ci_low > 0.4 and pair.significant
    assert pair.prob_a_better == 1.0 and pair.p_value == pytest.approx(2 / 501)


def test_pairs_use_only_the_questions_both_models_have():
    rng = np.random.default_rng(5)
    both = bernoulli_table(rng, np.full(40, 0.5), 2, model="a")
    rows = both + [dict(r, model="b") for r in both]
    rows += [dict(YES_NO, model="a", q_id=f"only-a-{i}", trial=1, pred="A", error=None, cost_usd=0.0) for i in range(30)]
    result = score_table(pa.Table.from_pylist(rows), n_bootstrap=200, seed=0)
    pair = next(p for p in result.statistics.pairs if p.metric == "pass1_avg")
    assert pair.n_questions == 40 and pair.delta == 0.0 and pair.p_value == 1.0
    assert result.value("pass1_avg", "a") > result.value("pass1_avg", "b")  # yet overall a looks better


def test_holm_adjustment_by_hand():
    assert holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjust([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    assert holm_adjust([0.6, 0.9]) == pytest.approx([1.0, 1.0])


def test_interval_p_value_and_win_probability_by_hand():
    deltas = np.array([-1.0, 1.0, 2.0, 3.0, np.nan])
    assert bootstrap_p_value(deltas) == pytest.approx(2 * 2 / 5)  # Δ ≤ 0: 1 (+1) of 4 (+1) finite
    assert bootstrap_p_value(np.array([0.0, 1.0, -1.0])) == 1.0
    ties = np.array([-1.0, 0.0, 1.0, 2.0])
    assert probability_better(ties, higher_is_better=True) == pytest.approx((2 + 0.5) / 4)
    assert probability_better(ties, higher_is_better=False) == pytest.approx((1 + 0.5) / 4)
    interval = percentile_interval(np.arange(101, dtype=float))
    assert (interval.low, interval.high) == (pytest.approx(2.5), pytest.approx(97.5))
    assert percentile_interval(np.array([np.nan])).low is None


def test_paired_sums_equal_rescoring_the_shared_questions():
    """Pairs with different question sets: a replicate's difference equals the reference
    scorer on the resampled table restricted to the questions both models have counted."""
    rows = random_rows(12, n_models=3, n_questions=14, beliefs=True)
    result = score_table(to_table(rows), n_bootstrap=0)
    ctx = result.context
    headlines = active_headlines(ctx)
    matrix = column_matrix(ctx, headlines)
    assert len(matrix.atom_members) > 1  # the models' question sets differ
    paired = PairedSums(ctx, headlines, matrix)
    rng = np.random.default_rng(1)
    weights = np.bincount(rng.integers(0, len(matrix.questions), len(matrix.questions)), minlength=len(matrix.questions))
    _, sums = paired.sums(weights[None, :].astype(float))
    question_ids = ctx.data.questions.ids
    copies = {question_ids[q]: int(w) for q, w in zip(matrix.questions, weights)}
    counted = {(r["model"], r["q_id"]) for r in rows if r["error"] is None}
    for a, b in paired.pairs:
        model_a, model_b = ctx.models[a], ctx.models[b]
        shared = {q for (m, q) in counted if m == model_a and (model_b, q) in counted}
        resampled = [dict(r, q_id=f"{r['q_id']}#{c}") for r in rows if r["model"] in (model_a, model_b) and r["q_id"] in shared
                     for c in range(copies[r["q_id"]])]
        expected = reference_scorer.score(resampled) if resampled else {}
        for h in headlines:
            got = paired.delta(sums[(a, b)], h, a, b)[0]
            want_a, want_b = (expected.get(m, {}).get(h.name) for m in (model_a, model_b))
            if want_a is None or want_b is None:
                assert not np.isfinite(got), (h.name, a, b)
            else:
                assert got == pytest.approx(want_a - want_b, abs=1e-9), (h.name, a, b)
