"""Per-trial scores: exam score (Eq. 18), strict correctness, Tversky (Eq. 23), Hamming (Eq. 37).

Scalar forms take answer strings (the export stage's reward uses :func:`exam_score`); the
array forms take bit masks from :mod:`oracleproto.lettersets` so the scorer applies the
very same rule to a million trials at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from oracleproto.lettersets import letter_set_masks, parse_letter_set, set_size

TVERSKY_ALPHA = 2.0  # weight of false positives
TVERSKY_BETA = 0.5  # weight of false negatives


def _gold_mask(answer: str) -> int:
    mask = parse_letter_set(answer)
    if mask is None:
        raise ValueError(f"answer {answer!r} is not a letter set such as 'A' or 'A, C'")
    return mask


def exam_score(pred: str | None, answer: str) -> float:
    """Exam score of one trial (Eq. 18): 0 for a parse failure (None) or any letter outside
    the gold set, else the share of gold letters predicted."""
    gold = _gold_mask(answer)
    if pred is None:
        return 0.0
    predicted = parse_letter_set(pred)
    if predicted is None:
        return 0.0
    return float(exam_from_masks(np.array([predicted], np.uint64), np.array([gold], np.uint64))[0])


def exam_from_masks(pred: np.ndarray, gold: np.ndarray, parsed: np.ndarray | None = None) -> np.ndarray:
    """Vectorised Eq. 18 over masks; rows with ``parsed`` False (or pred 0) score 0."""
    pred = np.asarray(pred, dtype=np.uint64)
    gold = np.asarray(gold, dtype=np.uint64)
    has_false_positive = (pred & ~gold) != 0
    score = set_size(pred & gold) / np.maximum(set_size(gold), 1)
    score[has_false_positive] = 0.0
    if parsed is not None:
        score[~np.asarray(parsed, dtype=bool)] = 0.0
    return score


def exam_scores(
    preds: pa.Array | pa.ChunkedArray | Sequence[str | None] | np.ndarray,
    answers: pa.Array | pa.ChunkedArray | Sequence[str] | np.ndarray,
) -> np.ndarray:
    """Vectorised :func:`exam_score` over string columns; a null or unparseable pred scores 0."""
    pred_masks, _, pred_valid = letter_set_masks(preds)
    gold_masks, _, gold_valid = letter_set_masks(answers)
    if len(pred_masks) != len(gold_masks):
        raise ValueError(f"preds and answers differ in length ({len(pred_masks)} vs {len(gold_masks)})")
    if not gold_valid.all():
        row = int(np.flatnonzero(~gold_valid)[0])
        raise ValueError(f"row {row}: answer is not a letter set such as 'A' or 'A, C'")
    return exam_from_masks(pred_masks, gold_masks, pred_valid)


def correct_from_masks(pred: np.ndarray, gold: np.ndarray, parsed: np.ndarray) -> np.ndarray:
    """Strict correctness c: the parsed set equals the gold set."""
    return np.asarray(parsed, dtype=bool) & (pred == gold)


def tversky_from_masks(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Tversky similarity tp / (tp + α·|P\\G| + β·|G\\P|), 0 when tp = 0."""
    tp = set_size(pred & gold).astype(np.float64)
    fp = set_size(pred & ~gold)
    fn = set_size(gold & ~pred)
    denominator = tp + TVERSKY_ALPHA * fp + TVERSKY_BETA * fn
    return np.divide(tp, denominator, out=np.zeros_like(tp), where=tp > 0)


def hamming_from_masks(pred: np.ndarray, gold: np.ndarray, n_options: np.ndarray) -> np.ndarray:
    """Hamming partial credit 1 − |P Δ G| / k."""
    return 1.0 - set_size(pred ^ gold) / np.asarray(n_options, dtype=np.float64)
