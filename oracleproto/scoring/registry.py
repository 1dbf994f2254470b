"""Every metric of METRICS.md: one pure function each, registered by name.

A metric function takes a :class:`ScoreContext` and returns one float per model (in
``context.models`` order); NaN means "undefined here" and becomes ``null`` in outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from oracleproto.scoring.prepare import BUCKETS, TrialData
from oracleproto.scoring.probabilistic import (
    BeliefStats,
    adjusted_brier_index,
    reliability_bins,
)


@dataclass(frozen=True)
class ScoreContext:
    data: TrialData
    beliefs: BeliefStats | None
    weights: Mapping[str, float]

    @property
    def models(self) -> tuple[str, ...]:
        return self.data.models

    @property
    def n_models(self) -> int:
        return len(self.data.models)

    @cached_property
    def model_starts(self) -> np.ndarray:
        """Index of each model's first cell (every model has at least one cell)."""
        return np.searchsorted(self.data.cells.model, np.arange(self.n_models))


@dataclass(frozen=True)
class Metric:
    name: str
    family: str
    higher_is_better: bool | None  # None: a count or a descriptor, not a score
    compute: Callable[[ScoreContext], np.ndarray]
    is_count: bool = False


METRICS: dict[str, Metric] = {}


def metric(name: str, family: str, higher_is_better: bool | None, is_count: bool = False):
    """Register ``fn`` under ``name``."""

    def register(fn: Callable[[ScoreContext], np.ndarray]) -> Callable[[ScoreContext], np.ndarray]:
        if name in METRICS:
            raise ValueError(f"metric {name!r} registered twice")
        METRICS[name] = Metric(name, family, higher_is_better, fn, is_count)
        return fn

    return register


# ---------------------------------------------------------------------------------------
# Per-model reductions over cells


def model_sum(ctx: ScoreContext, values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Per-model sum over cells (cells are sorted by model, so one reduceat pass)."""
    values = np.asarray(values, dtype=np.float64)
    if where is not None:
        values = np.where(where, values, 0.0)
    return np.add.reduceat(values, ctx.model_starts) if len(values) else np.zeros(ctx.n_models)


def model_mean(ctx: ScoreContext, values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Unweighted mean over the model's cells selected by ``where``; NaN when none."""
    return safe_ratio(model_sum(ctx, values, where), model_sum(ctx, np.ones(len(where)), where))


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.divide(numerator, denominator, out=np.full(np.broadcast(numerator, denominator).shape, np.nan), where=denominator > 0)


def _cell_question_mask(ctx: ScoreContext, name: str) -> np.ndarray:
    return ctx.data.questions.slice_mask(name)[ctx.data.cells.question]


# ---------------------------------------------------------------------------------------
# Counts and rates


@metric("n_questions", "counts", None, is_count=True)
def n_questions(ctx: ScoreContext) -> np.ndarray:
    return model_sum(ctx, ctx.data.cells.has_counted)


@metric("n_trials", "counts", None, is_count=True)
def n_trials(ctx: ScoreContext) -> np.ndarray:
    return model_sum(ctx, ctx.data.cells.n_counted)


@metric("excluded_by_cutoff", "counts", None, is_count=True)
def excluded_by_cutoff(ctx: ScoreContext) -> np.ndarray:
    return model_sum(ctx, ctx.data.cells.n_eligible == 0)


def _eligible_share(ctx: ScoreContext, numerator: np.ndarray) -> np.ndarray:
    return safe_ratio(model_sum(ctx, numerator), model_sum(ctx, ctx.data.cells.n_eligible))


@metric("validity_rate", "counts", True)
def validity_rate(ctx: ScoreContext) -> np.ndarray:
    return _eligible_share(ctx, ctx.data.cells.n_parsed)


@metric("parse_failure_rate", "counts", False)
def parse_failure_rate(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return _eligible_share(ctx, cells.n_counted - cells.n_parsed)


@metric("call_error_rate", "counts", False)
def call_error_rate(ctx: ScoreContext) -> np.ndarray:
    return _eligible_share(ctx, ctx.data.cells.n_call_error)


# ---------------------------------------------------------------------------------------
# Accuracy


def exam_slice(ctx: ScoreContext, name: str) -> np.ndarray:
    """Per-question exam mean over counted trials, then the unweighted mean over the slice."""
    cells = ctx.data.cells
    where = cells.has_counted & _cell_question_mask(ctx, name)
    return model_mean(ctx, cells.exam_mean, where)


for _slice in ("yes_no", "binary_named", "mc", "mc_single", "mc_multi"):
    metric(f"exam_{_slice}", "accuracy", True)(lambda ctx, _name=_slice: exam_slice(ctx, _name))


def composite_from_bucket_means(bucket_means: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
    """Eq. 19 over the last axis (yes_no, binary_named, mc): weighted mean of the buckets
    that are not NaN, weights renormalised; NaN when no weighted bucket has a value."""
    w = np.array([float(weights.get(name, 0.0)) for name in BUCKETS])
    present = ~np.isnan(bucket_means)
    numerator = np.where(present, bucket_means * w, 0.0).sum(axis=-1)
    denominator = np.where(present, w, 0.0).sum(axis=-1)
    return safe_ratio(numerator, denominator)


@metric("composite_accuracy", "accuracy", True)
def composite_accuracy(ctx: ScoreContext) -> np.ndarray:
    means = np.stack([exam_slice(ctx, name) for name in BUCKETS], axis=-1)
    return composite_from_bucket_means(means, ctx.weights)


@metric("pass1_avg", "accuracy", True)
def pass1_avg(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return model_mean(ctx, cells.pass1, cells.has_counted)


@metric("pass_any_n", "accuracy", True)
def pass_any_n(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return model_mean(ctx, cells.n_correct >= 1, cells.has_counted)


@metric("pass_all_n", "accuracy", True)
def pass_all_n(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return model_mean(ctx, cells.n_correct == cells.n_counted, cells.has_counted)


@metric("mv_acc", "accuracy", True)
def mv_acc(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    won = cells.modal_unique & (cells.modal_count > 0)
    gold = ctx.data.questions.gold[cells.question]
    return model_mean(ctx, cells.modal_set == gold, won)


@metric("mv_gain", "accuracy", True)
def mv_gain(ctx: ScoreContext) -> np.ndarray:
    return mv_acc(ctx) - pass1_avg(ctx)


# ---------------------------------------------------------------------------------------
# Consistency


def cohen_sums(ctx: ScoreContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: (Σ c, counted trials, Σ p_e over counted trials)."""
    cells = ctx.data.cells
    chance = ctx.data.questions.cohen_chance[cells.question]
    return cells.n_correct.astype(np.float64), cells.n_counted.astype(np.float64), cells.n_counted * chance


def cohen_from_sums(correct: np.ndarray, counted: np.ndarray, chance: np.ndarray) -> np.ndarray:
    observed, expected = safe_ratio(correct, counted), safe_ratio(chance, counted)
    return safe_ratio(observed - expected, np.where(expected < 1, 1 - expected, 0.0))


@metric("cohen_kappa", "consistency", True)
def cohen_kappa(ctx: ScoreContext) -> np.ndarray:
    return cohen_from_sums(*(model_sum(ctx, values) for values in cohen_sums(ctx)))


@metric("fleiss_kappa", "consistency", True)
def fleiss_kappa(ctx: ScoreContext) -> np.ndarray:
    cells, strata = ctx.data.cells, ctx.data.strata
    with np.errstate(divide="ignore", invalid="ignore"):
        stratum_kappa = np.where(
            strata.chance_agreement >= 1.0,
            1.0,
            (strata.mean_agreement - strata.chance_agreement) / (1.0 - strata.chance_agreement),
        )
    single_pool = safe_ratio(
        np.bincount(strata.model, weights=stratum_kappa * strata.n_questions, minlength=ctx.n_models),
        np.bincount(strata.model, weights=strata.n_questions, minlength=ctx.n_models),
    )
    single = ctx.data.questions.single[cells.question]
    multi_pool = model_mean(ctx, cells.fleiss_multi, ~single & ~np.isnan(cells.fleiss_multi))
    # pool weights: the model's questions of each choice type with >= 1 eligible trial
    eligible = cells.n_eligible > 0
    weight_single = model_sum(ctx, single & eligible)
    weight_multi = model_sum(ctx, ~single & eligible)
    has_single, has_multi = ~np.isnan(single_pool), ~np.isnan(multi_pool)
    numerator = np.where(has_single, single_pool * weight_single, 0.0) + np.where(has_multi, multi_pool * weight_multi, 0.0)
    denominator = np.where(has_single, weight_single, 0.0) + np.where(has_multi, weight_multi, 0.0)
    return np.where(has_single | has_multi, safe_ratio(numerator, denominator), np.nan)


@metric("mean_entropy", "consistency", False)
def mean_entropy(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return model_mean(ctx, cells.entropy, ~np.isnan(cells.entropy))


@metric("vci", "consistency", True)
def vci(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    rated = cells.n_parsed >= 2
    return model_mean(ctx, safe_ratio(cells.modal_count, cells.n_parsed), rated)


# ---------------------------------------------------------------------------------------
# Skill


def fss_terms(ctx: ScoreContext) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: (s_q, has parsed trials)."""
    cells = ctx.data.cells
    chance = ctx.data.questions.tversky_chance[cells.question]
    mean_tversky = safe_ratio(cells.tversky_sum, cells.n_parsed)
    skill = safe_ratio(mean_tversky - chance, np.where(chance < 1, 1 - chance, 0.0))
    skill = np.where(chance >= 1, 0.0, skill)
    has_parsed = cells.n_parsed > 0
    return np.where(has_parsed, skill, 0.0), has_parsed


@metric("fss", "skill", True)
def fss(ctx: ScoreContext) -> np.ndarray:
    skill, has_parsed = fss_terms(ctx)
    return model_mean(ctx, skill, has_parsed)


@metric("hamming_mc_multi", "skill", True)
def hamming_mc_multi(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    multi = ~ctx.data.questions.single[cells.question]
    return safe_ratio(model_sum(ctx, cells.hamming_sum, multi), model_sum(ctx, cells.n_parsed, multi))


# ---------------------------------------------------------------------------------------
# Probabilistic family (NaN for every model when no vector exists)


def _belief_mean(ctx: ScoreContext, values_of: Callable[[BeliefStats], np.ndarray]) -> np.ndarray:
    if ctx.beliefs is None:
        return np.full(ctx.n_models, np.nan)
    values = values_of(ctx.beliefs)
    return model_mean(ctx, np.nan_to_num(values), ~np.isnan(values))


def brier_index_from_mean(mean_brier: np.ndarray) -> np.ndarray:
    return 100.0 * (1.0 - np.sqrt(mean_brier))


@metric("fallback_share", "probabilistic", None)
def fallback_share(ctx: ScoreContext) -> np.ndarray:
    if ctx.beliefs is None:
        return np.full(ctx.n_models, np.nan)
    return model_mean(ctx, ctx.beliefs.all_fallback, ctx.beliefs.has_vector)


@metric("brier_index", "probabilistic", True)
def brier_index(ctx: ScoreContext) -> np.ndarray:
    return brier_index_from_mean(_belief_mean(ctx, lambda b: b.brier_label))


@metric("brier_index_dec", "probabilistic", True)
def brier_index_dec(ctx: ScoreContext) -> np.ndarray:
    return brier_index_from_mean(_belief_mean(ctx, lambda b: b.brier_decision))


@metric("nll", "probabilistic", False)
def nll(ctx: ScoreContext) -> np.ndarray:
    return _belief_mean(ctx, lambda b: b.nll)


@metric("mbs", "probabilistic", True)
def mbs(ctx: ScoreContext) -> np.ndarray:
    return _belief_mean(ctx, lambda b: b.mbs)


@metric("abi_uniform", "probabilistic", True)
def abi_uniform(ctx: ScoreContext) -> np.ndarray:
    return adjusted_brier_index(_belief_mean(ctx, lambda b: b.brier_label - b.gamma_uniform))


@metric("abi_crowd", "probabilistic", True)
def abi_crowd(ctx: ScoreContext) -> np.ndarray:
    crowd = adjusted_brier_index(_belief_mean(ctx, lambda b: b.brier_label - b.gamma_crowd))
    return np.where(np.isnan(crowd), abi_uniform(ctx), crowd)


@metric("ece", "probabilistic", False)
def ece(ctx: ScoreContext) -> np.ndarray:
    if ctx.beliefs is None:
        return np.full(ctx.n_models, np.nan)
    count, predicted, observed = reliability_bins(ctx.beliefs, ctx.data.cells.model, ctx.n_models)
    return safe_ratio(np.abs(predicted - observed).sum(axis=1), count.sum(axis=1))


# ---------------------------------------------------------------------------------------
# Cost


@metric("total_cost_usd", "cost", False)
def total_cost_usd(ctx: ScoreContext) -> np.ndarray:
    return model_sum(ctx, ctx.data.cells.cost_sum)


def trials_per_question(ctx: ScoreContext) -> np.ndarray:
    """n of Eq. 24: the largest number of trial rows the model has for one question."""
    cells = ctx.data.cells
    out = np.zeros(ctx.n_models)
    np.maximum.at(out, cells.model, cells.n_rows)
    return out


def per_correct_cost(total_cost: np.ndarray, questions: np.ndarray, trials: np.ndarray, composite: np.ndarray) -> np.ndarray:
    """Eq. 24: total / (|D_eval| · n · composite accuracy); NaN when the composite is 0 or NaN."""
    notional_correct = np.asarray(questions, dtype=np.float64) * trials * np.nan_to_num(composite)
    return safe_ratio(total_cost, notional_correct)


@metric("per_correct_cost_usd", "cost", False)
def per_correct_cost_usd(ctx: ScoreContext) -> np.ndarray:
    return per_correct_cost(total_cost_usd(ctx), n_questions(ctx), trials_per_question(ctx), composite_accuracy(ctx))


def compute_all(ctx: ScoreContext) -> dict[str, np.ndarray]:
    """Every registered metric, in registry order."""
    return {name: spec.compute(ctx) for name, spec in METRICS.items()}
