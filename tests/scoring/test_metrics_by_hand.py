"""Hand-computed cases for every metric and every edge case of METRICS.md."""

import itertools
import json
import math
from pathlib import Path

import pyarrow as pa
import pytest

from oracleproto.exam import tversky_from_masks
from oracleproto.lettersets import masks_from_indices
from oracleproto.scoring.prepare import tversky_chance
from oracleproto.scoring.scorer import score_table

YES_NO = dict(question_type="yes_no", choice_type="single", options=["Yes", "No"])
BINARY = dict(question_type="binary_named", choice_type="single", options=["Red", "Blue"])


def mc(k, multi=False):
    return dict(question_type="multiple_choice", choice_type="multi" if multi else "single", options=[f"o{i}" for i in range(k)])


def trials(q_id, kind, answer, outcomes, model="m", cost=0.0, beliefs=None):
    """outcomes: pred strings, None (parse failure), or ("error", kind)."""
    rows = []
    for index, outcome in enumerate(outcomes, start=1):
        error = outcome[1] if isinstance(outcome, tuple) else None
        pred = None if isinstance(outcome, tuple) else outcome
        row = dict(kind, model=model, q_id=q_id, answer=answer, trial=index, pred=pred, error=error, cost_usd=cost)
        if beliefs is not None:
            row["belief"] = beliefs[index - 1]
        rows.append(row)
    return rows


def score(rows, **options):
    options.setdefault("n_bootstrap", 0)
    result = score_table(pa.Table.from_pylist(rows), **options)
    return {name: {model: result.value(name, model) for model in result.models} for name in result.values}


def one(values, model="m"):
    return values[model]


# ---------------------------------------------------------------------------------------
# Trial classes, counts and rates


def test_trial_classes_and_rates():
    rows = trials("q1", YES_NO, "A", ["A", None, ("error", "network"), ("error", "skipped_training_cutoff")])
    rows += trials("q2", YES_NO, "B", [("error", "skipped_training_cutoff")] * 2)
    s = score(rows)
    assert one(s["n_questions"]) == 1
    assert one(s["n_trials"]) == 2  # the parsed trial and the parse failure
    assert one(s["excluded_by_cutoff"]) == 1  # q2
    # eligible: A, parse failure, network error
    assert one(s["validity_rate"]) == pytest.approx(1 / 3)
    assert one(s["parse_failure_rate"]) == pytest.approx(1 / 3)
    assert one(s["call_error_rate"]) == pytest.approx(1 / 3)


def test_deadline_and_size_cap_errors_are_call_errors():
    rows = trials("q1", YES_NO, "A", ["A", ("error", "timeout"), ("error", "response_too_large")])
    s = score(rows)  # the scorer validates the error column first: both kinds must pass it
    assert one(s["call_error_rate"]) == pytest.approx(2 / 3)
    assert one(s["validity_rate"]) == pytest.approx(1 / 3)
    assert one(s["n_trials"]) == 1 and one(s["pass1_avg"]) == 1.0


def test_rates_null_when_nothing_is_eligible():
    s = score(trials("q1", YES_NO, "A", [("error", "skipped_training_cutoff")] * 3))
    for name in ("validity_rate", "parse_failure_rate", "call_error_rate", "composite_accuracy", "pass1_avg", "cohen_kappa", "fss"):
        assert one(s[name]) is None, name
    assert one(s["n_questions"]) == 0 and one(s["excluded_by_cutoff"]) == 1


# ---------------------------------------------------------------------------------------
# Accuracy


def test_parse_failures_count_zero_in_exam_and_pass1():
    s = score(trials("q1", YES_NO, "A", ["A", None, None]))
    assert one(s["exam_yes_no"]) == pytest.approx(1 / 3)
    assert one(s["pass1_avg"]) == pytest.approx(1 / 3)
    assert one(s["pass_any_n"]) == 1.0
    assert one(s["pass_all_n"]) == 0.0


def test_call_errors_and_cutoff_skips_leave_the_denominators():
    rows = trials("q1", YES_NO, "A", ["A", ("error", "rate_limit"), ("error", "skipped_training_cutoff")])
    rows += trials("q2", YES_NO, "A", ["B", "A", "A"])
    s = score(rows)
    assert one(s["exam_yes_no"]) == pytest.approx((1.0 + 2 / 3) / 2)
    assert one(s["pass1_avg"]) == pytest.approx((1.0 + 2 / 3) / 2)
    assert one(s["pass_all_n"]) == pytest.approx(0.5)  # q1's only counted trial is correct
    assert one(s["n_trials"]) == 4


def test_exam_partial_credit_on_multi_answer():
    rows = trials("q1", mc(4, multi=True), "A, B, C", ["A", "A, B", "A, D"])
    s = score(rows)
    assert one(s["exam_mc_multi"]) == pytest.approx((1 / 3 + 2 / 3 + 0) / 3)
    assert one(s["exam_mc"]) == one(s["exam_mc_multi"])
    assert one(s["pass1_avg"]) == 0.0


def test_buckets_and_composite():
    rows = trials("y", YES_NO, "A", ["A", "B"])  # 0.5
    rows += trials("b", BINARY, "B", ["B", "B"])  # 1.0
    rows += trials("s", mc(3), "C", ["C", "A"])  # 0.5
    rows += trials("u", mc(4, multi=True), "A, B", ["A", "A"])  # 0.5
    rows += trials("v", mc(4, multi=True), "A, B", ["C", "C"])  # 0.0
    s = score(rows)
    assert one(s["exam_mc_single"]) == 0.5
    assert one(s["exam_mc_multi"]) == 0.25
    assert one(s["exam_mc"]) == pytest.approx(1 / 3)  # pooled over the three MC questions
    assert one(s["composite_accuracy"]) == pytest.approx(0.15 * 0.5 + 0.15 * 1.0 + 0.70 / 3)


def test_empty_buckets_renormalise_the_weights():
    rows = trials("y", YES_NO, "A", ["A"])
    rows += trials("s", mc(3), "C", ["A"])
    rows += trials("b", BINARY, "A", [("error", "skipped_training_cutoff")])  # bucket has no counted trial
    s = score(rows)
    assert one(s["exam_binary_named"]) is None
    assert one(s["composite_accuracy"]) == pytest.approx((0.15 * 1.0 + 0.70 * 0.0) / 0.85)
    s = score(rows, weights="yes_no=1,binary_named=1")
    assert one(s["composite_accuracy"]) == 1.0  # only yes_no has a value


def test_tied_majority_votes_are_dropped():
    rows = trials("q1", mc(3), "A", ["A", "B"])  # tie: dropped
    rows += trials("q2", mc(3), "A", ["A", "A", "B"])  # A wins: right
    rows += trials("q3", mc(3), "A", ["B", "B", "A"])  # B wins: wrong
    rows += trials("q4", mc(3), "A", [None, None, "C"])  # C (the only parsed set) wins: wrong
    rows += trials("q5", mc(3), "A", [None, ("error", "network")])  # no vote at all: dropped
    s = score(rows)
    assert one(s["mv_acc"]) == pytest.approx(1 / 3)
    pass1 = (0.5 + 2 / 3 + 1 / 3 + 0 + 0) / 5
    assert one(s["pass1_avg"]) == pytest.approx(pass1)
    assert one(s["mv_gain"]) == pytest.approx(1 / 3 - pass1)


# ---------------------------------------------------------------------------------------
# Consistency


def test_cohen_kappa_by_hand():
    rows = trials("q1", YES_NO, "A", ["A", "A", None])  # p_e 1/2
    rows += trials("q2", mc(4), "B", ["B", ("error", "network")])  # p_e 1/4
    rows += trials("q3", mc(4, multi=True), "A, B", ["A, B"])  # p_e 1/2
    s = score(rows)
    p_o = 4 / 5
    p_e = (3 * 0.5 + 0.25 + 0.5) / 5
    assert one(s["cohen_kappa"]) == pytest.approx((p_o - p_e) / (1 - p_e))


def test_cohen_chance_of_the_paper_set_matches_table5():
    """METRICS.md: with the 80 real questions and every trial counted p_e = 0.3846, so
    pass@1 0.5756 gives κ ≈ 0.31 (paper Table 5: 0.3101)."""
    path = Path(__file__).resolve().parents[3] / "shared" / "data" / "forecast_eval_set_80.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not present")
    questions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = []
    for q in questions:
        kind = {key: q[key] for key in ("question_type", "choice_type", "options")}
        rows += trials(q["id"], kind, q["answer"], [q["answer"]] * 3)
    result = score_table(pa.Table.from_pylist(rows), n_bootstrap=0)
    chance = result.context.data.questions.cohen_chance.mean()
    assert round(chance, 4) == 0.3846
    assert (0.5756 - chance) / (1 - chance) == pytest.approx(0.3101, abs=5e-4)


def test_fleiss_single_stratum_multi_pool_and_combination():
    single = trials("s1", mc(3), "A", ["A", "A", "B"]) + trials("s2", mc(3), "C", ["C", "C", "C"])
    s = score(single)
    # P_1 = 1/3, P_2 = 1, P̄ = 2/3; p = (2, 1, 3)/6, P_e = 14/36; κ = (2/3 − 7/18)/(11/18)
    assert one(s["fleiss_kappa"]) == pytest.approx(5 / 11)
    multi = trials("u", mc(3, multi=True), "A, B", ["A, B", "A", "A, C"])
    assert one(score(multi)["fleiss_kappa"]) == pytest.approx(0.0)  # letters: A agreed (1), B and C split 1 of 3 (−0.5 each)
    assert one(score(single + multi)["fleiss_kappa"]) == pytest.approx((5 / 11 * 2 + 0.0 * 1) / 3)


def test_fleiss_parse_failures_are_not_raters_and_k_below_two_still_weighs_the_pool():
    rows = trials("s1", mc(3), "A", ["A", "A", "B", None])  # K = 3 raters
    rows += trials("s2", mc(3), "A", ["A", None])  # K = 1: no rater row, still in the pool weight
    rows += trials("u", mc(3, multi=True), "A, B", ["A, B", "A", "A, C"])
    s = score(rows)
    # single pool: one stratum question with P = 1/3, p = (2/3, 1/3, 0), P_e = 5/9 → κ = (1/3 − 5/9)/(4/9) = −1/2
    assert one(s["fleiss_kappa"]) == pytest.approx((-0.5 * 2 + 0.0 * 1) / 3)


def test_fleiss_strata_by_option_count_and_unanimity():
    rows = trials("a", mc(3), "A", ["A", "A"]) + trials("b", mc(4), "B", ["B", "B"])
    assert one(score(rows)["fleiss_kappa"]) == 1.0  # each stratum unanimous: P_e = 1 → κ_s = 1


def test_multi_letter_answer_on_single_question_votes_its_first_letter():
    rows = trials("s", mc(3), "B", ["B, C", "B", "A"])  # votes B, B, A
    s = score(rows)
    expected_entropy = -(2 / 3 * math.log2(2 / 3 + 1e-10) + 1 / 3 * math.log2(1 / 3 + 1e-10))
    assert one(s["mean_entropy"]) == pytest.approx(expected_entropy)
    assert one(s["vci"]) == pytest.approx(1 / 3)  # the identical *sets* all differ
    assert one(s["pass1_avg"]) == pytest.approx(1 / 3)


def test_entropy_and_vci_by_hand():
    def h(p):
        return -(p * math.log2(p + 1e-10) + (1 - p) * math.log2(1 - p + 1e-10))

    rows = trials("s", mc(3), "A", ["A", "A", "B"])
    rows += trials("u", mc(3, multi=True), "A, B", ["A, B", "A", "A, C"])
    rows += trials("lonely", mc(3), "A", ["A", None])  # K < 2: left out
    s = score(rows)
    single_h = -(2 / 3 * math.log2(2 / 3 + 1e-10) + 1 / 3 * math.log2(1 / 3 + 1e-10))
    multi_h = (0.0 + h(1 / 3) + h(1 / 3)) / 3
    assert one(s["mean_entropy"]) == pytest.approx((single_h + multi_h) / 2)
    assert one(s["vci"]) == pytest.approx((2 / 3 + 1 / 3) / 2)


# ---------------------------------------------------------------------------------------
# Skill


def test_tversky_chance_closed_form_by_hand():
    # k = 3, m = 2: (tp, fp) ∈ {1, 2} × {0, 1}, weights C(2,tp)·C(1,fp)/8
    expected = 2 / 8 * (1 / 1.5) + 2 / 8 * (1 / 3.5) + 1 / 8 * 1.0 + 1 / 8 * (2 / 4)
    assert tversky_chance(3, 2, single=False) == pytest.approx(expected)
    assert tversky_chance(5, 1, single=True) == 0.2


@pytest.mark.parametrize(("k", "m"), [(3, 2), (4, 2), (5, 3), (6, 6), (7, 2)])
def test_tversky_chance_equals_the_expectation_over_coin_flip_predictions(k, m):
    gold = masks_from_indices([set(range(m))])
    subsets = [set(c) for r in range(k + 1) for c in itertools.combinations(range(k), r)]
    scores = tversky_from_masks(masks_from_indices(subsets), gold.repeat(len(subsets)))
    assert tversky_chance(k, m, single=False) == pytest.approx(scores.mean())


def test_fss_by_hand_and_parse_failures_stay_out():
    rows = trials("s", mc(4), "A", ["A", "B", None])  # T̄ = 1/2 over parsed trials, chance 1/4
    rows += trials("none", mc(4), "A", [None, None])  # K_eff = 0: left out
    s = score(rows)
    assert one(s["fss"]) == pytest.approx((0.5 - 0.25) / 0.75)


def test_fss_multi_answer_uses_the_closed_form_baseline():
    rows = trials("u", mc(3, multi=True), "A, B", ["A, B", "A"])
    chance = tversky_chance(3, 2, single=False)
    mean_t = (1.0 + 1 / (1 + 0.5)) / 2
    assert one(score(rows)["fss"]) == pytest.approx((mean_t - chance) / (1 - chance))


def test_fss_when_every_letter_is_gold():
    rows = trials("u", mc(3, multi=True), "A, B, C", ["A"])  # m = k: no false positive possible, chance still < 1
    chance = tversky_chance(3, 3, single=False)
    assert chance == pytest.approx(sum(math.comb(3, tp) / 8 * tp / (tp + 0.5 * (3 - tp)) for tp in range(1, 4)))
    mean_t = 1 / (1 + 0.5 * 2)
    assert one(score(rows)["fss"]) == pytest.approx((mean_t - chance) / (1 - chance))


def test_hamming_is_a_sample_mean_over_parsed_multi_answer_trials():
    rows = trials("u", mc(4, multi=True), "A, B", ["A, B", "A", None])  # 1.0, 0.75
    rows += trials("w", mc(5, multi=True), "A, C", ["B"])  # |{A,B,C}| = 3 → 1 − 3/5
    rows += trials("s", mc(3), "A", ["B"])  # single: not counted
    assert one(score(rows)["hamming_mc_multi"]) == pytest.approx((1.0 + 0.75 + 0.4) / 3)
    assert one(score(trials("s", mc(3), "A", ["B"]))["hamming_mc_multi"]) is None


# ---------------------------------------------------------------------------------------
# Probabilistic family


def test_probabilistic_family_by_hand():
    rows = trials("y", YES_NO, "A", ["A", "A"], beliefs=[[0.9, 0.1], [0.7, 0.3]])  # p = (0.8, 0.2)
    s = score(rows)
    bs_lab = (0.2**2 + 0.2**2) / 2
    assert one(s["brier_index"]) == pytest.approx(100 * (1 - math.sqrt(bs_lab)))
    assert one(s["brier_index_dec"]) == pytest.approx(100 * (1 - math.sqrt(2 * bs_lab)))
    assert one(s["nll"]) == pytest.approx(-math.log(0.8))
    assert one(s["mbs"]) == pytest.approx(100 * (math.log2(0.8) + 1))
    gamma = ((0.5 - 1) ** 2 + 0.5**2) / 2
    assert one(s["abi_uniform"]) == pytest.approx(100 * (1 + math.sqrt(gamma - bs_lab)))  # beats uniform
    assert one(s["abi_crowd"]) == one(s["abi_uniform"])  # no other model: falls back
    assert one(s["ece"]) == pytest.approx((abs(0.8 - 1) + abs(0.2 - 0)) / 2)
    assert one(s["fallback_share"]) == 0.0


def test_multi_answer_nll_and_clipping():
    rows = trials("u", mc(3, multi=True), "A, B", ["A, B"], beliefs=[[1.0, 0.5, 0.0]])
    s = score(rows)
    clipped = [1 - 1e-3, 0.5, 1e-3]
    expected = -(math.log(clipped[0]) + math.log(clipped[1]) + math.log(1 - clipped[2])) / 3
    assert one(s["nll"]) == pytest.approx(expected)
    assert one(s["mbs"]) is None and one(s["brier_index_dec"]) is None  # single-answer only


def test_probabilistic_family_is_null_without_beliefs_unless_fallback():
    rows = trials("s", mc(4), "A", ["A", "B, C", None])
    s = score(rows)
    for name in ("fallback_share", "brier_index", "nll", "mbs", "abi_uniform", "abi_crowd", "ece"):
        assert one(s[name]) is None, name
    s = score(rows, fallback_belief=0.05)
    p = [(0.95 + 0.025) / 2, (0.05 / 3 + 0.95) / 2, (0.05 / 3 + 0.95) / 2, (0.05 / 3 + 0.025) / 2]
    o = [1, 0, 0, 0]
    assert one(s["fallback_share"]) == 1.0
    assert one(s["brier_index"]) == pytest.approx(100 * (1 - math.sqrt(sum((a - b) ** 2 for a, b in zip(p, o)) / 4)))


def test_fallback_skips_sets_covering_every_option():
    rows = trials("y", YES_NO, "A", ["A, B"])
    assert one(score(rows, fallback_belief=0.05)["brier_index"]) is None


def test_crowd_baseline_is_the_other_models_mean():
    rows = trials("y", YES_NO, "A", ["A"], model="a", beliefs=[[0.8, 0.2]])
    rows += trials("y", YES_NO, "A", ["A"], model="b", beliefs=[[0.6, 0.4]])
    rows += trials("y", YES_NO, "A", ["A"], model="c", beliefs=[[0.4, 0.6]])
    s = score(rows)
    crowd_a = [0.5, 0.5]
    abs_a = (0.2**2 + 0.2**2) / 2 - ((crowd_a[0] - 1) ** 2 + crowd_a[1] ** 2) / 2
    assert s["abi_crowd"]["a"] == pytest.approx(100 * (1 + math.sqrt(-abs_a)))
    # crowd for c = [0.7, 0.3]
    abs_c = (0.6**2 + 0.6**2) / 2 - (0.3**2 + 0.3**2) / 2
    assert s["abi_crowd"]["c"] == pytest.approx(100 * (1 - math.sqrt(abs_c)))


# ---------------------------------------------------------------------------------------
# Cost


def test_costs_include_call_errors_and_use_the_max_trial_count():
    rows = trials("y", YES_NO, "A", ["A", ("error", "server_5xx"), "A"], cost=0.5)
    rows += trials("s", mc(3), "A", ["A"], cost=1.0)
    s = score(rows)
    assert one(s["total_cost_usd"]) == pytest.approx(2.5)
    composite = (0.15 * 1.0 + 0.70 * 1.0) / 0.85
    assert one(s["per_correct_cost_usd"]) == pytest.approx(2.5 / (2 * 3 * composite))


def test_per_correct_cost_is_null_when_nothing_is_right():
    s = score(trials("y", YES_NO, "A", ["B"], cost=1.0))
    assert one(s["composite_accuracy"]) == 0.0
    assert one(s["per_correct_cost_usd"]) is None
