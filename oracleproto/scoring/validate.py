"""The scorer's input contract: ``TrialSchema`` (pandera, pyarrow backend) and its rules.

Each rule is a vectorised function of the table's shared encodings
(:class:`~oracleproto.scoring.columns.TrialColumns`) returning the mask of failing rows:
the trial rules below, and the question contract's rules (:mod:`oracleproto.contract`) on
the question columns each trial row carries, under the contract's names. The pandera model
runs them as dataframe checks, and :func:`validate_trials` turns any failure into one clear
error that names the rule, the field and the first offending rows by (model, q_id, trial).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandera.pyarrow as ppa
import pyarrow as pa
from pandera.errors import SchemaErrors

from oracleproto import contract
from oracleproto.arrays import iso_dates
from oracleproto.config import EndTimeRange
from oracleproto.errors import InputError, shown
from oracleproto.lettersets import full_mask
from oracleproto.schema import ERROR_KINDS, TRIAL_CORE_SCHEMA
from oracleproto.scoring.columns import QUESTION_RULES, TrialColumns, trial_columns

BELIEF_FIELD = pa.field("belief", pa.list_(pa.float64()))
MAX_ROWS_NAMED = 3  # offending rows quoted per rule




# ---------------------------------------------------------------------------------------
# Rules: each returns the mask of failing rows (nulls only ever fail `not_null`)


def error_kind_known(c: TrialColumns) -> np.ndarray:
    return c.error == -2


def trial_positive(c: TrialColumns) -> np.ndarray:
    return c.trial < 1


def cost_non_negative(c: TrialColumns) -> np.ndarray:
    return ~(np.isfinite(c.cost) & (c.cost >= 0))


def pred_is_letter_set(c: TrialColumns) -> np.ndarray:
    _, present, valid = c.pred
    return present & ~valid


def pred_within_options(c: TrialColumns) -> np.ndarray:
    masks, _, valid = c.pred
    return valid & c.options_present & ((masks & ~full_mask(np.clip(c.n_options, 0, contract.MAX_OPTIONS))) != 0)


def pred_null_when_error(c: TrialColumns) -> np.ndarray:
    _, present, _ = c.pred
    return present & c.has_error


def belief_matches_options(c: TrialColumns) -> np.ndarray:
    table = c.table
    if "belief" not in table.column_names:
        return np.zeros(c.n_rows, dtype=bool)
    belief = table["belief"].combine_chunks()
    present = np.asarray(belief.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    offsets = belief.offsets.to_numpy().astype(np.int64)
    bad = present & (np.diff(offsets) != c.n_options)
    values = belief.values.fill_null(np.nan).to_numpy(zero_copy_only=False).astype(np.float64)
    bad_value = np.flatnonzero(~(np.isfinite(values) & (values >= 0) & (values <= 1)))
    if len(bad_value):
        owner = np.searchsorted(offsets[1:], bad_value, side="right")
        inside = (owner < c.n_rows) & (bad_value >= offsets[0])
        bad[owner[inside][present[owner[inside]]]] = True
    return bad


def unique_trial(c: TrialColumns) -> np.ndarray:
    order = c.canonical_order
    model, question, trial = c.model_code[order], c.question_code[order], c.trial[order]
    same_as_next = (model[1:] == model[:-1]) & (question[1:] == question[:-1]) & (trial[1:] == trial[:-1])
    repeated = np.zeros(c.n_rows, dtype=bool)
    repeated[1:] |= same_as_next
    repeated[:-1] |= same_as_next
    out = np.zeros(c.n_rows, dtype=bool)
    out[order] = repeated
    return out


def question_fields_agree(c: TrialColumns) -> np.ndarray:
    """Rows of one q_id (any model) carry the same question_type, choice_type, options, answer."""
    first = c.first_row_of_question
    bad = (c.question_type != c.question_type[first]) | (c.choice_type != c.choice_type[first])
    masks, present, _ = c.answer
    bad |= (masks != masks[first]) | (present != present[first])
    bad |= (c.options_code != c.options_code[first]) | (c.n_options != c.n_options[first])
    return bad


@dataclass(frozen=True)
class Rule:
    name: str
    field: str
    says: str
    failing: Callable[[TrialColumns], np.ndarray]


def _question_rule(rule: contract.Rule) -> Rule:
    """A rule of the question contract, judged on the question columns of the trial rows."""

    def failing(c: TrialColumns) -> np.ndarray:
        return c.question_rule_failing(rule.name)

    return Rule(rule.name, rule.field, rule.message, failing)


RULES: tuple[Rule, ...] = (
    Rule("error_kind_known", "error", f"error is null or one of {', '.join(ERROR_KINDS)}", error_kind_known),
    Rule("trial_positive", "trial", "trial is a 1-based index (>= 1)", trial_positive),
    Rule("cost_non_negative", "cost_usd", "cost_usd is finite and >= 0", cost_non_negative),
    *(_question_rule(rule) for rule in QUESTION_RULES),
    Rule("pred_is_letter_set", "pred", "pred is null or option letters like 'A' or 'A, C'", pred_is_letter_set),
    Rule("pred_within_options", "pred", "pred uses only letters of the question's options", pred_within_options),
    Rule("pred_null_when_error", "pred", "pred is null on rows with an error (no answer was produced)", pred_null_when_error),
    Rule("belief_matches_options", "belief", "belief is null or one probability in [0, 1] per option", belief_matches_options),
    Rule("unique_trial", "trial", "there is one row per (model, q_id, trial)", unique_trial),
    Rule("question_fields_agree", "q_id", "all rows of a q_id share question_type, choice_type, options and answer", question_fields_agree),
)


def _rule_check(rule: Rule):
    def check(cls, data) -> pa.Array:
        return pa.array(~rule.failing(trial_columns(data.table)), type=pa.bool_())

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

    # one pandera dataframe check per rule, defined in the class namespace where pandera collects them
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
        raise InputError(f"trial table: column {field.name!r} has type {column.type}, expected {field.type} ({exc})") from exc
    return table.set_column(table.schema.get_field_index(field.name), field.name, cast)


def normalise_types(table: pa.Table) -> pa.Table:
    """Cast the scorer's columns to their contract types (JSON-lines input infers loosely)."""
    missing = [name for name in TRIAL_CORE_SCHEMA.names if name not in table.column_names]
    if missing:
        raise InputError(f"trial table: missing column(s) {', '.join(missing)} (required: {', '.join(TRIAL_CORE_SCHEMA.names)})")
    fields = list(TRIAL_CORE_SCHEMA) + ([BELIEF_FIELD] if "belief" in table.column_names else [])
    for field in fields:
        table = _cast_column(table, field)
    return table


def _row_label(table: pa.Table, row: int) -> str:
    model, q_id, trial = (table[name][row].as_py() for name in ("model", "q_id", "trial"))
    return f"row {row} (model={_text(model)}, q_id={_text(q_id)}, trial={trial})"


def _text(value: str | None) -> str:
    return shown(value) if isinstance(value, str) else repr(value)


def _bounds_problems(table: pa.Table, end_times: EndTimeRange | None) -> list[str]:
    """The contract's bounds, checked before any rule encodes the table: an over-long model
    label or q_id (encoding it per row would take memory in proportion to its length times
    the rows), and an end_time outside the plausible range when the table carries one."""
    problems = []
    for name in ("model", "q_id"):
        failing = contract.too_long(table[name])
        if failing.any():
            problems.append(_describe(table, "id_too_long", name, f"{name} has at most {contract.MAX_ID_CHARS} characters", failing))
    if "end_time" in table.column_names:
        rule = contract.RULE_BY_NAME["end_time_out_of_range"]
        ends = table["end_time"].combine_chunks()
        dates = ends if pa.types.is_date32(ends.type) else iso_dates(ends.cast(pa.string()))
        columns = contract.QuestionColumns(pa.table({"end_time": dates}), end_times)
        failing = contract.failing_rows(columns, [rule])[rule.name]
        if failing.any():
            says = f"end_time lies in {columns.end_times.end_time_min} … {columns.end_times.end_time_max}"
            problems.append(_describe(table, rule.name, rule.field, says, failing))
    return problems


def _describe(table: pa.Table, rule_name: str, field: str, says: str, failing: np.ndarray) -> str:
    rows = np.flatnonzero(failing)
    named = "; ".join(_row_label(table, int(r)) for r in rows[:MAX_ROWS_NAMED])
    more = f" and {len(rows) - MAX_ROWS_NAMED} more row(s)" if len(rows) > MAX_ROWS_NAMED else ""
    return f"field {field!r} breaks rule {rule_name} ({says}): {named}{more}"


def validate_trials(table: pa.Table, end_times: EndTimeRange | None = None) -> pa.Table:
    """Check ``table`` against :class:`TrialSchema`; return it with contract types.
    ``end_times``: the ``audit`` params section's plausible end_time range (None: its
    defaults), checked when the table carries end_time.

    Raises :class:`InputError` listing every broken rule with its first offending rows.
    """
    table = normalise_types(table)
    bounds = _bounds_problems(table, end_times)
    if bounds:
        raise InputError("trial table is invalid:\n  " + "\n  ".join(bounds))
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
                problems.append(_describe(table, rule.name, rule.field, rule.says, rule.failing(trial_columns(table))))
        if not problems:  # a pandera check we do not map (should not happen): keep its report
            problems.append(str(exc.failure_cases.to_pylist()[:MAX_ROWS_NAMED]))
        raise InputError("trial table is invalid:\n  " + "\n  ".join(problems)) from None
    return table
