"""Parser Ψ (paper Algorithm 2): the last ``\\boxed{…}`` of the final answer → letters or ⊥.

Returns the canonical answer string (:func:`oracleproto.letters.format_answer`, the same
format as the question table's ``answer``) or ``None`` (⊥) for every structural defect:
no box, empty payload, an unknown label, a token that is not one letter, a letter out of
range, or — following the paper rather than the reference code — more than one letter on
a single-answer multiple-choice question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from oracleproto.letters import AnswerFormatError, format_answer, letter_index, letters

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_TOKEN_SPLIT = re.compile(r"[,\s]+")


def last_boxed(text: str | None) -> str | None:
    """Stripped payload of the last ``\\boxed{…}`` (braces do not nest), or None."""
    if not text:
        return None
    matches = _BOXED.findall(text)
    if not matches:
        return None
    payload = matches[-1].strip()
    return payload or None


def parse_answer(
    text: str | None,
    question_type: str,
    options: Sequence[str],
    choice_type: str = "multi",
) -> str | None:
    """Parse a model's final output for one question; None is ⊥ (unparseable)."""
    payload = last_boxed(text)
    if payload is None:
        return None
    if question_type == "yes_no":
        word = payload.lower()
        return format_answer([0]) if word == "yes" else format_answer([1]) if word == "no" else None
    if question_type == "binary_named":
        wanted = payload.lower()
        for index, label in enumerate(options):
            if label.strip().lower() == wanted:
                return format_answer([index])
        return None
    if question_type == "multiple_choice":
        # Model text is read more loosely than the answer grammar (any run of commas and
        # whitespace separates letters); each token must still be one option letter.
        tokens = [tok for tok in _TOKEN_SPLIT.split(payload) if tok]
        try:
            indices = {letter_index(tok) for tok in tokens}
        except AnswerFormatError:
            return None
        if not indices or max(indices) >= len(options):
            return None
        if choice_type == "single" and len(indices) != 1:
            return None
        return format_answer(indices)
    return None


_BELIEF = re.compile(r"<belief>(.*?)</belief>", re.DOTALL)
BELIEF_SUM_TOLERANCE = 1e-3


def parse_belief(text: str | None, options: Sequence[str], choice_type: str) -> list[float] | None:
    """Probability vector in option order from the last ``<belief>{json}</belief>`` block, or None.

    The JSON object's ``probabilities`` must have exactly one key per option letter, each a
    real number in [0, 1] (booleans rejected); on a single-answer question they must sum to
    1 within 1e-3. The belief never changes the boxed answer.
    """
    if not text:
        return None
    blocks = _BELIEF.findall(text)
    if not blocks:
        return None
    try:
        obj = json.loads(blocks[-1])
    except json.JSONDecodeError:
        return None
    probabilities = obj.get("probabilities") if isinstance(obj, dict) else None
    wanted = letters(len(options))
    if not isinstance(probabilities, dict) or sorted(probabilities) != sorted(wanted):
        return None
    vector: list[float] = []
    for symbol in wanted:
        value = probabilities[symbol]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            return None
        vector.append(float(value))
    if choice_type == "single" and abs(sum(vector) - 1.0) > BELIEF_SUM_TOLERANCE:
        return None
    return vector
