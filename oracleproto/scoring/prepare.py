"""Reduce a validated trial table to numpy arrays, once: rows → (model, question) cells.

Rows are put in canonical order (model, q_id, trial) first, so every later sum runs in the
same order whatever the input order was: results are invariant to row order bit for bit.
Everything below is whole-column numpy; the only Python loops run over distinct strings,
distinct (k, m) pairs or letter positions, never over trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import get_args

import numpy as np
import pyarrow as pa

from oracleproto.config import Bucket
from oracleproto.contract import MAX_OPTIONS
from oracleproto.exam import (
    TVERSKY_ALPHA,
    TVERSKY_BETA,
    correct_from_masks,
    exam_from_masks,
    hamming_from_masks,
    tversky_from_masks,
)
from oracleproto.lettersets import lowest_letter, set_size
from oracleproto.schema import CHOICE_TYPES, QUESTION_TYPES
from oracleproto.scoring.columns import trial_columns

BUCKETS: tuple[str, ...] = get_args(Bucket)  # the composite's buckets (Eq. 19)
SLICES = ("yes_no", "binary_named", "mc", "mc_single", "mc_multi")  # table rows
ENTROPY_GUARD = 1e-10
_BUCKET_OF_TYPE = {"yes_no": "yes_no", "binary_named": "binary_named", "multiple_choice": "mc"}


@dataclass(frozen=True)
class Questions:
    """One entry per distinct q_id (sorted)."""

    ids: np.ndarray  # str
    n_options: np.ndarray  # k
    gold: np.ndarray  # uint64 mask
    n_gold: np.ndarray  # m
    single: np.ndarray  # bool: choice_type == single
    bucket: np.ndarray  # index into BUCKETS
    cohen_chance: np.ndarray  # p_e,q of Eq. 21
    tversky_chance: np.ndarray  # T_chance of Eq. 23 / 31

    def slice_mask(self, name: str) -> np.ndarray:
        """Questions of a table slice (a bucket, or mc_single / mc_multi)."""
        if name == "mc_single":
            return (self.bucket == BUCKETS.index("mc")) & self.single
        if name == "mc_multi":
            return (self.bucket == BUCKETS.index("mc")) & ~self.single
        return self.bucket == BUCKETS.index(name)


@dataclass(frozen=True)
class Rows:
    """One entry per trial row, in canonical order."""

    source_index: np.ndarray  # row position in the input table
    model: np.ndarray
    question: np.ndarray
    cell: np.ndarray
    pred: np.ndarray  # uint64 mask, 0 when null
    cutoff: np.ndarray
    call_error: np.ndarray
    counted: np.ndarray
    parsed: np.ndarray


@dataclass(frozen=True)
class Cells:
    """Sufficient statistics of one (model, question) pair with at least one row."""

    model: np.ndarray
    question: np.ndarray
    n_rows: np.ndarray
    n_eligible: np.ndarray
    n_counted: np.ndarray
    n_parsed: np.ndarray  # K_eff
    n_call_error: np.ndarray
    n_correct: np.ndarray
    exam_sum: np.ndarray
    tversky_sum: np.ndarray
    hamming_sum: np.ndarray  # over parsed trials of multi-answer questions
    cost_sum: np.ndarray
    modal_count: np.ndarray  # multiplicity of the most frequent identical set (0 if none)
    modal_unique: np.ndarray  # that maximum is reached by exactly one set
    modal_set: np.ndarray  # uint64 mask of the unique modal set (0 otherwise)
    entropy: np.ndarray  # H_q in bits (NaN when K_eff < 2)
    fleiss_multi: np.ndarray  # per-question multi-answer κ (NaN unless multi and K_eff >= 2)

    @property
    def has_counted(self) -> np.ndarray:
        return self.n_counted > 0

    @property
    def exam_mean(self) -> np.ndarray:
        return _ratio(self.exam_sum, self.n_counted)

    @property
    def pass1(self) -> np.ndarray:
        return _ratio(self.n_correct.astype(np.float64), self.n_counted)


@dataclass(frozen=True)
class VoteStrata:
    """Single-answer Fleiss inputs per (model, k) stratum, over questions with K_eff >= 2."""

    model: np.ndarray
    n_options: np.ndarray
    n_questions: np.ndarray
    mean_agreement: np.ndarray  # P̄
    chance_agreement: np.ndarray  # P_e = Σ_j p_j²


@dataclass(frozen=True)
class TrialData:
    """Everything the metric functions read."""

    models: tuple[str, ...]
    questions: Questions
    rows: Rows
    cells: Cells
    strata: VoteStrata


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.divide(numerator, denominator, out=np.full(len(denominator), np.nan), where=denominator > 0)


def tversky_chance(n_options: int, n_gold: int, single: bool) -> float:
    """T_chance: 1/k for single-answer questions, else Eq. 31 under a per-letter coin flip."""
    if single:
        return 1.0 / n_options
    k, m = n_options, n_gold
    total = 0.0
    for tp in range(1, m + 1):
        for fp in range(k - m + 1):
            weight = math.comb(m, tp) * math.comb(k - m, fp) * 2.0 ** (-k)
            total += weight * tp / (tp + TVERSKY_ALPHA * fp + TVERSKY_BETA * (m - tp))
    return total


def _question_table(ids: np.ndarray, first_row: np.ndarray, k: np.ndarray, gold: np.ndarray, qtype: np.ndarray, ctype: np.ndarray) -> Questions:
    n_options, gold_q = k[first_row], gold[first_row]
    single = ctype[first_row] == CHOICE_TYPES.index("single")
    bucket_of_type = np.array([BUCKETS.index(_BUCKET_OF_TYPE[name]) for name in QUESTION_TYPES])
    bucket = bucket_of_type[qtype[first_row]]
    n_gold = set_size(gold_q)
    pairs = np.stack([n_options, n_gold, single.astype(np.int64)], axis=1)
    distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
    chance = np.array([tversky_chance(int(kk), int(mm), bool(ss)) for kk, mm, ss in distinct], dtype=np.float64)
    return Questions(
        ids=ids,
        n_options=n_options,
        gold=gold_q,
        n_gold=n_gold,
        single=single,
        bucket=bucket,
        cohen_chance=np.where(single, 1.0 / n_options, 0.5),
        tversky_chance=chance[inverse.ravel()] if len(chance) else np.zeros(0),
    )


def _runs(cell: np.ndarray, value: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Runs of equal (cell, value), value in [0, n_values): (run cell, run value, run length)."""
    if len(cell) == 0:
        return cell, value, np.zeros(0, dtype=np.int64)
    key = np.sort(cell * n_values + value)  # one int64 sort instead of a two-key lexsort
    start = np.ones(len(key), dtype=bool)
    start[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(start)
    lengths = np.diff(np.append(starts, len(key)))
    return key[starts] // n_values, key[starts] % n_values, lengths


def _modal_sets(n_cells: int, cell: np.ndarray, set_code: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell: count of the most frequent identical set, whether it is unique, its mask."""
    mask_of_code = np.zeros(int(set_code.max()) + 1 if len(set_code) else 0, dtype=np.uint64)
    mask_of_code[set_code] = masks
    run_cell, run_code, run_len = _runs(cell, set_code, len(mask_of_code))
    modal_count = np.zeros(n_cells, dtype=np.int64)
    np.maximum.at(modal_count, run_cell, run_len)
    is_max = run_len == modal_count[run_cell]
    n_max = np.bincount(run_cell[is_max], minlength=n_cells)
    modal_unique = n_max == 1
    modal_set = np.zeros(n_cells, dtype=np.uint64)
    unique_runs = is_max & modal_unique[run_cell]
    modal_set[run_cell[unique_runs]] = mask_of_code[run_code[unique_runs]]
    return modal_count, modal_unique, modal_set


def _binary_entropy(share: np.ndarray) -> np.ndarray:
    inner = (share > 0) & (share < 1)
    value = -(share * np.log2(share + ENTROPY_GUARD) + (1 - share) * np.log2(1 - share + ENTROPY_GUARD))
    return np.where(inner, value, 0.0)


def _binary_fleiss(selected: np.ndarray, raters: np.ndarray) -> np.ndarray:
    """One-row Fleiss κ of (sel, K − sel); 1 when everyone agrees."""
    k = raters.astype(np.float64)
    sel = selected.astype(np.float64)
    agree = (sel == 0) | (sel == k)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (sel**2 + (k - sel) ** 2 - k) / (k * (k - 1))
        share = sel / k
        chance = share**2 + (1 - share) ** 2
        kappa = (observed - chance) / (1 - chance)
    return np.where(agree, 1.0, kappa)


def _multi_answer_consistency(
    n_cells: int, cells_k: np.ndarray, cells_keff: np.ndarray, multi_cell: np.ndarray, cell: np.ndarray, pred: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell mean over letters of binary Fleiss κ and binary entropy (multi-answer, K >= 2)."""
    kappa = np.full(n_cells, np.nan)
    entropy = np.full(n_cells, np.nan)
    target = np.flatnonzero(multi_cell & (cells_keff >= 2))
    if len(target) == 0:
        return kappa, entropy
    kappa_sum = np.zeros(n_cells)
    entropy_sum = np.zeros(n_cells)
    raters = cells_keff[target]
    for position in range(int(cells_k[target].max())):
        bit = ((pred >> np.uint64(position)) & np.uint64(1)).astype(np.float64)
        selected = np.bincount(cell, weights=bit, minlength=n_cells)[target]
        has_letter = cells_k[target] > position
        kappa_sum[target] += np.where(has_letter, _binary_fleiss(selected, raters), 0.0)
        entropy_sum[target] += np.where(has_letter, _binary_entropy(selected / raters), 0.0)
    kappa[target] = kappa_sum[target] / cells_k[target]
    entropy[target] = entropy_sum[target] / cells_k[target]
    return kappa, entropy


def _single_answer_votes(
    n_cells: int, cells: dict[str, np.ndarray], cell: np.ndarray, pred: np.ndarray, n_models: int
) -> tuple[np.ndarray, VoteStrata]:
    """Vote entropy per cell and the per-(model, k) Fleiss strata (from Σ_j n_ij² per cell)."""
    vote = lowest_letter(pred)
    run_cell, run_vote, run_len = _runs(cell, vote, MAX_OPTIONS)
    keff = cells["n_parsed"][run_cell].astype(np.float64)
    square_sum = np.bincount(run_cell, weights=run_len.astype(np.float64) ** 2, minlength=n_cells)
    share = run_len / keff
    entropy = np.bincount(run_cell, weights=-share * np.log2(share + ENTROPY_GUARD), minlength=n_cells)

    # Strata: questions with K_eff >= 2 grouped by (model, k)
    rated = cells["single"] & (cells["n_parsed"] >= 2)
    k = cells["k"]
    max_k = int(k.max()) + 1 if len(k) else 1
    stratum_of_cell = cells["model"] * max_k + k
    raters = cells["n_parsed"].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = (square_sum - raters) / (raters * (raters - 1))
    n_strata = n_models * max_k
    n_q = np.bincount(stratum_of_cell[rated], minlength=n_strata)
    mean_agreement = _ratio(np.bincount(stratum_of_cell[rated], weights=agreement[rated], minlength=n_strata), n_q)
    total_votes = np.bincount(stratum_of_cell[rated], weights=raters[rated], minlength=n_strata)
    run_rated = rated[run_cell]
    vote_key = stratum_of_cell[run_cell[run_rated]] * max_k + run_vote[run_rated]
    votes_per_letter = np.bincount(vote_key, weights=run_len[run_rated].astype(np.float64), minlength=n_strata * max_k)
    shares = votes_per_letter.reshape(n_strata, max_k) / np.where(total_votes > 0, total_votes, 1.0)[:, None]
    chance = (shares**2).sum(axis=1)
    present = np.flatnonzero(n_q)
    strata = VoteStrata(
        model=present // max_k,
        n_options=present % max_k,
        n_questions=n_q[present],
        mean_agreement=mean_agreement[present],
        chance_agreement=chance[present],
    )
    return entropy, strata


def _consistency(
    n_cells: int,
    cell: np.ndarray,
    parsed: np.ndarray,
    multi_row: np.ndarray,
    set_code: np.ndarray,
    pred: np.ndarray,
    cell_info: dict[str, np.ndarray],
    n_models: int,
) -> tuple:
    """Per cell: the modal answer set (count, uniqueness, set), the answer entropy (None
    below two parsed trials), Fleiss' agreement on multi-answer cells, and the vote strata."""
    modal_count, modal_unique, modal_set = _modal_sets(n_cells, cell[parsed], set_code[parsed], pred[parsed])
    single_parsed = parsed & ~multi_row
    single_entropy, strata = _single_answer_votes(n_cells, cell_info, cell[single_parsed], pred[single_parsed], n_models)
    multi_parsed = parsed & multi_row
    n_parsed = cell_info["n_parsed"]
    fleiss_multi, multi_entropy = _multi_answer_consistency(
        n_cells, cell_info["k"], n_parsed, ~cell_info["single"], cell[multi_parsed], pred[multi_parsed]
    )
    entropy = np.where(cell_info["single"], single_entropy, multi_entropy)
    entropy = np.where(n_parsed >= 2, entropy, np.nan)
    return modal_count, modal_unique, modal_set, entropy, fleiss_multi, strata


def prepare(table: pa.Table) -> TrialData:
    """Reduce a table that passed :func:`~oracleproto.scoring.validate.validate_trials`."""
    c = trial_columns(table)
    models, question_ids = c.models, c.question_ids
    order = c.canonical_order
    model_code, question_code = c.model_code[order], c.question_code[order]
    pred_masks, _, pred_valid = c.pred
    pred, parsed_text = pred_masks[order], pred_valid[order]
    gold = c.answer[0][order]
    k = c.n_options[order]
    has_error, cutoff = c.has_error[order], c.cutoff[order]
    cost = c.cost[order]
    qtype, ctype = c.question_type[order], c.choice_type[order]

    n_rows = len(order)
    first_row = np.zeros(len(question_ids), dtype=np.int64)
    first_row[question_code[::-1]] = np.arange(n_rows)[::-1]
    questions = _question_table(question_ids, first_row, k, gold, qtype, ctype)

    new_cell = np.ones(n_rows, dtype=bool)
    new_cell[1:] = (model_code[1:] != model_code[:-1]) | (question_code[1:] != question_code[:-1])
    cell = np.cumsum(new_cell) - 1
    n_cells = int(cell[-1]) + 1 if n_rows else 0
    cell_model, cell_question = model_code[new_cell], question_code[new_cell]

    counted = ~has_error
    parsed = counted & parsed_text
    call_error = has_error & ~cutoff
    pred = np.where(parsed, pred, np.uint64(0))

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(cell[mask], minlength=n_cells)

    def total(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.bincount(cell[mask], weights=values[mask], minlength=n_cells)

    multi_row = ~questions.single[question_code]
    n_parsed = count(parsed)
    cell_info = {
        "model": cell_model,
        "k": questions.n_options[cell_question],
        "single": questions.single[cell_question],
        "n_parsed": n_parsed,
    }
    multi_parsed = parsed & multi_row
    consistency = _consistency(n_cells, cell, parsed, multi_row, c.pred_set_code[order], pred, cell_info, len(models))
    modal_count, modal_unique, modal_set, entropy, fleiss_multi, strata = consistency

    cells = Cells(
        model=cell_model,
        question=cell_question,
        n_rows=count(np.ones(n_rows, dtype=bool)),
        n_eligible=count(~cutoff),
        n_counted=count(counted),
        n_parsed=n_parsed,
        n_call_error=count(call_error),
        n_correct=count(correct_from_masks(pred, gold, parsed)),
        exam_sum=total(exam_from_masks(pred, gold, parsed), counted),
        tversky_sum=total(tversky_from_masks(pred, gold), parsed),
        hamming_sum=total(hamming_from_masks(pred, gold, k), multi_parsed),
        cost_sum=total(cost, np.ones(n_rows, dtype=bool)),
        modal_count=modal_count,
        modal_unique=modal_unique,
        modal_set=modal_set,
        entropy=entropy,
        fleiss_multi=fleiss_multi,
    )
    rows = Rows(
        source_index=order,
        model=model_code,
        question=question_code,
        cell=cell,
        pred=pred,
        cutoff=cutoff,
        call_error=call_error,
        counted=counted,
        parsed=parsed,
    )
    return TrialData(models=tuple(str(m) for m in models), questions=questions, rows=rows, cells=cells, strata=strata)
