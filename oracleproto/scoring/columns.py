"""Numeric encodings of a trial table's columns, computed lazily and shared.

The validation rules and the reduction to cells need the same encodings (letter-set masks,
sorted model and question codes, option counts...). ``trial_columns(table)`` returns one
:class:`TrialColumns` per table object, so each encoding is computed once per scoring run.
All arrays are in the table's row order; nulls get a neutral value and a presence flag.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.contract import QuestionColumns, failing_rows, rules_reading
from oracleproto.lettersets import letter_set_codes, letter_set_masks
from oracleproto.schema import CHOICE_TYPES, CUTOFF_SKIP, ERROR_KINDS, QUESTION_TYPES

# The question columns a trial row carries, and the contract rules that read only them.
QUESTION_COLUMNS = ("question_type", "choice_type", "options", "answer")
QUESTION_RULES = rules_reading(QUESTION_COLUMNS)


def _bools(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)


def _category_codes(column: pa.ChunkedArray, values: tuple[str, ...]) -> np.ndarray:
    """Index of each row's value in ``values``; -1 for null, -2 for anything else."""
    codes = pc.index_in(column, value_set=pa.array(values)).combine_chunks()
    out = codes.fill_null(-2).to_numpy(zero_copy_only=False).astype(np.int64)
    out[_bools(column.is_null())] = -1
    return out


def _sorted_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct non-null values, code of each row into them; -1 for null)."""
    encoded = pc.dictionary_encode(column.combine_chunks())
    values = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    order = np.argsort(values.astype(str), kind="stable") if len(values) else np.zeros(0, dtype=np.int64)
    rank = np.empty(len(values) + 1, dtype=np.int64)
    rank[order] = np.arange(len(values))
    rank[-1] = -1
    codes = encoded.indices.fill_null(len(values)).to_numpy(zero_copy_only=False).astype(np.int64)
    return values[order], rank[codes]


class TrialColumns:
    """Lazily computed numpy views of one trial table (types already normalised)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.n_rows = table.num_rows

    @cached_property
    def _models(self) -> tuple[np.ndarray, np.ndarray]:
        return _sorted_codes(self.table["model"])

    @property
    def models(self) -> np.ndarray:
        return self._models[0]

    @property
    def model_code(self) -> np.ndarray:
        return self._models[1]

    @cached_property
    def _questions(self) -> tuple[np.ndarray, np.ndarray]:
        return _sorted_codes(self.table["q_id"])

    @property
    def question_ids(self) -> np.ndarray:
        return self._questions[0]

    @property
    def question_code(self) -> np.ndarray:
        return self._questions[1]

    @cached_property
    def trial(self) -> np.ndarray:
        return self.table["trial"].combine_chunks().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)

    @cached_property
    def cost(self) -> np.ndarray:
        return self.table["cost_usd"].combine_chunks().fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64)

    @cached_property
    def answer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(masks, present, valid)."""
        return letter_set_masks(self.table["answer"])

    @cached_property
    def _pred(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return letter_set_codes(self.table["pred"])

    @property
    def pred(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(masks, present, valid)."""
        return self._pred[:3]

    @property
    def pred_set_code(self) -> np.ndarray:
        """Dense code per distinct predicted set (-1 where null or invalid)."""
        return self._pred[3]

    @cached_property
    def question_type(self) -> np.ndarray:
        """Index into QUESTION_TYPES (-1 null, -2 unknown)."""
        return _category_codes(self.table["question_type"], QUESTION_TYPES)

    @cached_property
    def choice_type(self) -> np.ndarray:
        """Index into CHOICE_TYPES (-1 null, -2 unknown)."""
        return _category_codes(self.table["choice_type"], CHOICE_TYPES)

    @cached_property
    def error(self) -> np.ndarray:
        """Index into ERROR_KINDS (-1 null, -2 unknown)."""
        return _category_codes(self.table["error"], ERROR_KINDS)

    @property
    def has_error(self) -> np.ndarray:
        return self.error != -1

    @property
    def cutoff(self) -> np.ndarray:
        return self.error == ERROR_KINDS.index(CUTOFF_SKIP)

    @cached_property
    def n_options(self) -> np.ndarray:
        """Number of option labels (0 where options is null)."""
        lengths = pc.list_value_length(self.table["options"]).fill_null(0)
        return np.asarray(lengths.to_numpy(), dtype=np.int64) if self.n_rows else np.zeros(0, dtype=np.int64)

    @cached_property
    def options_present(self) -> np.ndarray:
        return _bools(self.table["options"].is_valid())

    @cached_property
    def options_code(self) -> np.ndarray:
        """Code of each row's label list, -1 where options is null or holds a null label.
        Lists are compared through their labels joined by the unit separator together with
        their length."""
        joined = pc.binary_join(self.table["options"], "\x1f")  # null if any label is null
        codes = pc.dictionary_encode(joined)
        return np.concatenate(
            [chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64) for chunk in codes.chunks]
            or [np.zeros(0, dtype=np.int64)]
        )

    @cached_property
    def _question_verdicts(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(each row's question among the first rows of the q_ids, rule name → failing
        questions)."""
        first_rows = np.unique(self.first_row_of_question)
        questions = QuestionColumns(self.table.select(list(QUESTION_COLUMNS)).take(pa.array(first_rows)))
        return np.searchsorted(first_rows, self.first_row_of_question), failing_rows(questions, QUESTION_RULES, present_only=True)

    def question_rule_failing(self, name: str) -> np.ndarray:
        """Rows whose question breaks the question-contract rule ``name`` (one of
        QUESTION_RULES). A question is judged once, on the first row of its q_id, and every
        row of the q_id shows the verdict (a row that differs from that first row breaks the
        scorer's own question_fields_agree); null cells are left to the not-null check."""
        question, failing = self._question_verdicts
        return failing[name][question]

    @cached_property
    def canonical_order(self) -> np.ndarray:
        """Row positions sorted by (model, q_id, trial) (a stable sort, so it is the
        identity when the table is already in that order, as the evaluator writes it)."""
        model, question, trial = self.model_code, self.question_code, self.trial
        ascending = (model[1:] > model[:-1]) | (
            (model[1:] == model[:-1]) & ((question[1:] > question[:-1]) | ((question[1:] == question[:-1]) & (trial[1:] >= trial[:-1])))
        )
        if ascending.all():  # one linear pass instead of a three-key sort
            return np.arange(self.n_rows)
        return np.lexsort((trial, question, model))

    @cached_property
    def first_row_of_question(self) -> np.ndarray:
        """For each row, the first row (in table order) with the same q_id."""
        code = self.question_code
        first = np.full(len(self.question_ids) + 1, -1, dtype=np.int64)
        rows = np.arange(self.n_rows)
        first[code[::-1]] = rows[::-1]  # the last write per code is its first row
        return first[code]


_last: tuple[weakref.ref, TrialColumns] | None = None


def trial_columns(table: pa.Table) -> TrialColumns:
    """The encodings of ``table``, shared by every caller that passes the same table object."""
    global _last
    if _last is not None and _last[0]() is table:
        return _last[1]
    columns = TrialColumns(table)
    _last = (weakref.ref(table), columns)
    return columns
