"""Probabilistic family (paper B.8, METRICS.md): per-question mean belief vectors → Brier,
NLL, MBS, ABI and (beyond the paper) ECE with a 10-bin reliability diagram.

Vectors are stored flat: the vector of cell c occupies ``offset[c] : offset[c] + k_c``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from oracleproto.lettersets import set_size
from oracleproto.scoring.prepare import TrialData

CLIP = 1e-3
RELIABILITY_BINS = 10


@dataclass(frozen=True)
class BeliefStats:
    """Per-cell scores (NaN where the cell has no vector) and the flat (p, o) pairs."""

    has_vector: np.ndarray
    all_fallback: np.ndarray
    brier_label: np.ndarray  # BS_lab
    brier_decision: np.ndarray  # BS_dec (single-answer cells only)
    nll: np.ndarray
    mbs: np.ndarray  # single-answer cells only
    gamma_uniform: np.ndarray
    gamma_crowd: np.ndarray  # NaN when no other model has a vector for the question
    flat_cell: np.ndarray  # cell of each (cell, option) pair with a vector
    flat_p: np.ndarray
    flat_o: np.ndarray


def _expand(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions of the ranges [start, start + length) and the range each belongs to."""
    owner = np.repeat(np.arange(len(lengths)), lengths)
    offsets = np.cumsum(lengths) - lengths
    within = np.arange(int(lengths.sum())) - np.repeat(offsets, lengths)
    return np.repeat(starts, lengths) + within, owner


def _cell_offsets(sizes: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)


def _leave_one_out_means(
    cell_question: np.ndarray,
    has_vector: np.ndarray,
    n_options: np.ndarray,
    flat_cell: np.ndarray,
    flat_letter: np.ndarray,
    p: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per (cell, letter): mean of the other models' vectors for the cell's question, and per
    cell the number of those models. Sums run over the other models in model order (one
    pass per model rank, never per trial), so two identical forecasters give exactly
    identical crowds — ABI's square root would magnify any subtraction residue."""
    n_cells = len(cell_question)
    rank = np.full(n_cells, -1, dtype=np.int64)
    with_vector = np.flatnonzero(has_vector)
    by_question = with_vector[np.argsort(cell_question[with_vector], kind="stable")]
    group_start = np.ones(len(by_question), dtype=bool)
    group_start[1:] = cell_question[by_question[1:]] != cell_question[by_question[:-1]]
    starts = np.flatnonzero(group_start)
    rank[by_question] = np.arange(len(by_question)) - np.repeat(starts, np.diff(np.append(starts, len(by_question))))
    n_with_vector = np.bincount(cell_question[with_vector], minlength=len(n_options))
    others = np.where(has_vector, n_with_vector[cell_question] - 1, 0)

    q_offset = _cell_offsets(n_options)
    flat_position = q_offset[cell_question][flat_cell] + flat_letter
    flat_rank = rank[flat_cell]
    total = np.zeros(len(flat_cell))
    for r in range(int(rank.max()) + 1 if len(with_vector) else 0):
        of_rank = np.zeros(int(n_options.sum()))
        holders = flat_rank == r
        of_rank[flat_position[holders]] = p[holders]
        total += np.where(flat_rank != r, of_rank[flat_position], 0.0)
    divisor = others[flat_cell]
    return np.divide(total, divisor, out=np.zeros(len(flat_cell)), where=divisor > 0), others


def _reported_beliefs(data: TrialData, table: pa.Table, offset: np.ndarray, sums: np.ndarray, n_vectors: np.ndarray) -> np.ndarray:
    """Add each eligible trial's belief vector into its cell's sums; the rows that had one."""
    rows = data.rows
    has_belief = np.zeros(len(rows.cell), dtype=bool)
    if "belief" not in table.column_names:
        return has_belief
    belief = table["belief"].combine_chunks()
    valid = np.asarray(belief.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    has_belief = valid[rows.source_index] & ~rows.cutoff
    source = rows.source_index[has_belief]
    value_offsets = belief.offsets.to_numpy()
    lengths = (value_offsets[source + 1] - value_offsets[source]).astype(np.int64)
    positions, _ = _expand(value_offsets[source].astype(np.int64), lengths)
    values = belief.values.to_numpy(zero_copy_only=False)  # offsets index the unsliced values
    target_cell = rows.cell[has_belief]
    targets, _ = _expand(offset[target_cell], lengths)
    sums += np.bincount(targets, weights=values[positions].astype(np.float64), minlength=len(sums))
    n_vectors += np.bincount(target_cell, minlength=len(n_vectors))
    return has_belief


def _fallback_beliefs(data: TrialData, fallback_belief: float, has_belief: np.ndarray, offset: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Add an EPS-spread vector built from the boxed answer for each parsed trial without a
    belief; the count of such vectors per cell."""
    rows, questions = data.rows, data.questions
    k_row = questions.n_options[rows.question]
    chosen = set_size(rows.pred)
    use = ~rows.cutoff & rows.parsed & ~has_belief & (chosen < k_row)
    target_cell = rows.cell[use]
    targets, owner = _expand(offset[target_cell], k_row[use])
    letter_position = targets - np.repeat(offset[target_cell], k_row[use])
    picked = (rows.pred[use][owner] >> letter_position.astype(np.uint64)) & np.uint64(1)
    spread = fallback_belief / (k_row[use] - chosen[use])
    values = np.where(picked == 1, 1.0 - fallback_belief, spread[owner])
    sums += np.bincount(targets, weights=values, minlength=len(sums))
    return np.bincount(target_cell, minlength=len(data.cells.model))


def belief_stats(data: TrialData, table: pa.Table, fallback_belief: float | None) -> BeliefStats | None:
    """None when no eligible trial has a vector (no belief column and no fallback)."""
    cells, questions = data.cells, data.questions
    n_cells = len(cells.model)
    k_cell = questions.n_options[cells.question]
    offset = _cell_offsets(k_cell)
    sums = np.zeros(int(k_cell.sum()))
    n_vectors = np.zeros(n_cells, dtype=np.int64)
    has_belief = _reported_beliefs(data, table, offset, sums, n_vectors)
    n_fallback = np.zeros(n_cells, dtype=np.int64)
    if fallback_belief is not None:
        n_fallback = _fallback_beliefs(data, fallback_belief, has_belief, offset, sums)
        n_vectors += n_fallback

    has_vector = n_vectors > 0
    if not has_vector.any():
        return None

    flat_cell = np.repeat(np.arange(n_cells), k_cell)
    flat_letter = np.arange(len(flat_cell)) - offset[flat_cell]
    keep = has_vector[flat_cell]
    p = np.zeros(len(flat_cell))
    p[keep] = sums[keep] / n_vectors[flat_cell[keep]]
    gold = questions.gold[cells.question]
    o = ((gold[flat_cell] >> flat_letter.astype(np.uint64)) & np.uint64(1)).astype(np.float64)

    def per_cell(values: np.ndarray) -> np.ndarray:
        out = np.bincount(flat_cell[keep], weights=values[keep], minlength=n_cells)
        return np.where(has_vector, out, np.nan)

    k = k_cell.astype(np.float64)
    single = questions.single[cells.question]
    clipped = np.clip(p, CLIP, 1 - CLIP)
    square_error = per_cell((p - o) ** 2)
    brier_label = square_error / k
    gold_probability = per_cell(clipped * o)  # single-answer: the gold letter's clipped p
    label_loss = per_cell(o * np.log(clipped) + (1 - o) * np.log(1 - clipped))
    nll = np.where(single, -np.log(gold_probability), -label_loss / k)
    mbs = np.where(single, 100.0 * (np.log2(gold_probability) + 1.0), np.nan)

    m = questions.n_gold[cells.question].astype(np.float64)
    gamma_uniform = np.where(has_vector, (m * (1 / k - 1) ** 2 + (k - m) * (1 / k) ** 2) / k, np.nan)

    loo, others = _leave_one_out_means(cells.question, has_vector, questions.n_options, flat_cell, flat_letter, p)
    crowd_keep = keep & (others[flat_cell] > 0)
    crowd_error = np.bincount(flat_cell[crowd_keep], weights=(loo[crowd_keep] - o[crowd_keep]) ** 2, minlength=n_cells)
    gamma_crowd = np.where(has_vector & (others > 0), crowd_error / k, np.nan)

    return BeliefStats(
        has_vector=has_vector,
        all_fallback=has_vector & (n_fallback == n_vectors),
        brier_label=brier_label,
        brier_decision=np.where(single, square_error, np.nan),
        nll=nll,
        mbs=mbs,
        gamma_uniform=gamma_uniform,
        gamma_crowd=gamma_crowd,
        flat_cell=flat_cell[keep],
        flat_p=p[keep],
        flat_o=o[keep],
    )


def reliability_bins(stats: BeliefStats, cell_model: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (model, bin): count, Σ prediction, Σ outcome over every (question, option) pair."""
    bin_index = np.minimum(np.floor(stats.flat_p * RELIABILITY_BINS), RELIABILITY_BINS - 1).astype(np.int64)
    key = cell_model[stats.flat_cell] * RELIABILITY_BINS + bin_index
    size = n_models * RELIABILITY_BINS
    count = np.bincount(key, minlength=size).reshape(n_models, RELIABILITY_BINS)
    predicted = np.bincount(key, weights=stats.flat_p, minlength=size).reshape(n_models, RELIABILITY_BINS)
    observed = np.bincount(key, weights=stats.flat_o, minlength=size).reshape(n_models, RELIABILITY_BINS)
    return count, predicted, observed


def adjusted_brier_index(mean_adjusted: np.ndarray) -> np.ndarray:
    """ABI (Eq. 33): sign-symmetric square root of the mean adjusted Brier score."""
    root = np.sqrt(np.abs(mean_adjusted))
    return np.where(mean_adjusted >= 0, 100.0 * (1.0 - root), 100.0 * (1.0 + root))
