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

from oracleproto.scoring.prepare import BUCKETS
from oracleproto.scoring.registry import (
    METRICS,
    ScoreContext,
    brier_index_from_mean,
    cohen_from_sums,
    cohen_sums,
    composite_from_bucket_means,
    fss_terms,
    safe_ratio,
)

CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
CHUNK_BYTES = 64 * 2**20  # weight-matrix chunk size: bounds peak memory
# Paired sums reach the same value by different float paths (subtracting dropped questions),
# so a replicate difference this small is a tie, not a win.
TIE_TOLERANCE = 1e-12
FLOAT64_MANTISSA_BITS = 52


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
# Column matrix, atoms and weights


@dataclass(frozen=True)
class ColumnMatrix:
    """X: one row per question of the resampled universe, one block of columns per
    (headline, model). Rows are grouped into *atoms*: runs of questions on which the same
    set of models has counted trials. The questions two models share are a union of
    atoms, so paired sums are sums of per-atom sums — one pass over X per replicate chunk
    whatever the number of pairs."""

    values: np.ndarray  # (n_questions, n_columns), rows in atom order
    questions: np.ndarray  # question index of each row
    blocks: dict[tuple[str, int], slice]
    atom_bounds: np.ndarray  # atom a holds rows atom_bounds[a] : atom_bounds[a + 1]
    atom_members: np.ndarray  # (n_atoms, n_models) bool: model has counted trials there

    def shared_atoms(self, a: int, b: int) -> np.ndarray:
        return np.flatnonzero(self.atom_members[:, a] & self.atom_members[:, b])

    def shared_questions(self, a: int, b: int) -> int:
        sizes = np.diff(self.atom_bounds)
        return int(sizes[self.shared_atoms(a, b)].sum())


def on_exact_grid(values: np.ndarray, max_weight_total: int) -> np.ndarray:
    """``values`` rounded, column by column, to the coarsest multiple of a power of two
    2^-k for which every weighted sum ``w @ values`` (non-negative integer weights adding up
    to at most ``max_weight_total``) and each of its partial sums is a float64 exactly.

    Float addition is then exact, so a matrix product gives the same bits whatever order
    the BLAS kernel (chosen per CPU) adds in: artifacts do not depend on the machine. The
    rounding moves a value by at most 2^-(k+1), which for realistic tables is below 1e-10.
    """
    magnitude = np.abs(values).max(axis=0, initial=0.0) * max(max_weight_total, 1)
    exponent = np.floor(np.log2(magnitude, out=np.ones_like(magnitude), where=magnitude > 0))
    k = np.clip(FLOAT64_MANTISSA_BITS - 1 - exponent, 0, 1000).astype(np.int64)
    scale = np.ldexp(1.0, k)
    return np.round(values * scale) / scale


def column_matrix(ctx: ScoreContext, headlines: tuple[Headline, ...]) -> ColumnMatrix:
    """X over the questions some model has counted trials (or a belief vector) on."""
    cells = ctx.data.cells
    cell_columns = [h.columns(ctx) for h in headlines]
    used = cells.has_counted.copy()
    for cols in cell_columns:
        used |= np.any(cols != 0, axis=1)
    universe = np.unique(cells.question[used])
    counted = np.zeros((len(universe), ctx.n_models), dtype=bool)
    row_of_question = np.full(len(ctx.data.questions.ids), -1, dtype=np.int64)
    row_of_question[universe] = np.arange(len(universe))
    take = np.flatnonzero(used)
    rows, models = row_of_question[cells.question[take]], cells.model[take]
    counted[rows[cells.has_counted[take]], models[cells.has_counted[take]]] = True
    # atoms: sort the universe by its membership signature (then by question)
    signatures, atom_of_row = np.unique(counted, axis=0, return_inverse=True)
    order = np.lexsort((np.arange(len(universe)), atom_of_row.ravel()))
    position = np.empty(len(universe), dtype=np.int64)
    position[order] = np.arange(len(universe))
    sizes = np.bincount(atom_of_row.ravel(), minlength=len(signatures))
    parts, blocks, start = [], {}, 0
    for headline, cols in zip(headlines, cell_columns):  # block of model m at start + m·width
        width = cols.shape[1]
        part = np.zeros((len(universe), ctx.n_models, width))
        part[position[rows], models] = cols[take]
        parts.append(part.reshape(len(universe), ctx.n_models * width))
        for model in range(ctx.n_models):
            blocks[(headline.name, model)] = slice(start + model * width, start + (model + 1) * width)
        start += width * ctx.n_models
    values = np.concatenate(parts, axis=1) if parts else np.zeros((len(universe), 0))
    return ColumnMatrix(
        values=on_exact_grid(values, max_weight_total=len(universe)),
        questions=universe[order],
        blocks=blocks,
        atom_bounds=np.concatenate([[0], np.cumsum(sizes)]),
        atom_members=signatures.reshape(len(signatures), ctx.n_models),
    )


def resampled_universe(ctx: ScoreContext) -> np.ndarray:
    """Question indices the bootstrap resamples, in the column order of its weights."""
    return column_matrix(ctx, active_headlines(ctx)).questions


def weighted_headlines(ctx: ScoreContext, weights: np.ndarray) -> dict[str, np.ndarray]:
    """{metric: (replicates, models)} when the j-th question of :func:`resampled_universe`
    counts ``weights[r, j]`` times in replicate r. Weights of ones give the point estimates."""
    headlines = active_headlines(ctx)
    matrix = column_matrix(ctx, headlines)
    sums = np.asarray(weights, dtype=np.float64).reshape(-1, len(matrix.questions)) @ matrix.values
    return {
        h.name: np.stack([h.reduce(sums[:, matrix.blocks[(h.name, m)]], ctx.weights) for m in range(ctx.n_models)], axis=1)
        for h in headlines
    }


def resample_weights(rng: np.random.Generator, n_replicates: int, n_questions: int) -> np.ndarray:
    """(n_replicates, n_questions) counts: each row draws n_questions questions with replacement."""
    draws = rng.integers(0, n_questions, size=(n_replicates, n_questions))
    draws += np.arange(n_replicates)[:, None] * n_questions
    return np.bincount(draws.ravel(), minlength=n_replicates * n_questions).reshape(n_replicates, n_questions).astype(np.float64)


class PairedSums:
    """Weighted column sums for every model (all its questions) and for every pair of
    models (each restricted to the questions both have counted trials for)."""

    def __init__(self, ctx: ScoreContext, headlines: tuple[Headline, ...], matrix: ColumnMatrix) -> None:
        self.ctx, self.headlines, self.matrix = ctx, headlines, matrix
        self.pairs = [(a, b) for a in range(ctx.n_models) for b in range(a + 1, ctx.n_models)]
        self.pair_columns = {
            (a, b): np.concatenate([np.arange(matrix.values.shape[1])[matrix.blocks[(h.name, m)]] for m in (a, b) for h in headlines])
            for a, b in self.pairs
        }
        self.pairs_in_atom = [
            [pair for pair in self.pairs if members[pair[0]] and members[pair[1]]] for members in matrix.atom_members
        ]

    def sums(self, weights: np.ndarray) -> tuple[np.ndarray, dict[tuple[int, int], np.ndarray]]:
        """(full sums, {pair: sums of the pair's columns over its shared questions})."""
        matrix = self.matrix
        full = np.zeros((weights.shape[0], matrix.values.shape[1]))
        paired = {pair: np.zeros((weights.shape[0], len(cols))) for pair, cols in self.pair_columns.items()}
        for atom, pairs in enumerate(self.pairs_in_atom):  # a loop over atoms, not questions
            lo, hi = matrix.atom_bounds[atom], matrix.atom_bounds[atom + 1]
            part = weights[:, lo:hi] @ matrix.values[lo:hi]
            full += part
            for pair in pairs:
                paired[pair] += part[:, self.pair_columns[pair]]
        return full, paired

    def delta(self, paired: np.ndarray, headline: Headline, a: int, b: int) -> np.ndarray:
        """headline(A) − headline(B) from a pair's sums (columns: A's blocks, then B's)."""
        widths = [self.matrix.blocks[(h.name, a)].stop - self.matrix.blocks[(h.name, a)].start for h in self.headlines]
        offset = sum(widths[: self.headlines.index(headline)])
        width = widths[self.headlines.index(headline)]
        half = sum(widths)
        value_a = headline.reduce(paired[:, offset : offset + width], self.ctx.weights)
        value_b = headline.reduce(paired[:, half + offset : half + offset + width], self.ctx.weights)
        delta = value_a - value_b
        return np.where(np.abs(delta) <= TIE_TOLERANCE, 0.0, delta)


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


def _replicates(paired: PairedSums, n_replicates: int, seed: int) -> tuple[dict, dict]:
    """Replicate values per (headline, model) and replicate differences per (headline, a, b)."""
    ctx, headlines, matrix = paired.ctx, paired.headlines, paired.matrix
    n_q = matrix.values.shape[0]
    per_model = {(h.name, m): np.full(n_replicates, np.nan) for h in headlines for m in range(ctx.n_models)}
    deltas = {(h.name, a, b): np.full(n_replicates, np.nan) for h in headlines for a, b in paired.pairs}
    if n_q == 0:
        return per_model, deltas
    rng = np.random.default_rng(seed)
    per_replicate = 16 * n_q + 8 * (matrix.values.shape[1] + sum(len(c) for c in paired.pair_columns.values()))
    chunk = max(1, CHUNK_BYTES // per_replicate)  # depends on the data only: same draws everywhere
    for start in range(0, n_replicates, chunk):
        size = min(chunk, n_replicates - start)
        full, paired_sums = paired.sums(resample_weights(rng, size, n_q))
        rows = slice(start, start + size)
        for h in headlines:
            for m in range(ctx.n_models):
                per_model[(h.name, m)][rows] = h.reduce(full[:, matrix.blocks[(h.name, m)]], ctx.weights)
            for a, b in paired.pairs:
                deltas[(h.name, a, b)][rows] = paired.delta(paired_sums[(a, b)], h, a, b)
    return per_model, deltas


def _comparisons(paired: PairedSums, deltas: dict) -> list[PairComparison]:
    ctx, matrix = paired.ctx, paired.matrix
    _, observed = paired.sums(np.ones((1, matrix.values.shape[0])))
    out: list[PairComparison] = []
    for h in paired.headlines:
        higher = bool(METRICS[h.name].higher_is_better)
        rows = []
        for a, b in paired.pairs:
            n_shared = matrix.shared_questions(a, b)
            if n_shared == 0:
                rows.append((a, b, 0, None, Interval(None, None), None, None))
                continue
            replicate = deltas[(h.name, a, b)]
            delta = _finite_or_none(paired.delta(observed[(a, b)], h, a, b)[0])
            rows.append((a, b, n_shared, delta, percentile_interval(replicate), bootstrap_p_value(replicate), probability_better(replicate, higher)))
        adjusted = holm_adjust([row[5] for row in rows])  # Holm across the pairs of one metric
        for (a, b, n_shared, delta, interval, p, prob), p_holm in zip(rows, adjusted):
            out.append(PairComparison(h.name, ctx.models[a], ctx.models[b], n_shared, delta, interval.low, interval.high, p, p_holm, prob))
    return out


def bootstrap(ctx: ScoreContext, n_replicates: int, seed: int) -> Statistics:
    """Intervals for every headline metric of every model and all pairwise comparisons.
    With ``n_replicates`` = 0 only the observed pairwise differences are filled in."""
    headlines = active_headlines(ctx)
    paired = PairedSums(ctx, headlines, column_matrix(ctx, headlines))
    per_model, deltas = _replicates(paired, n_replicates, seed)
    intervals = {
        ctx.models[m]: {h.name: percentile_interval(per_model[(h.name, m)]) for h in headlines} for m in range(ctx.n_models)
    }
    return Statistics(n_replicates, seed, intervals, tuple(_comparisons(paired, deltas)))
