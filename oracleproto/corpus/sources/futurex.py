"""FutureX-Past's raw shape: a full agent ``prompt`` plus a ``ground_truth`` Python-literal list.

``parse_futurex`` turns a batch of raw rows (id, prompt, ground_truth, end_time, level, …) into
the raw-row contract of :mod:`oracleproto.corpus.sources` with pyarrow compute, no per-row Python:
event = the quoted text minus the "(resolved around …)" suffix; options = the lettered lines
of the quoted block with "the outcome be " stripped (Yes/No items have none and get
["Yes", "No"]); answer = the ground-truth letters (or Yes→A, No→B). A row that cannot be read
keeps null fields and a ``parse_error`` saying why, so the audit quarantines it.

``render_prompt`` / ``ground_truth_literal`` write the same shape (the embedded sample and
the tests use them).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import joined_letters, list_from_flat
from oracleproto.letters import letter, split_answer

AGENT_ROLE = "You are an agent that can predict future events."
GUIDANCE = (
    "Do not use any other format. Do not refuse to make a prediction. Do not say \"I cannot predict the "
    "future.\" You must make a clear prediction based on the best data currently available, using the box "
    "format specified above."
)
_YES_NO_FORMAT = "\\boxed{Yes} or \\boxed{No}"
_OPTIONS_FORMAT = (
    "identify all the correct option(s) and list their letters, separated by commas, within the box. "
    "For example: \\boxed{A} for one correct option, or \\boxed{B, C} for several."
)

# The quoted block is cut with plain substring splits (much faster than one big regex):
# '…The event to be predicted: "<event> (resolved around <τ> (GMT+8)).\nA.  the outcome be
# <label>\n…"\nIMPORTANT…'.
_EVENT_MARK = 'The event to be predicted: "'
_RESOLVED_MARK = " (resolved around "
_INSTRUCTIONS_MARK = "\nIMPORTANT"
_OPTION_LINE_START = r'^\s*[A-Za-z\[\\\]^_`]\.\s'
_LABEL_PREFIX = "the outcome be "
_GT_SPLIT_RE = r"""['"]\s*,\s*['"]"""
_GT_STRIP_RE = r"""^\s*\[?\s*['"]?|['"]?\s*\]?\s*$"""


def render_prompt(event: str, options: Sequence[str], end_time: str | dt.date, question_type: str) -> str:
    """The raw FutureX-style prompt for one question (yes/no items carry no option lines)."""
    lines = "" if question_type == "yes_no" else "".join(
        f"\n{letter(i)}.  the outcome be {label}" for i, label in enumerate(options)
    )
    fmt = _YES_NO_FORMAT if question_type == "yes_no" else _OPTIONS_FORMAT
    return (
        f'{AGENT_ROLE} The event to be predicted: "{event} (resolved around {end_time} (GMT+8)).{lines}"\n'
        f"IMPORTANT: Your final answer MUST end with this exact format:\n{fmt}\n{GUIDANCE}"
    )


def ground_truth_literal(question_type: str, options: Sequence[str], answer: str) -> str:
    """The ground_truth literal FutureX stores: "['Yes']" for yes/no, "['B', 'C']" for letters."""
    letters = split_answer(answer)
    if question_type == "yes_no":
        return repr([options[ord(letters[0]) - ord("A")]])
    return repr(letters)


def _np(values: pa.Array) -> np.ndarray:
    return np.asarray(values.to_numpy(zero_copy_only=False))


def _or_empty(values: pa.Array) -> pa.Array:
    """Nulls as empty strings; fill_null copies every string even when there is no null."""
    return values if values.null_count == 0 else pc.fill_null(values, "")


def _slice_strings(values: pa.Array, start: np.ndarray, length: np.ndarray) -> pa.Array:
    """Per-row byte slices ``[start, start + length)`` of a string array, copied compactly.

    Built as a string_view array over the original data buffer (16 bytes per row, no
    string copies) and cast to ``string`` once, so a long prompt costs nothing beyond the
    bytes kept. Rows with a negative length become empty strings."""
    n = len(values)
    if n == 0:
        return pa.array([], pa.string())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=n + 1, offset=values.offset * 4)
    data = values.buffers()[2] or pa.py_buffer(b"\0")
    buf = np.frombuffer(data, dtype=np.uint8)
    length = np.maximum(np.asarray(length, dtype=np.int64), 0)
    begin = offsets[:-1].astype(np.int64) + np.asarray(start, dtype=np.int64)
    lane = np.arange(12)
    head = buf[np.minimum(begin[:, None] + lane, len(buf) - 1)]
    views = np.zeros((n, 16), dtype=np.uint8)
    views[:, 0:4] = length.astype("<i4").view(np.uint8).reshape(n, 4)
    short = length <= 12
    views[short, 4:16] = np.where(lane < length[short, None], head[short], 0)
    views[~short, 4:8] = head[~short, :4]
    views[~short, 12:16] = begin[~short].astype("<i4").view(np.uint8).reshape(-1, 4)
    sliced = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), data])
    return sliced.cast(pa.string())


def _single_byte_codes(values: pa.Array) -> np.ndarray:
    """Byte codes of a string array whose every element is exactly one byte long."""
    values = pc.cast(values, pa.binary()).take(pa.array(np.arange(len(values))))  # fresh, zero-based buffers
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.frombuffer(values.buffers()[2], dtype=np.uint8, count=len(values)).astype(np.int64)


def _option_lists(after_event: pa.Array) -> tuple[pa.ListArray, np.ndarray]:
    """Options per row from the lettered lines of the block after the event,
    and a per-row flag telling whether the letters ran A, B, C, … in order."""
    n = len(after_event)
    lines = pc.split_pattern(after_event, "\n")
    flat = pc.list_flatten(lines)
    parents = pc.list_parent_indices(lines).to_numpy()
    line_starts = lines.offsets.to_numpy()
    is_last_line = np.arange(len(flat)) == (line_starts[1:][parents] - 1)
    candidate = np.flatnonzero(_np(pc.match_substring_regex(flat, _OPTION_LINE_START)) & (np.arange(len(flat)) != line_starts[:-1][parents]))
    # Candidate lines are "<letter>. <label>" after optional indentation: slice, no regex.
    option_lines = pc.utf8_ltrim_whitespace(flat.take(pa.array(candidate)))
    letters_seen = pc.utf8_slice_codeunits(option_lines, 0, 1)
    labels = pc.utf8_ltrim_whitespace(pc.utf8_slice_codeunits(option_lines, 2))
    labels = pc.if_else(pc.starts_with(labels, _LABEL_PREFIX), pc.utf8_slice_codeunits(labels, len(_LABEL_PREFIX)), labels)
    kept_parents = parents[candidate]
    # The closing quote of the block sits at the end of the last option line.
    labels = pc.utf8_rtrim_whitespace(labels)
    closing = pc.and_(pa.array(is_last_line[candidate]), pc.ends_with(labels, '"'))
    labels = pc.utf8_trim_whitespace(pc.if_else(closing, pc.utf8_slice_codeunits(labels, 0, -1), labels))
    options = list_from_flat(labels, kept_parents, n)
    # Rank of each option line within its row must equal its letter's index.
    starts = options.offsets.to_numpy()[:-1]
    rank = np.arange(len(candidate), dtype=np.int64) - starts[kept_parents]
    out_of_order = _single_byte_codes(letters_seen) != (rank + ord("A"))
    ordered = np.ones(n, dtype=bool)
    ordered[kept_parents[out_of_order]] = False
    return options, ordered


def _ground_truth_lists(ground_truth: pa.Array) -> pa.ListArray:
    stripped = pc.replace_substring_regex(_or_empty(pc.cast(ground_truth, pa.string())), _GT_STRIP_RE, "")
    parts = pc.split_pattern_regex(stripped, _GT_SPLIT_RE)
    # Undo the Python-literal escapes repr() writes (the "\\" letter past Z, quotes).
    flat = pc.utf8_trim_whitespace(pc.list_flatten(parts))
    flat = pc.replace_substring(pc.replace_substring(flat, "\\\\", "\\"), "\\'", "'")
    nonempty = pc.greater(pc.utf8_length(flat), 0).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(parts).to_numpy()
    keep = np.flatnonzero(nonempty)
    return list_from_flat(flat.take(keep), parents[keep], len(ground_truth))


def _gold_letters(gt: pa.ListArray, options: pa.ListArray) -> tuple[pa.Array, pa.Array]:
    """Gold letters joined "A, C" (in the order given) and a parse error where gt is unusable.

    Each element must be one option letter in range, or the word Yes/No when the row has
    no lettered options (a yes/no item)."""
    n = len(gt)
    flat = pc.list_flatten(gt)
    parents = pc.list_parent_indices(gt).to_numpy()
    n_options = pc.list_value_length(options).to_numpy(zero_copy_only=False)
    folded = pc.utf8_lower(flat)
    yes_no_row = n_options[parents] == 0
    is_yes = pc.equal(folded, "yes").to_numpy(zero_copy_only=False)
    is_no = pc.equal(folded, "no").to_numpy(zero_copy_only=False)
    single_char = pc.equal(pc.binary_length(flat), 1).to_numpy(zero_copy_only=False)
    codes = np.zeros(len(flat), dtype=np.int64)
    codes[single_char] = _single_byte_codes(flat.filter(pa.array(single_char)))
    index = codes - ord("A")
    letter_ok = single_char & ~yes_no_row & (index >= 0) & (index < n_options[parents])
    yes_no_ok = yes_no_row & (is_yes | is_no)
    element_ok = letter_ok | yes_no_ok
    mapped = np.where(yes_no_ok, np.where(is_yes, ord("A"), ord("B")), codes)
    bad_rows = np.zeros(n, dtype=bool)
    bad_rows[parents[~element_ok]] = True
    empty_rows = pc.list_value_length(gt).to_numpy(zero_copy_only=False) == 0
    joined = joined_letters(mapped.astype(np.uint8), parents, n)
    error = np.where(
        empty_rows,
        "ground_truth is empty",
        np.where(bad_rows, "ground_truth is not a list of option letters (or Yes/No)", None),
    )
    error_arr = pa.array(error.tolist(), pa.string())
    joined = pc.if_else(pc.is_null(error_arr), joined, pa.scalar(None, pa.string()))
    return joined, error_arr


def parse_futurex(batch: pa.Table, first_row: int = 0) -> pa.Table:
    """Raw FutureX rows → the raw-row contract (see ``oracleproto.corpus.sources.raw_table``)."""
    from oracleproto.corpus.sources import (  # local: the package imports this module
        as_text,
        raw_table,
    )

    n = batch.num_rows
    prompt = batch.column("prompt").combine_chunks() if n else pa.array([], pa.string())
    text = _or_empty(prompt)
    event_at = _np(pc.find_substring(text, _EVENT_MARK))
    resolved_at = _np(pc.find_substring(text, _RESOLVED_MARK))
    instructions_at = _np(pc.find_substring(text, _INSTRUCTIONS_MARK))
    text_length = _np(pc.binary_length(text))
    event_start = event_at + len(_EVENT_MARK)
    has_block = (event_at >= 0) & (resolved_at > event_start)
    block_end = np.where(instructions_at > resolved_at, instructions_at, text_length)
    event = pc.utf8_trim_whitespace(_slice_strings(text, event_start, np.where(has_block, resolved_at - event_start, 0)))
    after_event = _slice_strings(text, resolved_at, np.where(has_block, block_end - resolved_at, 0))
    has_block = pa.array(has_block)
    options, ordered = _option_lists(after_event)
    yes_no = pc.equal(pc.list_value_length(options), 0).to_numpy(zero_copy_only=False)
    gt = _ground_truth_lists(batch.column("ground_truth").combine_chunks())
    answer, gt_error = _gold_letters(gt, options)
    yes_no_options = pa.array([["Yes", "No"]] * n, pa.list_(pa.string())) if n else options
    options = pc.if_else(pa.array(yes_no), yes_no_options, options)
    question_type = pa.array(np.where(yes_no, "yes_no", None).tolist(), pa.string())
    parse_error = pc.if_else(
        has_block,
        pc.if_else(pa.array(ordered), gt_error, pa.scalar("option letters are not consecutive from A", pa.string())),
        pa.scalar("prompt has no 'The event to be predicted: \"… (resolved around …)' block", pa.string()),
    )
    level = batch.column("level") if "level" in batch.column_names else pa.nulls(n, pa.int64())
    return raw_table(
        source_row=np.arange(first_row, first_row + n, dtype=np.int64),
        id=batch.column("id"),
        question_type=question_type,
        event=event,
        options=options,
        answer=answer,
        end_time=as_text(batch.column("end_time")),
        level=level,
        parse_error=parse_error,
        original=batch,
    )
