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
import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import list_from_flat
from oracleproto.corpus.sources.fields import (
    first_reason,
    integer_field,
    source_fields,
    text_field,
)
from oracleproto.corpus.sources.plain import plain_column
from oracleproto.corpus.sources.raw import raw_table
from oracleproto.letters import joined_letters, letter, split_answer

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

# The quoted block is cut with plain substring searches (much faster than one big regex):
# '…The event to be predicted: "<event> (resolved around <τ> (GMT+8)).\nA.  the outcome be
# <label>\n…"\nIMPORTANT…'. Real prompts vary in whitespace only (blank lines, trailing
# spaces, CRLF, tabs after the letter), so lines are trimmed and blank ones skipped.
_EVENT_MARK = 'The event to be predicted: "'
# How the prompts open, the mark where it always is: rows that start so skip the search.
_USUAL_OPENING = f"{AGENT_ROLE} {_EVENT_MARK}"
_RESOLVED_MARK = " (resolved around "
_INSTRUCTIONS_MARK = "\nIMPORTANT"
# RE2 finds this literal ≈3× faster than find_substring (it skips to each "\n"); same offsets.
_INSTRUCTIONS_PATTERN = re.escape(_INSTRUCTIONS_MARK)
_CLOSING_QUOTE = '"'
# An option line is "<letter>." then whitespace, the letters past Z as released: the letter
# class [A-Za-z[\\]^_`] is the bytes 0x41-0x7A, the whitespace RE2's \s ([\t\n\f\r ]).
_OPTION_LETTERS = (ord("A"), ord("z"))
_OPTION_SPACE = np.isin(np.arange(256), [ord(c) for c in "\t\n\f\r "])
_LABEL_PREFIX = "the outcome be "
_GT_SPLIT_RE = r"""['"]\s*,\s*['"]"""
_GT_STRIP_RE = r"""^\s*\[?\s*['"]?|['"]?\s*\]?\s*$"""

NO_BLOCK = "prompt has no 'The event to be predicted: \"… (resolved around …)' block"
UNCLOSED_BLOCK = "the quoted event block does not end with a closing quote and the IMPORTANT instructions"
STRAY_LINE = "the quoted event block has a line that is not '<letter>. <label>'"
LETTERS_OUT_OF_ORDER = "option letters are not consecutive from A"
REPEATED_MARK = "the event line says ' (resolved around ' more than once: where the event ends cannot be told"


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


# _LOW_BYTES[k]: a little-endian 32-bit mask keeping a word's first k bytes.
_LOW_BYTES = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype="<u4")


def _words_at(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian 32-bit words starting at byte offsets ``at`` of ``buf``; bytes past
    the buffer's end read as 0 (a string's own bytes never lie there)."""
    if len(buf) >= 4:
        words = np.ndarray((len(buf) - 3,), dtype="<u4", buffer=buf, strides=(1,))  # unaligned reads
        inside = at < len(words)
        out = np.where(inside, words[np.where(inside, at, 0)], 0).astype("<u4")
        if inside.all():
            return out
    else:
        out, inside = np.zeros(at.shape, dtype="<u4"), np.zeros(at.shape, dtype=bool)
    tail = np.flatnonzero(~inside.ravel())  # the last 3 bytes: one at a time
    at_tail = at.ravel()[tail]
    for k in range(4):
        byte = np.where(at_tail + k < len(buf), buf[np.minimum(at_tail + k, len(buf) - 1)], 0).astype("<u4")
        out.ravel()[tail] |= byte << np.uint32(8 * k)
    return out


def _slice_strings(values: pa.Array, start: np.ndarray, length: np.ndarray) -> pa.Array:
    """Per-row byte slices ``[start, start + length)`` of a string array, copied compactly.

    Arrow has no per-row slice kernel, so this builds a string_view array over the data
    buffer (16 bytes per row, no string copies) and casts it to ``string`` once: a long
    prompt costs nothing beyond the bytes kept. The views read 32-bit offsets, so any other
    layout (large_string, string_view, dictionary) is brought to plain ``string`` first.
    Rows with a negative length become empty strings."""
    values = plain_column(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type != pa.string():
        raise TypeError(f"expected text, got {values.type}")
    n = len(values)
    if n == 0:
        return pa.array([], pa.string())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=n + 1, offset=values.offset * 4)
    data = values.buffers()[2] or pa.py_buffer(b"\0")
    buf = np.frombuffer(data, dtype=np.uint8)
    length = np.maximum(np.asarray(length, dtype=np.int64), 0)
    begin = np.where(length > 0, offsets[:-1].astype(np.int64) + np.asarray(start, dtype=np.int64), 0)
    views = np.zeros((n, 4), dtype="<u4")  # length, then 12 inline bytes or prefix, buffer 0, offset
    views[:, 0] = length
    short = length <= 12
    words = _words_at(buf, begin[:, None] + np.arange(0, 12, 4))
    views[short, 1:] = words[short] & _LOW_BYTES[np.clip(length[short, None] - np.arange(0, 12, 4), 0, 4)]
    views[~short, 1] = words[~short, 0]
    views[~short, 3] = begin[~short]
    sliced = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), data])
    return sliced.cast(pa.string())


def _option_lines_mask(lines: pa.Array) -> np.ndarray:
    """Per line: does it open "<letter>.<whitespace>"? (Three bytes read in place.)"""
    n = len(lines)
    data = lines.buffers()[2]
    if n == 0 or data is None or data.size == 0:
        return np.zeros(n, dtype=bool)
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=n + 1, offset=lines.offset * 4).astype(np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    long_enough = offsets[1:] - offsets[:-1] >= 3
    at = np.where(long_enough, offsets[:-1], 0)
    head = [buf[np.minimum(at + k, len(buf) - 1)] for k in range(3)]
    letter = (head[0] >= _OPTION_LETTERS[0]) & (head[0] <= _OPTION_LETTERS[1])
    return long_enough & letter & (head[1] == ord(".")) & _OPTION_SPACE[head[2]]


def _first_bytes(values: pa.Array) -> np.ndarray:
    """The first byte of each value of a string array whose values are all non-empty."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32, count=len(values), offset=values.offset * 4)
    return np.frombuffer(values.buffers()[2], dtype=np.uint8)[offsets].astype(np.int64)


def _event_positions(text: pa.Array) -> np.ndarray:
    """Byte offset of the first event mark in each prompt (-1: none). Where a prompt opens
    the usual way the first mark is the one that opening ends with; the rest are searched."""
    usual = _np(pc.starts_with(text, _USUAL_OPENING))
    at = np.full(len(text), _USUAL_OPENING.find(_EVENT_MARK), dtype=np.int64)
    others = np.flatnonzero(~usual)
    if len(others):
        at[others] = _np(pc.find_substring(text.take(pa.array(others)), _EVENT_MARK))
    return at


def _single_byte_codes(values: pa.Array) -> np.ndarray:
    """Byte codes of a string array whose every element is exactly one byte long."""
    values = pc.cast(values, pa.binary()).take(pa.array(np.arange(len(values))))  # fresh, zero-based buffers
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.frombuffer(values.buffers()[2], dtype=np.uint8, count=len(values)).astype(np.int64)


def _quoted_block(text: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """(event, the block after the event, has-block flag, closed flag) of each prompt.

    The block runs from " (resolved around" to "\nIMPORTANT", trailing whitespace trimmed; it
    is closed when it ends with the quote, which is removed. Without the instructions after
    it a prompt may have been cut short, so the block is not closed."""
    event_at = _event_positions(text)
    resolved_at = _np(pc.find_substring(text, _RESOLVED_MARK))
    instructions_at = _np(pc.find_substring_regex(text, _INSTRUCTIONS_PATTERN))
    event_start = event_at + len(_EVENT_MARK)
    has_block = (event_at >= 0) & (resolved_at > event_start)
    block_end = np.where(instructions_at > resolved_at, instructions_at, _np(pc.binary_length(text)))
    event = pc.utf8_trim_whitespace(_slice_strings(text, event_start, np.where(has_block, resolved_at - event_start, 0)))
    block = pc.utf8_rtrim_whitespace(_slice_strings(text, resolved_at, np.where(has_block, block_end - resolved_at, 0)))
    closed = (instructions_at > resolved_at) & _np(pc.ends_with(block, _CLOSING_QUOTE))
    block = pc.if_else(pa.array(closed), pc.utf8_slice_codeunits(block, 0, -1), block)
    return event, block, has_block, closed


def _option_lists(block: pa.Array) -> tuple[pa.ListArray, np.ndarray, np.ndarray, np.ndarray]:
    """From each block (closing quote removed): the options of its lettered lines, whether
    it has a line that is neither blank nor lettered, whether the letters run A, B, C…, and
    whether the event line holds the "(resolved around" marker twice

    The block's first line is the "(resolved around …)" rest of the event line."""
    n = len(block)
    lines = pc.split_pattern(block, "\n")
    flat = pc.utf8_trim_whitespace(pc.list_flatten(lines))  # also drops the \r of CRLF
    parents = pc.list_parent_indices(lines).to_numpy()
    first_line = np.arange(len(flat)) == lines.offsets.to_numpy()[:-1][parents]
    blank = _np(pc.equal(pc.binary_length(flat), 0))
    lettered = _option_lines_mask(flat) & ~first_line
    stray = np.zeros(n, dtype=bool)
    stray[parents[~first_line & ~blank & ~lettered]] = True
    # The event line's rest must hold the marker once: a second one means the event itself
    # says " (resolved around ", and where it ends cannot be told.
    first_rest = flat.filter(pa.array(first_line))
    repeated = np.zeros(n, dtype=bool)
    repeated[parents[first_line][_np(pc.count_substring(first_rest, _RESOLVED_MARK.strip())) > 1]] = True
    candidate = np.flatnonzero(lettered)
    # Lettered lines are "<letter>.<whitespace><label>": slice, no regex.
    option_lines = flat.take(pa.array(candidate))
    labels = pc.utf8_ltrim_whitespace(pc.utf8_slice_codeunits(option_lines, 2))
    labels = pc.if_else(pc.starts_with(labels, _LABEL_PREFIX), pc.utf8_slice_codeunits(labels, len(_LABEL_PREFIX)), labels)
    kept_parents = parents[candidate]
    options = list_from_flat(pc.utf8_trim_whitespace(labels), kept_parents, n)
    # Rank of each option line within its row must equal its letter's index.
    starts = options.offsets.to_numpy()[:-1]
    rank = np.arange(len(candidate), dtype=np.int64) - starts[kept_parents]
    out_of_order = _first_bytes(option_lines) != (rank + ord("A"))
    ordered = np.ones(n, dtype=bool)
    ordered[kept_parents[out_of_order]] = False
    return options, stray, ordered, repeated


def _ground_truth_lists(ground_truth: pa.Array) -> pa.ListArray:
    stripped = pc.replace_substring_regex(_or_empty(ground_truth), _GT_STRIP_RE, "")
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
    error_arr = _first_defect(n, (empty_rows, "ground_truth is empty"), (bad_rows, "ground_truth is not a list of option letters (or Yes/No)"))
    joined = pc.if_else(pc.is_null(error_arr), joined, pa.scalar(None, pa.string()))
    return joined, error_arr


_COERCIONS = {"id": text_field, "prompt": text_field, "ground_truth": text_field, "end_time": text_field, "level": integer_field}
_REQUIRED = ("id", "prompt", "ground_truth", "end_time")


def _first_defect(n: int, *defects: tuple[np.ndarray, str]) -> pa.Array:
    """Per row, the message of the first defect whose mask is set (null: no defect)."""
    codes = np.zeros(n, dtype=np.int8)
    for code, (mask, _) in reversed(list(enumerate(defects, start=1))):
        codes[mask] = code
    messages = pa.array([None, *(message for _, message in defects)], pa.string())
    return messages.take(pa.array(codes))


def _with_yes_no(options: pa.ListArray, yes_no: np.ndarray) -> pa.ListArray:
    """``options`` with ["Yes", "No"] as the options of every ``yes_no`` row (which has none)."""
    if not yes_no.any():
        return options
    labels = pc.list_flatten(options)
    counts = np.where(yes_no, 2, pc.list_value_length(options).to_numpy(zero_copy_only=False))
    offsets = np.zeros(len(options) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    # Where each label comes from: the lettered labels in order, or the pair after them.
    pair_slot = np.repeat(yes_no, counts)
    source = np.empty(offsets[-1], dtype=np.int64)
    source[~pair_slot] = np.arange(len(labels))
    source[pair_slot] = len(labels) + np.tile([0, 1], int(yes_no.sum()))
    labels = pa.concat_arrays([labels, pa.array(["Yes", "No"], pa.string())]).take(pa.array(source))
    return pa.ListArray.from_arrays(pa.array(offsets), labels)


def parse_futurex(batch: pa.Table, first_row: int = 0) -> pa.Table:
    """Raw FutureX rows → the raw-row contract (see ``oracleproto.corpus.sources.raw``)."""
    n = batch.num_rows
    fields, field_reasons = source_fields(batch, _COERCIONS, required=_REQUIRED)
    text = _or_empty(fields["prompt"])
    event, block, has_block, closed = _quoted_block(text)
    options, stray, ordered, repeated = _option_lists(block)
    yes_no = pc.equal(pc.list_value_length(options), 0).to_numpy(zero_copy_only=False)
    gt = _ground_truth_lists(fields["ground_truth"])
    answer, gt_error = _gold_letters(gt, options)
    options = _with_yes_no(options, yes_no)
    question_type = pa.array([None, "yes_no"], pa.string()).take(pa.array(yes_no.astype(np.int8)))
    block_defect = _first_defect(
        n,
        (~has_block, NO_BLOCK),
        (~closed, UNCLOSED_BLOCK),
        (repeated, REPEATED_MARK),
        (stray, STRAY_LINE),
        (~ordered, LETTERS_OUT_OF_ORDER),
    )
    return raw_table(
        source_row=np.arange(first_row, first_row + n, dtype=np.int64),
        id=fields.get("id"),
        question_type=question_type,
        event=event,
        options=options,
        answer=answer,
        end_time=fields.get("end_time"),
        level=fields.get("level"),
        parse_error=first_reason(field_reasons, block_defect, gt_error),
        original=batch,
    )
