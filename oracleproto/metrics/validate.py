"""The scorer's input contract: ``TrialSchema`` (pandera, pyarrow backend) and its rules.

Each rule is a vectorised function ``table -> bool array of failing rows``; the pandera
model runs them as checks, and :func:`validate_trials` turns any failure into one clear
error that names the rule, the field and the first offending rows by (model, q_id, trial).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandera.pyarrow as ppa
import pyarrow as pa
import pyarrow.compute as pc
from pandera.errors import SchemaErrors

from oracleproto.metrics.sets import MAX_OPTIONS, letter_set_masks, set_size
from oracleproto.schema import CHOICE_TYPES, ERROR_KINDS, QUESTION_TYPES, TRIAL_CORE_SCHEMA

BELIEF_FIELD = pa.field("belief", pa.list_(pa.float64()))
MAX_ROWS_NAMED = 3  # offending rows quoted per rule


class TrialTableError(ValueError):
    """The trial table breaks the scorer's contract; the message names rule, field and rows."""


# ---------------------------------------------------------------------------------------
# Column access helpers (nulls never fail a rule other than `not_null`)


def _np(table: pa.Table, name: str, fill) -> np.ndarray:
    return table[name].combine_chunks().fill_null(fill).to_numpy(zero_copy_only=False)


def _option_counts(table: pa.Table) -> np.ndarray:
    return pc.list_value_length(table["options"]).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _outside_options(masks: np.ndarray, n_options: np.ndarray) -> np.ndarray:
    k = np.clip(n_options, 0, MAX_OPTIONS).astype(np.uint64)
    inside = np.where(k >= MAX_OPTIONS, ~np.uint64(0), (np.uint64(1) << np.minimum(k, np.uint64(63))) - np.uint64(1))
    return (masks & ~inside) != 0


def _not_in(table: pa.Table, name: str, allowed: tuple[str, ...]) -> np.ndarray:
    column = table[name]
    ok = pc.or_(pc.is_in(column, value_set=pa.array(allowed)), pc.is_null(column))
    return ~np.asarray(ok.combine_chunks().to_numpy(zero_copy_only=False), dtype=bool)


# ---------------------------------------------------------------------------------------
# Rules: each returns the mask of failing rows


def question_type_known(table: pa.Table) -> np.ndarray:
    return _not_in(table, "question_type", QUESTION_TYPES)


def choice_type_known(table: pa.Table) -> np.ndarray:
    return _not_in(table, "choice_type", CHOICE_TYPES)


def error_kind_known(table: pa.Table) -> np.ndarray:
    return _not_in(table, "error", ERROR_KINDS)


def trial_positive(table: pa.Table) -> np.ndarray:
    return _np(table, "trial", 1) < 1


def cost_non_negative(table: pa.Table) -> np.ndarray:
    cost = _np(table, "cost_usd", 0.0).astype(np.float64)
    return ~(np.isfinite(cost) & (cost >= 0))


def options_count(table: pa.Table) -> np.ndarray:
    k = _option_counts(table)
    flat = pc.list_flatten(table["options"].combine_chunks())
    has_null_label = np.zeros(table.num_rows, dtype=bool)
    if flat.null_count:
        parents = pc.list_parent_indices(table["options"].combine_chunks()).to_numpy()
        has_null_label[parents[np.asarray(flat.is_null().to_numpy(zero_copy_only=False), dtype=bool)]] = True
    present = np.asarray(table["options"].is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return present & ((k < 2) | (k > MAX_OPTIONS) | has_null_label)


def options_match_question_type(table: pa.Table) -> np.ndarray:
    k = _option_counts(table)
    qtype = _np(table, "question_type", "")
    two_way = (qtype == "yes_no") | (qtype == "binary_named")
    return (two_way & (k != 2)) | ((qtype == "multiple_choice") & (k < 3))


def answer_is_letter_set(table: pa.Table) -> np.ndarray:
    _, present, valid = letter_set_masks(table["answer"])
    return present & ~valid


def answer_within_options(table: pa.Table) -> np.ndarray:
    masks, _, valid = letter_set_masks(table["answer"])
    return valid & _outside_options(masks, _option_counts(table))


def choice_type_matches_answer(table: pa.Table) -> np.ndarray:
    masks, _, valid = letter_set_masks(table["answer"])
    ctype = _np(table, "choice_type", "")
    single = set_size(masks) == 1
    return valid & (((ctype == "single") & ~single) | ((ctype == "multi") & single))


def pred_is_letter_set(table: pa.Table) -> np.ndarray:
    _, present, valid = letter_set_masks(table["pred"])
    return present & ~valid


def pred_within_options(table: pa.Table) -> np.ndarray:
    masks, _, valid = letter_set_masks(table["pred"])
    return valid & _outside_options(masks, _option_counts(table))


def pred_null_when_error(table: pa.Table) -> np.ndarray:
    has_pred = np.asarray(table["pred"].is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    has_error = np.asarray(table["error"].is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return has_pred & has_error


def belief_matches_options(table: pa.Table) -> np.ndarray:
    if "belief" not in table.column_names:
        return np.zeros(table.num_rows, dtype=bool)
    belief = table["belief"].combine_chunks()
    present = np.asarray(belief.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    length = pc.list_value_length(belief).fill_null(0).to_numpy(zero_copy_only=False)
    bad = present & (length != _option_counts(table))
    values = pc.list_flatten(belief).fill_null(np.nan).to_numpy(zero_copy_only=False).astype(np.float64)
    bad_value = ~(np.isfinite(values) & (values >= 0) & (values <= 1))
    if bad_value.any():
        parents = pc.list_parent_indices(belief).to_numpy()
        bad[parents[bad_value]] = True
    return bad


def _codes(column: pa.ChunkedArray) -> np.ndarray:
    encoded = pc.dictionary_encode(column.combine_chunks())
    return encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def unique_trial(table: pa.Table) -> np.ndarray:
    if table.num_rows == 0:
        return np.zeros(0, dtype=bool)
    model, question = _codes(table["model"]), _codes(table["q_id"])
    trial = _np(table, "trial", 0).astype(np.int64)
    key = np.stack([model, question, trial], axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return counts[inverse.ravel()] > 1


def question_fields_agree(table: pa.Table) -> np.ndarray:
    """Rows of one q_id (any model) carry the same question_type, choice_type, options, answer."""
    if table.num_rows == 0:
        return np.zeros(0, dtype=bool)
    question = _codes(table["q_id"])
    options_text = pc.binary_join(table["options"].combine_chunks(), "\x1f")
    fields = [_codes(table["question_type"]), _codes(table["choice_type"]), _codes(table["answer"]), _codes(pa.chunked_array([options_text]))]
    first_row = np.full(question.max() + 2, -1, dtype=np.int64)
    order = np.arange(len(question))[::-1]
    first_row[question[order] + 1] = order  # the last write for each q_id is its first row
    reference = first_row[question + 1]
    bad = np.zeros(len(question), dtype=bool)
    for codes in fields:
        bad |= codes != codes[reference]
    return bad


@dataclass(frozen=True)
class Rule:
    name: str
    field: str
    says: str
    failing: Callable[[pa.Table], np.ndarray]


RULES: tuple[Rule, ...] = (
    Rule("question_type_known", "question_type", f"question_type is one of {', '.join(QUESTION_TYPES)}", question_type_known),
    Rule("choice_type_known", "choice_type", f"choice_type is one of {', '.join(CHOICE_TYPES)}", choice_type_known),
    Rule("error_kind_known", "error", f"error is null or one of {', '.join(ERROR_KINDS)}", error_kind_known),
    Rule("trial_positive", "trial", "trial is a 1-based index (>= 1)", trial_positive),
    Rule("cost_non_negative", "cost_usd", "cost_usd is finite and >= 0", cost_non_negative),
    Rule("options_count", "options", f"options has 2 to {MAX_OPTIONS} non-null labels", options_count),
    Rule("options_match_question_type", "options", "yes_no and binary_named have 2 options, multiple_choice >= 3", options_match_question_type),
    Rule("answer_is_letter_set", "answer", "answer is letters joined by ', ' (e.g. 'A' or 'A, C')", answer_is_letter_set),
    Rule("answer_within_options", "answer", "answer uses only letters of the question's options", answer_within_options),
    Rule("choice_type_matches_answer", "choice_type", "choice_type is 'single' iff the answer has exactly one letter", choice_type_matches_answer),
    Rule("pred_is_letter_set", "pred", "pred is null or letters joined by ', '", pred_is_letter_set),
    Rule("pred_within_options", "pred", "pred uses only letters of the question's options", pred_within_options),
    Rule("pred_null_when_error", "pred", "pred is null on rows with an error (no answer was produced)", pred_null_when_error),
    Rule("belief_matches_options", "belief", "belief is null or one probability in [0, 1] per option", belief_matches_options),
    Rule("unique_trial", "trial", "there is one row per (model, q_id, trial)", unique_trial),
    Rule("question_fields_agree", "q_id", "all rows of a q_id share question_type, choice_type, options and answer", question_fields_agree),
)
RULES_BY_NAME = {rule.name: rule for rule in RULES}


def _rule_check(rule: Rule):
    def check(cls, data) -> pa.Array:
        return pa.array(~rule.failing(data.table), type=pa.bool_())

    check.__name__ = rule.name
    return ppa.dataframe_check(check)


class TrialSchema(ppa.DataFrameModel):
    """Input of the scorer: TRIAL_CORE columns (plus optional ``belief``; extra columns pass)."""

    model: pa.string() = ppa.Field(nullable=False)
    q_id: pa.string() = ppa.Field(nullable=False)
    question_type: pa.string() = ppa.Field(nullable=False)
    choice_type: pa.string() = ppa.Field(nullable=False)
    options: pa.list_(pa.string()) = ppa.Field(nullable=False)
    answer: pa.string() = ppa.Field(nullable=False)
    trial: pa.int64() = ppa.Field(nullable=False)
    pred: pa.string() = ppa.Field(nullable=True)
    error: pa.string() = ppa.Field(nullable=True)
    cost_usd: pa.float64() = ppa.Field(nullable=False)

    class Config:
        strict = False

    locals().update({f"_check_{rule.name}": _rule_check(rule) for rule in RULES})


# ---------------------------------------------------------------------------------------
# Entry point


def _cast_column(table: pa.Table, field: pa.Field) -> pa.Table:
    column = table[field.name]
    if column.type == field.type:
        return table
    try:
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        cast = column.cast(field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise TrialTableError(f"trial table: column {field.name!r} has type {column.type}, expected {field.type} ({exc})") from exc
    return table.set_column(table.schema.get_field_index(field.name), field.name, cast)


def normalise_types(table: pa.Table) -> pa.Table:
    """Cast the scorer's columns to their contract types (JSON-lines input infers loosely)."""
    missing = [name for name in TRIAL_CORE_SCHEMA.names if name not in table.column_names]
    if missing:
        raise TrialTableError(f"trial table: missing column(s) {', '.join(missing)} (required: {', '.join(TRIAL_CORE_SCHEMA.names)})")
    fields = list(TRIAL_CORE_SCHEMA) + ([BELIEF_FIELD] if "belief" in table.column_names else [])
    for field in fields:
        table = _cast_column(table, field)
    return table


def _row_label(table: pa.Table, row: int) -> str:
    model, q_id, trial = (table[name][row].as_py() for name in ("model", "q_id", "trial"))
    return f"row {row} (model={model!r}, q_id={q_id!r}, trial={trial})"


def _describe(table: pa.Table, rule_name: str, field: str, says: str, failing: np.ndarray) -> str:
    rows = np.flatnonzero(failing)
    named = "; ".join(_row_label(table, int(r)) for r in rows[:MAX_ROWS_NAMED])
    more = f" and {len(rows) - MAX_ROWS_NAMED} more row(s)" if len(rows) > MAX_ROWS_NAMED else ""
    return f"field {field!r} breaks rule {rule_name} ({says}): {named}{more}"


def validate_trials(table: pa.Table) -> pa.Table:
    """Check ``table`` against :class:`TrialSchema`; return it with contract types.

    Raises :class:`TrialTableError` listing every broken rule with its first offending rows.
    """
    table = normalise_types(table)
    try:
        TrialSchema.validate(table, lazy=True)
    except SchemaErrors as exc:
        failed = {str(name) for name in exc.failure_cases["check"].to_pylist()}
        problems = []
        for name in TRIAL_CORE_SCHEMA.names:  # nullability is checked by pandera itself
            nulls = np.asarray(table[name].is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if "not_nullable" in failed and nulls.any() and not TRIAL_CORE_SCHEMA.field(name).nullable:
                problems.append(_describe(table, "not_null", name, f"{name} is present on every row", nulls))
        for rule in RULES:
            if rule.name in failed:
                problems.append(_describe(table, rule.name, rule.field, rule.says, rule.failing(table)))
        if not problems:  # a pandera check we do not map (should not happen): keep its report
            problems.append(str(exc.failure_cases.to_pylist()[:MAX_ROWS_NAMED]))
        raise TrialTableError("trial table is invalid:\n  " + "\n  ".join(problems)) from None
    return table
