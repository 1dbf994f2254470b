"""Hypothesis properties: ordering of pass rates, ranges, κ ≤ 1, invariance to row order and
to another model's rows."""

import random

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracleproto.letters import answer_indices, format_answer
from oracleproto.scoring.scorer import score_table, summary

OUTCOMES = ("pred", "pred", "pred", "parse_failure", "network", "skipped_training_cutoff")


@st.composite
def questions(draw):
    kind = draw(st.sampled_from(["yes_no", "binary_named", "mc_single", "mc_multi"]))
    k = 2 if kind in ("yes_no", "binary_named") else draw(st.integers(3, 6))
    m = draw(st.integers(2, k)) if kind == "mc_multi" else 1
    gold = draw(st.sets(st.integers(0, k - 1), min_size=m, max_size=m))
    qtype = "multiple_choice" if kind.startswith("mc") else kind
    options = ["Yes", "No"] if kind == "yes_no" else [f"o{i}" for i in range(k)]
    return dict(question_type=qtype, choice_type="multi" if m > 1 else "single", options=options, answer=format_answer(gold))


@st.composite
def trial_rows(draw, model="m", with_beliefs=False):
    n_questions = draw(st.integers(1, 6))
    rows = []
    for q in range(n_questions):
        question = draw(questions())
        k = len(question["options"])
        for trial in range(1, draw(st.integers(1, 4)) + 1):
            outcome = draw(st.sampled_from(OUTCOMES))
            pred = format_answer(draw(st.sets(st.integers(0, k - 1), min_size=1, max_size=k))) if outcome == "pred" else None
            error = outcome if outcome in ("network", "skipped_training_cutoff") else None
            row = dict(question, model=model, q_id=f"q{q}", trial=trial, pred=pred, error=error, cost_usd=draw(st.floats(0, 1)))
            if with_beliefs:
                row["belief"] = draw(st.none() | st.lists(st.floats(0, 1), min_size=k, max_size=k))
            rows.append(row)
    return rows


def scored(rows, **options):
    return summary(score_table(pa.Table.from_pylist(rows), n_bootstrap=0, **options))


RATES = (
    "validity_rate", "parse_failure_rate", "call_error_rate", "exam_yes_no", "exam_binary_named", "exam_mc",
    "exam_mc_single", "exam_mc_multi", "composite_accuracy", "pass1_avg", "pass_any_n", "pass_all_n", "mv_acc",
    "vci", "hamming_mc_multi", "fallback_share", "ece",
)
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(trial_rows(with_beliefs=True))
def test_pass_chain_rates_and_kappas(rows):
    metrics = scored(rows, fallback_belief=0.05)["m"]
    if metrics["pass1_avg"] is not None:
        assert metrics["pass_all_n"] <= metrics["pass1_avg"] + 1e-12
        assert metrics["pass1_avg"] <= metrics["pass_any_n"] + 1e-12
    for name in RATES:
        value = metrics[name]
        assert value is None or -1e-12 <= value <= 1 + 1e-12, (name, value)
    for name in ("cohen_kappa", "fleiss_kappa", "fss"):
        assert metrics[name] is None or metrics[name] <= 1 + 1e-12, (name, metrics[name])
    if metrics["validity_rate"] is not None:
        total = metrics["validity_rate"] + metrics["parse_failure_rate"] + metrics["call_error_rate"]
        assert abs(total - 1) < 1e-12


@PROPERTY_SETTINGS
@given(trial_rows(with_beliefs=True), st.randoms(use_true_random=False))
def test_invariant_to_row_order(rows, rng: random.Random):
    shuffled = list(rows)
    rng.shuffle(shuffled)
    assert scored(shuffled) == scored(rows)


@PROPERTY_SETTINGS
@given(trial_rows(model="a", with_beliefs=True), trial_rows(model="b", with_beliefs=True))
def test_invariant_to_adding_another_models_rows(rows_a, rows_b):
    # the other model answers the same questions (same q_ids must carry the same question)
    questions_of_a = {r["q_id"]: r for r in rows_a}
    rows_b = [dict(r, **{key: questions_of_a[r["q_id"]][key] for key in ("question_type", "choice_type", "options", "answer")})
              if r["q_id"] in questions_of_a else r for r in rows_b]
    rows_b = [dict(r, belief=None) if r.get("belief") is not None and len(r["belief"]) != len(r["options"]) else r for r in rows_b]
    rows_b = [dict(r, pred=None) if r["pred"] and max(answer_indices(r["pred"])) >= len(r["options"]) else r for r in rows_b]
    alone = scored(rows_a)["a"]
    together = scored(rows_a + rows_b)["a"]
    # the crowd baseline is the only metric defined by the other models
    for name in alone:
        if name != "abi_crowd":
            assert together[name] == alone[name], name
