"""Bootstrap intervals and paired model comparisons over questions.

Each headline metric is a function of a few per-question sums (composite: exam sums and
counts per bucket; FSS: Σ s_q and a count; Cohen κ: Σ c, Σ n, Σ n·p_e; ...). A bootstrap
replicate resamples questions with replacement, which only re-weights those sums, so all
replicates of all models are a weight matrix W (replicates × questions) times a column
matrix X (questions × per-model columns) — computed in chunks, never re-grouping trials.
Paired comparisons reuse the same replicates restricted to the questions both models share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from oracleproto.metrics.prepare import BUCKETS
from oracleproto.metrics.registry import (
    METRICS,
    ScoreContext,
    brier_index_from_mean,
    cohen_from_sums,
    cohen_sums,
    composite_from_bucket_means,
    fss_terms,
    safe_ratio,
)

DEFAULT_BOOTSTRAP = 5000
DEFAULT_SEED = 0
CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
CHUNK_BYTES = 64 * 2**20  # weight-matrix chunk size: bounds peak memory
# Paired sums reach the same value by different float paths (subtracting dropped questions),
# so a replicate difference this small is a tie, not a win.
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Headline:
    """A metric with a bootstrap: per-cell columns and a reducer of their (weighted) sums."""

    name: str
    columns: Callable[[ScoreContext], np.ndarray]  # (n_cells, n_columns)
    reduce: Callable[[np.ndarray, Mapping[str, float]], np.ndarray]  # (..., n_columns) -> (...)
    needs_beliefs: bool = False


def _composite_columns(ctx: ScoreContext) -> np.ndarray:
    cells, questions = ctx.data.cells, ctx.data.questions
    counted = cells.has_counted
    exam = np.nan_to_num(cells.exam_mean)
    in_bucket = [questions.slice_mask(name)[cells.question] & counted for name in BUCKETS]
    return np.stack([exam * b for b in in_bucket] + [b.astype(np.float64) for b in in_bucket], axis=1)


def _composite_reduce(sums: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
    n = len(BUCKETS)
    return composite_from_bucket_means(safe_ratio(sums[..., :n], sums[..., n:]), weights)


def _pass1_columns(ctx: ScoreContext) -> np.ndarray:
    cells = ctx.data.cells
    return np.stack([np.nan_to_num(cells.pass1), cells.has_counted.astype(np.float64)], axis=1)


def _fss_columns(ctx: ScoreContext) -> np.ndarray:
    skill, has_parsed = fss_terms(ctx)
    return np.stack([skill, has_parsed.astype(np.float64)], axis=1)


def _mean_reduce(sums: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
    return safe_ratio(sums[..., 0], sums[..., 1])


def _cohen_columns(ctx: ScoreContext) -> np.ndarray:
    return np.stack(cohen_sums(ctx), axis=1)


def _cohen_reduce(sums: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
    return cohen_from_sums(sums[..., 0], sums[..., 1], sums[..., 2])


def _brier_columns(ctx: ScoreContext) -> np.ndarray:
    beliefs = ctx.beliefs
    return np.stack([np.nan_to_num(beliefs.brier_label), beliefs.has_vector.astype(np.float64)], axis=1)


def _brier_reduce(sums: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
    return brier_index_from_mean(safe_ratio(sums[..., 0], sums[..., 1]))


HEADLINES: tuple[Headline, ...] = (
    Headline("composite_accuracy", _composite_columns, _composite_reduce),
    Headline("pass1_avg", _pass1_columns, _mean_reduce),
    Headline("fss", _fss_columns, _mean_reduce),
    Headline("cohen_kappa", _cohen_columns, _cohen_reduce),
    Headline("brier_index", _brier_columns, _brier_reduce, needs_beliefs=True),
)


def active_headlines(ctx: ScoreContext) -> tuple[Headline, ...]:
    return tuple(h for h in HEADLINES if ctx.beliefs is not None or not h.needs_beliefs)


# ---------------------------------------------------------------------------------------
# Column matrix and weights


@dataclass(frozen=True)
class ColumnMatrix:
    """X: one row per resampled question, one block of columns per (headline, model)."""

    values: np.ndarray  # (n_questions, n_columns)
    blocks: dict[tuple[str, int], slice]
    counted: np.ndarray  # (n_models, n_questions) bool: model has counted trials on question


def column_matrix(ctx: ScoreContext, headlines: tuple[Headline, ...]) -> tuple[ColumnMatrix, np.ndarray]:
    """X over the questions some model has counted trials on (the resampled universe);
    also returns those questions' indices."""
    cells = ctx.data.cells
    universe = np.unique(cells.question[cells.has_counted])
    row_of_question = np.full(len(ctx.data.questions.ids), -1, dtype=np.int64)
    row_of_question[universe] = np.arange(len(universe))
    cell_row = row_of_question[cells.question]
    in_universe = cell_row >= 0
    per_headline = [(h, h.columns(ctx)) for h in headlines]
    width = sum(cols.shape[1] for _, cols in per_headline) * ctx.n_models
    values = np.zeros((len(universe), width))
    blocks: dict[tuple[str, int], slice] = {}
    start = 0
    for headline, cols in per_headline:
        for model in range(ctx.n_models):
            block = slice(start, start + cols.shape[1])
            take = in_universe & (cells.model == model)
            values[cell_row[take], block] = cols[take]
            blocks[(headline.name, model)] = block
            start = block.stop
    counted = np.zeros((ctx.n_models, len(universe)), dtype=bool)
    take = in_universe & cells.has_counted
    counted[cells.model[take], cell_row[take]] = True
    return ColumnMatrix(values, blocks, counted), universe


def weighted_headlines(ctx: ScoreContext, weights: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Headline values when question q counts ``weights[r, q]`` times (replicate r).

    Returns the question universe (question indices, the columns of ``weights``) and
    {metric: (replicates, models)}. Weights of ones give the point estimates.
    """
    headlines = active_headlines(ctx)
    matrix, universe = column_matrix(ctx, headlines)
    sums = np.asarray(weights, dtype=np.float64).reshape(-1, len(universe)) @ matrix.values
    values = {
        h.name: np.stack([h.reduce(sums[:, matrix.blocks[(h.name, m)]], ctx.weights) for m in range(ctx.n_models)], axis=1)
        for h in headlines
    }
    return universe, values


def resample_weights(rng: np.random.Generator, n_replicates: int, n_questions: int) -> np.ndarray:
    """(n_replicates, n_questions) counts: each row draws n_questions questions with replacement."""
    draws = rng.integers(0, n_questions, size=(n_replicates, n_questions))
    draws += np.arange(n_replicates)[:, None] * n_questions
    return np.bincount(draws.ravel(), minlength=n_replicates * n_questions).reshape(n_replicates, n_questions).astype(np.float64)


@dataclass(frozen=True)
class Restriction:
    """How to get Σ_q w_q x_q over the questions two models share from the full sums:
    unchanged, minus the few dropped questions, or directly over the kept ones."""

    mode: str  # "full" | "subtract" | "direct"
    questions: np.ndarray  # dropped (subtract) or kept (direct) question rows
    block: np.ndarray  # the block's rows for those questions

    def sums(self, weights: np.ndarray, full_sums: np.ndarray) -> np.ndarray:
        if self.mode == "full":
            return full_sums
        partial = weights[:, self.questions] @ self.block
        return full_sums - partial if self.mode == "subtract" else partial


def restriction(block: np.ndarray, support: np.ndarray, keep: np.ndarray) -> Restriction:
    """``support``: the questions where the block has any non-zero value."""
    drop = support & ~keep
    if not drop.any():
        return Restriction("full", np.zeros(0, dtype=np.int64), block[:0])
    if drop.sum() <= keep.sum():
        rows = np.flatnonzero(drop)
        return Restriction("subtract", rows, block[rows])
    rows = np.flatnonzero(keep)
    return Restriction("direct", rows, block[rows])


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None


@dataclass(frozen=True)
class PairComparison:
    metric: str
    model_a: str
    model_b: str
    n_questions: int
    delta: float | None  # metric(A) − metric(B) on the shared questions
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    prob_a_better: float | None

    @property
    def significant(self) -> bool | None:
        return None if self.p_holm is None else self.p_holm < SIGNIFICANCE


@dataclass(frozen=True)
class Statistics:
    n_replicates: int
    seed: int
    intervals: dict[str, dict[str, Interval]]  # model -> metric -> interval
    pairs: tuple[PairComparison, ...]


def _finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def percentile_interval(replicates: np.ndarray) -> Interval:
    """95 % percentile interval of the finite replicates."""
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return Interval(None, None)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return Interval(float(low), float(high))


def bootstrap_p_value(deltas: np.ndarray) -> float | None:
    """Two-sided: 2 · min(P(Δ* ≤ 0), P(Δ* ≥ 0)), capped at 1, with the add-one estimate
    (count + 1) / (B + 1) of each tail so that B replicates never claim p = 0."""
    finite = deltas[np.isfinite(deltas)]
    if len(finite) == 0:
        return None
    tails = (np.array([np.sum(finite <= 0), np.sum(finite >= 0)]) + 1) / (len(finite) + 1)
    return float(min(1.0, 2 * tails.min()))


def probability_better(deltas: np.ndarray, higher_is_better: bool) -> float | None:
    """Share of replicates where A beats B (ties count half)."""
    finite = deltas[np.isfinite(deltas)]
    if len(finite) == 0:
        return None
    wins = finite > 0 if higher_is_better else finite < 0
    return float(np.mean(wins) + 0.5 * np.mean(finite == 0))


def holm_adjust(p_values: list[float | None]) -> list[float | None]:
    """Holm step-down adjustment over the defined p-values (running max, capped at 1)."""
    defined = [i for i, p in enumerate(p_values) if p is not None]
    order = sorted(defined, key=lambda i: (p_values[i], i))
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


class PairedSums:
    """Per pair of models, how to restrict each model's sums to the questions both have
    counted trials for; and the resulting headline differences A − B."""

    def __init__(self, ctx: ScoreContext, headlines: tuple[Headline, ...], matrix: ColumnMatrix) -> None:
        self.ctx, self.headlines, self.matrix = ctx, headlines, matrix
        self.pairs = [(a, b) for a in range(ctx.n_models) for b in range(a + 1, ctx.n_models)]
        self.shared = {(a, b): matrix.counted[a] & matrix.counted[b] for a, b in self.pairs}
        support = {key: np.any(matrix.values[:, block] != 0, axis=1) for key, block in matrix.blocks.items()}
        self.plans = {
            (h.name, model, a, b): restriction(matrix.values[:, matrix.blocks[(h.name, model)]], support[(h.name, model)], self.shared[(a, b)])
            for h in headlines
            for a, b in self.pairs
            for model in (a, b)
        }

    def delta(self, weights: np.ndarray, full: np.ndarray, headline: Headline, a: int, b: int) -> np.ndarray:
        values = []
        for model in (a, b):
            sums = self.plans[(headline.name, model, a, b)].sums(weights, full[:, self.matrix.blocks[(headline.name, model)]])
            values.append(headline.reduce(sums, self.ctx.weights))
        delta = values[0] - values[1]
        return np.where(np.abs(delta) <= TIE_TOLERANCE, 0.0, delta)


def _replicates(paired: PairedSums, n_replicates: int, seed: int) -> tuple[dict, dict]:
    """Replicate values per (headline, model) and replicate differences per (headline, a, b)."""
    ctx, headlines, matrix = paired.ctx, paired.headlines, paired.matrix
    n_q = matrix.values.shape[0]
    per_model = {(h.name, m): np.full(n_replicates, np.nan) for h in headlines for m in range(ctx.n_models)}
    deltas = {(h.name, a, b): np.full(n_replicates, np.nan) for h in headlines for a, b in paired.pairs}
    if n_q == 0:
        return per_model, deltas
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_BYTES // (16 * n_q))  # depends on the data only: same draws everywhere
    for start in range(0, n_replicates, chunk):
        size = min(chunk, n_replicates - start)
        weights = resample_weights(rng, size, n_q)
        full = weights @ matrix.values
        rows = slice(start, start + size)
        for h in headlines:
            for m in range(ctx.n_models):
                per_model[(h.name, m)][rows] = h.reduce(full[:, matrix.blocks[(h.name, m)]], ctx.weights)
            for a, b in paired.pairs:
                if paired.shared[(a, b)].any():
                    deltas[(h.name, a, b)][rows] = paired.delta(weights, full, h, a, b)
    return per_model, deltas


def _comparisons(paired: PairedSums, deltas: dict) -> list[PairComparison]:
    ctx, matrix = paired.ctx, paired.matrix
    ones = np.ones((1, matrix.values.shape[0]))
    observed_full = ones @ matrix.values
    out: list[PairComparison] = []
    for h in paired.headlines:
        higher = bool(METRICS[h.name].higher_is_better)
        rows = []
        for a, b in paired.pairs:
            n_shared = int(paired.shared[(a, b)].sum())
            if n_shared == 0:
                rows.append((a, b, 0, None, Interval(None, None), None, None))
                continue
            replicate = deltas[(h.name, a, b)]
            observed = _finite_or_none(paired.delta(ones, observed_full, h, a, b)[0])
            rows.append((a, b, n_shared, observed, percentile_interval(replicate), bootstrap_p_value(replicate), probability_better(replicate, higher)))
        adjusted = holm_adjust([row[5] for row in rows])  # Holm across the pairs of one metric
        for (a, b, n_shared, delta, interval, p, prob), p_holm in zip(rows, adjusted):
            out.append(PairComparison(h.name, ctx.models[a], ctx.models[b], n_shared, delta, interval.low, interval.high, p, p_holm, prob))
    return out


def bootstrap(ctx: ScoreContext, n_replicates: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED) -> Statistics:
    """Intervals for every headline metric of every model and all pairwise comparisons.
    With ``n_replicates`` = 0 only the observed pairwise differences are filled in."""
    headlines = active_headlines(ctx)
    matrix, _ = column_matrix(ctx, headlines)
    paired = PairedSums(ctx, headlines, matrix)
    per_model, deltas = _replicates(paired, n_replicates, seed)
    intervals = {
        ctx.models[m]: {h.name: percentile_interval(per_model[(h.name, m)]) for h in headlines} for m in range(ctx.n_models)
    }
    return Statistics(n_replicates, seed, intervals, tuple(_comparisons(paired, deltas)))
