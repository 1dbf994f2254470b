"""The question contract (DESIGN.md §3.1): one table of named rules over question tables.

A rule names the field it checks, says what it requires, and finds the failing rows of a
whole Arrow table at once (pyarrow compute and numpy over the shared encodings of
:class:`QuestionColumns`). Four checks apply the same rules:

* the audit (``corpus/audit.py``) quarantines a raw row under the first rule it breaks, in
  :data:`RULES` order — except the *stored-form* rules, which the audit establishes by
  normalising (canonical answers, "Yes"/"No" labels) and deduplicating rows;
* ``oracleproto validate`` (``corpus/validation.py``) reports every failure by row, id,
  column and rule;
* the scorer (``scoring/validate.py``) applies the rules that read only question columns a
  trial table carries (options, question_type, choice_type, answer);
* evaluation (``harness/questions.py``) refuses a question table with any failure.

Semantics (paper §3): ``single`` ⇔ exactly one gold letter, ``multi`` ⇔ one or more (a
multi-answer question whose verified answer is one option is valid, and is scored as a set);
at least two options, unique after strip + casefold, at most :data:`MAX_OPTIONS`; every
gold letter in range; ``yes_no`` ⇔ options ["Yes", "No"], ``binary_named`` two named
options, ``multiple_choice`` three or more.

Bounds: an id has at most :data:`MAX_ID_CHARS` characters; no id, event or option label is
made only of invisible or control characters (:data:`INVISIBLE_ONLY`); end_time lies in the
plausible range of the ``audit`` params section (``end_time_min`` … ``end_time_max``, with
their defaults in ``config.py``), which every check is given as :class:`EndTimeRange`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import blank, collapse_whitespace
from oracleproto.config import EndTimeRange
from oracleproto.letters import (
    ParsedAnswers,
    canonical_answers,
    count_letters,
    format_answers,
    parse_answers,
)
from oracleproto.schema import CHOICE_TYPES, QUESTION_TYPES, YES_NO_OPTIONS

MAX_OPTIONS = 64  # the scorer holds a letter set in one uint64 bit mask (scoring/sets.py)
MAX_ID_CHARS = 256  # an id is a key, not a text: checked before anything encodes ids
# Text made only of these shows nothing: control and format characters (NUL, zero-width
# space/joiners, BOM, bidi embeddings, overrides and isolates), Unicode spaces, and the
# Hangul and Braille blanks. (RE2 syntax, one vectorised match per column.)
INVISIBLE_ONLY = r"^[\p{Cc}\p{Cf}\p{Z}\s\x{115F}\x{1160}\x{3164}\x{FFA0}\x{2800}]+$"
EPOCH = dt.date(1970, 1, 1)  # day 0 of date32
UNKNOWN = -2  # category code of a value outside its vocabulary (-1 is null)
LABEL_BLOCK = 10_000  # labels hashed per dictionary: a table this small stays in cache
CHUNK_ROWS = 100_000  # rows whose encodings are held at once when a whole table is checked


def _bools(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)


def too_long(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per value: more than MAX_ID_CHARS characters (null: no)."""
    return _bools(pc.fill_null(pc.greater(pc.utf8_length(values), MAX_ID_CHARS), False))


# First UTF-8 bytes of a character INVISIBLE_ONLY may match: ASCII controls and space, DEL,
# and any non-ASCII lead byte (a value starting with a visible ASCII character is visible).
_MAY_HIDE = np.zeros(256, dtype=bool)
_MAY_HIDE[:0x21] = _MAY_HIDE[0x7F:] = True


def _may_hide(values: pa.Array) -> np.ndarray:
    """Per value: could it be made only of invisible characters? (Its first byte, read from
    the UTF-8 buffer in place; exact for a "no".)"""
    n = len(values)
    if values.type != pa.string():
        return np.ones(n, dtype=bool)
    offsets_buffer, data_buffer = values.buffers()[1:3]
    if n == 0 or data_buffer is None:
        return np.zeros(n, dtype=bool)
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[values.offset : values.offset + n + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    nonempty = np.flatnonzero(offsets[1:] > offsets[:-1])
    maybe = np.zeros(n, dtype=bool)
    maybe[nonempty] = _MAY_HIDE[data[offsets[nonempty]]]
    return maybe


def invisible(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per value: not blank, yet made only of invisible or control characters. Only values
    whose first byte may hide go through the regex."""
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    hidden = np.zeros(len(values), dtype=bool)
    maybe = _may_hide(values)
    if maybe.any():
        some = values.filter(pa.array(maybe))
        hidden[maybe] = _bools(pc.fill_null(pc.match_substring_regex(some, INVISIBLE_ONLY), False)) & ~blank(some)
    return hidden


def day_numbers(dates: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """date32 values as days since 1970-01-01 (0 where null): any year, no Python dates."""
    return np.asarray(pc.fill_null(pc.cast(dates, pa.int32()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def day_text(days: np.ndarray) -> list[str]:
    """Days since 1970-01-01 as ISO text, for any year (year 0 included)."""
    return [str(day) for day in np.asarray(days, dtype=np.int64).astype("datetime64[D]")]


def outside(dates: pa.Array | pa.ChunkedArray, end_times: EndTimeRange) -> np.ndarray:
    """Per date32 value: present and outside [end_time_min, end_time_max]."""
    days = day_numbers(dates)
    low, high = ((day - EPOCH).days for day in (end_times.end_time_min, end_times.end_time_max))
    return _bools(pc.is_valid(dates)) & ((days < low) | (days > high))


def _label_codes(labels: pa.Array) -> np.ndarray:
    """A code per label, equal for equal labels (a null label gets a code of its own kind)."""
    encoded = pc.dictionary_encode(labels)
    indices = encoded.indices if encoded.indices.null_count == 0 else encoded.indices.fill_null(len(encoded.dictionary))
    return indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _rows_with_repeated_labels(folded: pa.Array, parents: np.ndarray, n: int) -> np.ndarray:
    """Rows whose (folded) labels repeat: (row, label code) keys sorted, equal neighbours.
    Repeats only count within a row, so label codes come from small dictionaries over
    blocks of whole rows (4x faster than one hash table of a chunk's half-million labels)."""
    repeated = np.zeros(n, dtype=bool)
    if len(folded) < 2:
        return repeated
    # Each block starts at the first label of the row holding every LABEL_BLOCK-th label.
    starts = np.append(np.unique(np.searchsorted(parents, parents[::LABEL_BLOCK])), len(folded))
    codes = np.concatenate([_label_codes(folded.slice(a, b - a)) for a, b in zip(starts[:-1], starts[1:])])
    width = int(codes.max()) + 1
    keys = np.sort(parents.astype(np.int64) * width + codes)
    same = np.flatnonzero(keys[1:] == keys[:-1])
    repeated[keys[same] // width] = True
    return repeated


class QuestionColumns:
    """Encodings of a question-shaped table, computed on first use and shared by the rules
    (and by the audit's normalisation). Columns may be nullable and unnormalised."""

    def __init__(self, table: pa.Table, end_times: EndTimeRange | None = None) -> None:
        self.table = table
        self.n_rows = table.num_rows
        self.end_times = end_times if end_times is not None else EndTimeRange()
        self._columns: dict[str, pa.Array] = {}
        self._categories: dict[str, np.ndarray] = {}

    def column(self, name: str) -> pa.Array:
        """One column as a single array (a slice stays a view: every encoding below goes
        through Arrow kernels, which read a slice's offsets right)."""
        if name not in self._columns:
            column = self.table.column(name)
            self._columns[name] = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        return self._columns[name]

    def present(self, name: str) -> np.ndarray:
        return _bools(self.column(name).is_valid())

    def category(self, name: str, vocabulary: tuple[str, ...]) -> np.ndarray:
        """Index of each value in ``vocabulary``; -1 for null, UNKNOWN for anything else."""
        if name not in self._categories:
            found = pc.index_in(self.column(name), value_set=pa.array(vocabulary))
            codes = found.fill_null(UNKNOWN).to_numpy(zero_copy_only=False).astype(np.int64)
            codes[~self.present(name)] = -1
            self._categories[name] = codes
        return self._categories[name]

    @cached_property
    def n_options(self) -> np.ndarray:
        """Number of option labels (0 where options is null)."""
        return np.asarray(pc.fill_null(pc.list_value_length(self.column("options")), 0).to_numpy(zero_copy_only=False), dtype=np.int64)

    @cached_property
    def label_rows(self) -> np.ndarray:
        """Row of each label of the flattened options."""
        return pc.list_parent_indices(self.column("options")).to_numpy()

    @cached_property
    def label_starts(self) -> np.ndarray:
        """Position of each row's first label among the flattened labels."""
        return np.cumsum(self.n_options) - self.n_options

    @cached_property
    def raw_labels(self) -> pa.Array:
        return pc.list_flatten(self.column("options"))

    @cached_property
    def labels(self) -> pa.Array:
        """Flattened labels, trimmed, inner whitespace folded to one space."""
        return collapse_whitespace(self.raw_labels)

    @cached_property
    def folded_labels(self) -> pa.Array:
        return pc.utf8_lower(self.labels)

    @cached_property
    def yes_no_pair(self) -> np.ndarray:
        """Rows whose two labels read yes, no (any case, any surrounding space)."""
        pair = np.zeros(self.n_rows, dtype=bool)
        two = self.n_options == 2
        first = self.label_starts[two]
        folded = self.folded_labels
        yes, no = (label.lower() for label in YES_NO_OPTIONS)
        pair[two] = _bools(pc.fill_null(pc.and_(pc.equal(folded.take(first), yes), pc.equal(folded.take(first + 1), no)), False))
        return pair

    @cached_property
    def implied_question_type(self) -> np.ndarray:
        """Index into QUESTION_TYPES the options imply: yes/no pair, two named, or more."""
        yes_no, binary_named, multiple_choice = (QUESTION_TYPES.index(name) for name in ("yes_no", "binary_named", "multiple_choice"))
        return np.where(self.yes_no_pair, yes_no, np.where(self.n_options == 2, binary_named, multiple_choice))

    @cached_property
    def answer(self) -> ParsedAnswers:
        return parse_answers(self.column("answer"))

    @cached_property
    def answer_in_range(self) -> np.ndarray:
        """Rows whose answer follows the grammar and names only existing options."""
        indices = self.answer.indices
        flat = pc.list_flatten(indices).to_numpy()
        rows = pc.list_parent_indices(indices).to_numpy()
        outside = np.zeros(self.n_rows, dtype=bool)
        outside[rows[(flat < 0) | (flat >= self.n_options[rows])]] = True
        return self.answer.well_formed & ~outside

    @cached_property
    def canonical_answer(self) -> pa.Array:
        """The answers in canonical form."""
        return format_answers(self.answer.indices)

    @cached_property
    def n_letters(self) -> np.ndarray:
        """Number of distinct gold letters."""
        return count_letters(self.answer.indices)

    def filled_choice_type(self) -> pa.Array:
        """choice_type as given; where the source states none, ``single`` for one gold letter
        and ``multi`` for several (FutureX-Past does not state ρ)."""
        single, multi = CHOICE_TYPES.index("single"), CHOICE_TYPES.index("multi")
        implied = pa.array(CHOICE_TYPES).take(pa.array(np.where(self.n_letters == 1, single, multi)))
        given = self.column("choice_type")
        return implied if given.null_count == len(given) else pc.coalesce(given, implied)


# ---------------------------------------------------------------------------------------
# The rules: each returns the mask of failing rows


def _missing_id(c: QuestionColumns) -> np.ndarray:
    return blank(c.column("id"))


def _id_too_long(c: QuestionColumns) -> np.ndarray:
    return too_long(c.column("id"))


def _invisible_id(c: QuestionColumns) -> np.ndarray:
    return invisible(c.column("id"))


def _empty_event(c: QuestionColumns) -> np.ndarray:
    return blank(c.column("event"))


def _invisible_event(c: QuestionColumns) -> np.ndarray:
    return invisible(c.column("event"))


def _bad_end_time(c: QuestionColumns) -> np.ndarray:
    return ~c.present("end_time")


def _end_time_out_of_range(c: QuestionColumns) -> np.ndarray:
    return outside(c.column("end_time"), c.end_times)


def _describe_end_time(c: QuestionColumns, rows: np.ndarray) -> list[str]:
    low, high = c.end_times.end_time_min, c.end_times.end_time_max
    days = day_text(day_numbers(c.column("end_time").take(pa.array(rows, pa.int64()))))
    return [f"end_time {day} is outside the plausible range {low} … {high}" for day in days]


def _too_few_options(c: QuestionColumns) -> np.ndarray:
    return c.n_options < 2


def _too_many_options(c: QuestionColumns) -> np.ndarray:
    return c.n_options > MAX_OPTIONS


def _blank_option(c: QuestionColumns) -> np.ndarray:
    empty = _bools(pc.fill_null(pc.equal(pc.utf8_length(c.labels), 0), True))
    rows = np.zeros(c.n_rows, dtype=bool)
    rows[c.label_rows[empty]] = True
    return rows


def _invisible_option(c: QuestionColumns) -> np.ndarray:
    rows = np.zeros(c.n_rows, dtype=bool)
    rows[c.label_rows[invisible(c.labels)]] = True
    return rows


def _duplicate_options(c: QuestionColumns) -> np.ndarray:
    return _rows_with_repeated_labels(c.folded_labels, c.label_rows, c.n_rows)


def _empty_answer(c: QuestionColumns) -> np.ndarray:
    return c.answer.blank


def _answer_not_letters(c: QuestionColumns) -> np.ndarray:
    return ~c.answer.blank & ~c.answer.well_formed


def _answer_out_of_range(c: QuestionColumns) -> np.ndarray:
    return c.answer.well_formed & ~c.answer_in_range


def _answer_not_canonical(c: QuestionColumns) -> np.ndarray:
    return c.answer_in_range & ~canonical_answers(c.column("answer"), c.answer)


def _question_type_mismatch(c: QuestionColumns) -> np.ndarray:
    given = c.category("question_type", QUESTION_TYPES)
    return (given == UNKNOWN) | ((given >= 0) & (c.n_options >= 2) & (given != c.implied_question_type))


def _describe_question_type(c: QuestionColumns, rows: np.ndarray) -> list[str]:
    given = c.column("question_type").take(pa.array(rows)).to_pylist()
    return [
        f"question_type {g!r} does not fit {c.n_options[r]} option(s); expected {QUESTION_TYPES[c.implied_question_type[r]]!r}"
        for r, g in zip(rows, given)
    ]


def _yes_no_labels_not_canonical(c: QuestionColumns) -> np.ndarray:
    yes_no = (c.category("question_type", QUESTION_TYPES) == QUESTION_TYPES.index("yes_no")) & (c.n_options == 2)
    first = c.label_starts[yes_no]
    exact = pc.and_(pc.equal(c.raw_labels.take(first), YES_NO_OPTIONS[0]), pc.equal(c.raw_labels.take(first + 1), YES_NO_OPTIONS[1]))
    failing = np.zeros(c.n_rows, dtype=bool)
    failing[yes_no] = ~_bools(pc.fill_null(exact, False))
    return failing


def _choice_type_mismatch(c: QuestionColumns) -> np.ndarray:
    given = c.category("choice_type", CHOICE_TYPES)
    single = given == CHOICE_TYPES.index("single")
    return (given == UNKNOWN) | (c.answer_in_range & single & (c.n_letters != 1))


def _describe_choice_type(c: QuestionColumns, rows: np.ndarray) -> list[str]:
    given = c.column("choice_type").take(pa.array(rows)).to_pylist()
    return [
        f"choice_type {g!r} is not one of {', '.join(CHOICE_TYPES)}" if g not in CHOICE_TYPES
        else f"choice_type {g!r} but the answer has {c.n_letters[r]} letter(s)"
        for r, g in zip(rows, given)
    ]  # fmt: skip


def _duplicate_id(c: QuestionColumns) -> np.ndarray:
    """Every row holding an id that an earlier row holds."""
    codes = pc.dictionary_encode(c.column("id")).indices.fill_null(-1).to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    repeat = np.zeros(c.n_rows, dtype=bool)
    repeat[order[1:][codes[order][1:] == codes[order][:-1]]] = True
    return repeat & (codes >= 0)


@dataclass(frozen=True)
class Rule:
    """One rule of the contract: its name (the quarantine and validation rule name), the
    field it checks, what it requires, and its vectorised check."""

    name: str
    field: str
    message: str
    failing: Callable[[QuestionColumns], np.ndarray]
    reads: tuple[str, ...]
    describe: Callable[[QuestionColumns, np.ndarray], list[str]] | None = None
    stored_form: bool = False  # the audit establishes it by normalising, never quarantines under it
    row_local: bool = True  # a row's verdict depends on that row alone

    def messages(self, columns: QuestionColumns, rows: np.ndarray) -> list[str]:
        """What each of ``rows`` (failing rows) breaks, in words."""
        return self.describe(columns, rows) if self.describe else [self.message] * len(rows)


RULES: tuple[Rule, ...] = (
    Rule("missing_id", "id", "id must be a non-empty string", _missing_id, ("id",)),
    Rule("id_too_long", "id", f"an id has at most {MAX_ID_CHARS} characters", _id_too_long, ("id",)),
    Rule("invisible_id", "id", "id must not be made only of invisible or control characters", _invisible_id, ("id",)),
    Rule("empty_event", "event", "event must be non-empty text", _empty_event, ("event",)),
    Rule("invisible_event", "event", "event must not be made only of invisible or control characters", _invisible_event, ("event",)),
    Rule("bad_end_time", "end_time", "end_time must be a date YYYY-MM-DD", _bad_end_time, ("end_time",)),
    Rule("end_time_out_of_range", "end_time", "end_time must lie in the plausible range audit.end_time_min … audit.end_time_max", _end_time_out_of_range, ("end_time",), _describe_end_time),
    Rule("too_few_options", "options", "a question needs at least 2 options", _too_few_options, ("options",)),
    Rule("too_many_options", "options", f"a question has at most {MAX_OPTIONS} options (letter sets are {MAX_OPTIONS}-bit masks)", _too_many_options, ("options",)),
    Rule("blank_option", "options", "option labels must be non-empty", _blank_option, ("options",)),
    Rule("invisible_option", "options", "option labels must not be made only of invisible or control characters", _invisible_option, ("options",)),
    Rule("duplicate_options", "options", "option labels must be unique after strip + casefold", _duplicate_options, ("options",)),
    Rule("empty_answer", "answer", "the gold answer must name at least one option", _empty_answer, ("answer",)),
    Rule("answer_not_letters", "answer", "the gold answer must be option letters like 'A' or 'A, C'", _answer_not_letters, ("answer",)),
    Rule("answer_out_of_range", "answer", "every gold letter must name an existing option", _answer_out_of_range, ("answer", "options")),
    Rule("answer_not_canonical", "answer", "the gold answer lists its letters once each, in option order, joined by ', '", _answer_not_canonical, ("answer", "options"), stored_form=True),
    Rule("question_type_mismatch", "question_type", "question_type must fit the options (yes_no = [Yes, No]; binary_named = 2 named; multiple_choice >= 3)", _question_type_mismatch, ("question_type", "options"), _describe_question_type),
    Rule("yes_no_labels_not_canonical", "options", "a yes_no question's options are exactly ['Yes', 'No']", _yes_no_labels_not_canonical, ("question_type", "options"), stored_form=True),
    Rule("choice_type_mismatch", "choice_type", "choice_type must be single (exactly one gold letter) or multi (one or more)", _choice_type_mismatch, ("choice_type", "answer", "options"), _describe_choice_type),
    Rule("duplicate_id", "id", "ids must be unique", _duplicate_id, ("id",), stored_form=True, row_local=False),
)  # fmt: skip
RULE_BY_NAME = {rule.name: rule for rule in RULES}
AUDITED_RULES = tuple(rule for rule in RULES if not rule.stored_form)


def rules_reading(columns: Iterable[str]) -> tuple[Rule, ...]:
    """The rules that read only ``columns`` (e.g. the question columns of a trial table)."""
    available = set(columns)
    return tuple(rule for rule in RULES if set(rule.reads) <= available)


def failing_rows(columns: QuestionColumns, rules: Iterable[Rule] = RULES, *, present_only: bool = False) -> dict[str, np.ndarray]:
    """Rule name → mask of the rows that break it. ``present_only`` judges a rule only on
    rows where every column it reads is present, for callers that report empty cells on
    their own."""
    masks = {}
    for rule in rules:
        mask = rule.failing(columns)
        if present_only:
            for name in rule.reads:
                mask = mask & columns.present(name)
        masks[rule.name] = mask
    return masks


def table_failures(
    table: pa.Table,
    rules: Iterable[Rule] = RULES,
    *,
    present_only: bool = False,
    end_times: EndTimeRange | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> dict[str, np.ndarray]:
    """:func:`failing_rows` over a whole table: the row-local rules ``chunk_rows`` rows at a
    time (the encodings of a million questions need not be held at once), the others over
    the whole table."""
    rules = tuple(rules)
    local = [rule for rule in rules if rule.row_local]
    parts = [
        failing_rows(QuestionColumns(table.slice(start, chunk_rows), end_times), local, present_only=present_only)
        for start in range(0, max(table.num_rows, 1), chunk_rows)
    ]
    masks = {rule.name: np.concatenate([part[rule.name] for part in parts]) for rule in local}
    whole = QuestionColumns(table, end_times)
    masks.update(failing_rows(whole, [rule for rule in rules if not rule.row_local], present_only=present_only))
    return {rule.name: masks[rule.name] for rule in rules}
