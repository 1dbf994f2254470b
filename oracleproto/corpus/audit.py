"""Construction-time audit: raw rows → the seven-column question table + quarantine.

Every raw row ends in exactly one place: the question table (possibly normalised), the
quarantine (with the first rule it breaks and a message naming the field), or — for exact
copies of an id already kept — the collapsed-duplicate count. Rules are vectorised masks;
a row's reason is the first failing rule in ``RULES`` order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import iso_dates, joined_letters, list_from_flat
from oracleproto.parallel import ordered_map, take_rows
from oracleproto.schema import QUARANTINE_SCHEMA, QUESTION_TYPES

# Rule name → (field, what the rule requires). Order = precedence.
RULES: dict[str, tuple[str, str]] = {
    "level_excluded": ("level", "level must be one of the selected levels"),
    "unparseable": ("raw", "the source record must parse into question fields"),
    "missing_id": ("id", "id must be a non-empty string"),
    "empty_event": ("event", "event must be non-empty text"),
    "bad_end_time": ("end_time", "end_time must be a date YYYY-MM-DD"),
    "too_few_options": ("options", "a question needs at least 2 options"),
    "blank_option": ("options", "option labels must be non-empty"),
    "duplicate_options": ("options", "option labels must be unique after strip + casefold"),
    "empty_answer": ("answer", "the gold answer must name at least one option"),
    "answer_not_letters": ("answer", "the gold answer must be option letters like 'A' or 'A, C'"),
    "answer_out_of_range": ("answer", "every gold letter must name an existing option"),
    "question_type_mismatch": ("question_type", "question_type must fit the options (yes_no = [Yes, No]; binary_named = 2 named; multiple_choice >= 3)"),
    "choice_type_mismatch": ("choice_type", "choice_type must be single iff the answer has exactly one letter"),
    "post_resolution_wording": ("event", "the event must not be worded after its resolution"),
    "option_encodes_outcome": ("options", "option labels must not encode the outcome"),
    "conflicting_duplicate_id": ("id", "rows sharing an id must be identical"),
    "duplicate_content": ("event", "the same event and options must not appear under two ids"),
}

QUESTION_SORT = ("end_time", "id")  # the canonical row order of every question table
_WS = r"\s+"
_ANSWER_TOKENS = r"^\s*[^\s,]\s*(?:[,\s]\s*[^\s,]\s*)*$"


@dataclass
class AuditConfig:
    levels: Sequence[int] | None  # None: every level (defaults: oracleproto.config)
    post_resolution_phrases: Sequence[str]
    outcome_markers: Sequence[str]


@dataclass
class AuditResult:
    questions: pa.Table
    quarantine: pa.Table  # source_row, id, rule, message + raw fields (raw JSON added by the caller)
    report: dict[str, Any] = field(default_factory=dict)


def _np(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False))


def _blank(values: pa.Array) -> np.ndarray:
    trimmed = pc.utf8_trim_whitespace(values)
    return _np(pc.fill_null(pc.equal(pc.utf8_length(trimmed), 0), True))


def _collapse_ws(values: pa.Array) -> pa.Array:
    """Trim, and fold inner runs of whitespace to one space (the regex runs only on the
    few values that need it)."""
    values = pc.utf8_trim_whitespace(values)
    needs = pc.fill_null(pc.match_substring_regex(values, r"\s\s|[\t\n\r\f\v]"), False)
    if not pc.any(needs).as_py():
        return values
    fixed = pc.replace_substring_regex(pc.filter(values, needs), _WS, " ")
    return pc.replace_with_mask(values, needs, fixed)


def _group_sizes(keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(group code per row, size of each row's group) by hashing ``keys`` once."""
    encoded = pc.dictionary_encode(keys)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    sizes = np.bincount(codes, minlength=len(encoded.dictionary))
    return codes, sizes[codes]


def _phrase_pattern(phrases: Sequence[str]) -> str | None:
    words = [p.strip().lower() for p in phrases if p.strip()]
    if not words:
        return None
    return r"(?i)(?:^|\W)(?:" + "|".join(re.escape(w) for w in words) + r")(?:\W|$)"


def _answer_indices(answer: pa.Array) -> tuple[pa.ListArray, np.ndarray]:
    """Gold letter indices per row (-1 for a token that is not one character) and a flag for
    rows whose answer text is made of single-character tokens."""
    tokens = pc.split_pattern_regex(pc.utf8_trim_whitespace(pc.fill_null(answer, "")), r"[,\s]+")
    flat = pc.list_flatten(tokens)
    parents = pc.list_parent_indices(tokens).to_numpy()
    keep = np.flatnonzero(_np(pc.greater(pc.binary_length(flat), 0)))
    flat = flat.take(keep)
    parents = parents[keep]
    one_byte = _np(pc.equal(pc.binary_length(flat), 1))
    codes = np.full(len(flat), -1 - ord("A"), dtype=np.int64)
    if one_byte.any():
        singles = pc.cast(flat.filter(pa.array(one_byte)), pa.binary()).take(pa.array(np.arange(int(one_byte.sum()))))
        codes[one_byte] = np.frombuffer(singles.buffers()[2], dtype=np.uint8, count=len(singles))
    tokens_ok = _np(pc.fill_null(pc.match_substring_regex(answer, _ANSWER_TOKENS), False))
    return list_from_flat(pa.array(codes - ord("A")), parents, len(answer)), tokens_ok


def letters_out_of_range(answer: pa.Array, options: pa.Array) -> np.ndarray:
    """Per row: does the answer hold a token that is not a letter of one of its options?"""
    indices, tokens_ok = _answer_indices(answer)
    n_options = _np(pc.fill_null(pc.list_value_length(options), 0))
    flat = indices.values.to_numpy()
    parents = pc.list_parent_indices(indices).to_numpy()
    bad = ~tokens_ok
    bad[parents[(flat < 0) | (flat >= n_options[parents])]] = True
    return bad


LABEL_BLOCK = 10_000  # labels hashed per dictionary: a table this small stays in cache


def _rows_with_repeated_labels(folded: pa.Array, parents: np.ndarray, n: int) -> np.ndarray:
    """Rows whose (folded) labels repeat: (row, label code) keys sorted, equal neighbours.
    Repeats only count within a row, so label codes come from small dictionaries over
    blocks of whole rows (4x faster than one hash table of a chunk's half-million labels)."""
    repeated = np.zeros(n, dtype=bool)
    if len(folded) < 2:
        return repeated
    # Each block starts at the first label of the row holding every LABEL_BLOCK-th label.
    starts = np.append(np.unique(np.searchsorted(parents, parents[::LABEL_BLOCK])), len(folded))
    codes = np.concatenate([
        pc.dictionary_encode(folded.slice(a, b - a)).indices.to_numpy(zero_copy_only=False) for a, b in zip(starts[:-1], starts[1:])
    ]).astype(np.int64)
    width = int(codes.max()) + 1
    keys = np.sort(parents.astype(np.int64) * width + codes)
    same = np.flatnonzero(keys[1:] == keys[:-1])
    repeated[keys[same] // width] = True
    return repeated


def _canonical_answer(indices: pa.ListArray) -> tuple[pa.Array, np.ndarray]:
    """Distinct indices in option order joined "A, C", and the number of distinct letters
    (rows with bad indices give junk, but those rows are quarantined before it is used)."""
    n = len(indices)
    flat = np.clip(indices.values.to_numpy(), -1, 254).astype(np.int64) + 1
    parents = pc.list_parent_indices(indices).to_numpy().astype(np.int64)
    keys = np.sort(parents * 256 + flat)  # row-major, then option order
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    keys = keys[first]
    parents, flat = keys // 256, keys % 256 - 1
    chars = np.clip(flat + ord("A"), 0, 127).astype(np.uint8)
    return joined_letters(chars, parents, n), np.bincount(parents, minlength=n)


def _quarantine_rows(raw: pa.Table, positions: np.ndarray, rules: list[str], messages: list[str]) -> pa.Table:
    """Quarantine records for raw rows at ``positions``: the rule, a message that names the
    field, and the row's fields as the source gave them."""
    taken = raw.take(pa.array(positions, pa.int64()))
    return pa.table(
        {
            "source_row": taken.column("source_row"),
            "id": taken.column("id"),
            "rule": pa.array(rules, pa.string()),
            "message": pa.array([f"{RULES[rule][0]}: {message}" for rule, message in zip(rules, messages)], pa.string()),
            "event": taken.column("event"),
            "options": taken.column("options"),
            "answer": taken.column("answer"),
            "end_time": taken.column("end_time"),
        }
    )


AUDIT_CHUNK_ROWS = 100_000


def audit(raw: pa.Table, config: AuditConfig, chunk_rows: int = AUDIT_CHUNK_ROWS) -> AuditResult:
    """Run every rule over ``raw`` (the raw-row columns; ``original`` is not needed).

    Row-local rules run chunk by chunk (bounded memory); the duplicate rules then run over
    the rows that passed. The questions come back in (end_time, id) order."""
    n = raw.num_rows
    passed_parts, quarantine_parts = [], []
    chunks = (raw.slice(start, chunk_rows) for start in range(0, max(n, 1), chunk_rows))
    for passed, rejected in ordered_map(lambda chunk: _check_chunk(chunk, config), chunks):
        passed_parts.append(passed)
        quarantine_parts.append(rejected)
    candidates = pa.concat_tables(passed_parts)
    dedup_reason: dict[int, tuple[str, str]] = {}
    collapsed = _deduplicate(candidates, dedup_reason)
    dropped = collapsed.copy()
    dropped[list(dedup_reason)] = True
    # One take both filters and orders the table by (end_time, id), the canonical order.
    kept = np.flatnonzero(~dropped)
    order = pc.sort_indices(
        candidates.select(list(QUESTION_SORT)).take(pa.array(kept)), sort_keys=[(key, "ascending") for key in QUESTION_SORT]
    ).to_numpy()
    questions = take_rows(candidates.drop(["source_row"]), pa.array(kept[order])).combine_chunks()
    if dedup_reason:
        rows = sorted(dedup_reason)
        positions = _np(candidates.column("source_row").take(pa.array(rows)))
        quarantine_parts.append(
            _quarantine_rows(raw, _raw_positions(raw, positions), [dedup_reason[r][0] for r in rows], [dedup_reason[r][1] for r in rows])
        )
    quarantine = pa.concat_tables(quarantine_parts).combine_chunks() if quarantine_parts else pa.table({})
    n_collapsed = int(collapsed.sum())
    rejected_rules = quarantine.column("rule").to_pylist()
    by_rule: dict[str, int] = {}
    for rule in rejected_rules:
        by_rule[rule] = by_rule.get(rule, 0) + 1
    report = {
        "rows_in": n,
        "rows_out": questions.num_rows,
        "rows_quarantined": quarantine.num_rows,
        "duplicates_collapsed": n_collapsed,
        "by_rule": dict(sorted(by_rule.items())),
        "counts_by_type": counts_by_type(questions),
    }
    assert report["rows_in"] == report["rows_out"] + report["rows_quarantined"] + n_collapsed, report
    return AuditResult(questions=questions, quarantine=quarantine, report=report)


def _raw_positions(raw: pa.Table, source_rows: np.ndarray) -> np.ndarray:
    """Positions in ``raw`` of the given source rows (raw is in source order; fall back to
    a lookup when it is not)."""
    all_rows = _np(raw.column("source_row"))
    if len(all_rows) and (np.diff(all_rows) == 1).all():
        return source_rows - all_rows[0]
    index = {int(r): i for i, r in enumerate(all_rows)}
    return np.array([index[int(r)] for r in source_rows], dtype=np.int64)


def _check_chunk(raw: pa.Table, config: AuditConfig) -> tuple[pa.Table, pa.Table]:
    """Row-local rules over one chunk: (normalised rows that passed, quarantine rows)."""
    raw = raw.combine_chunks()
    n = raw.num_rows

    def col(name: str) -> pa.Array:
        column = raw.column(name)
        array = column.chunk(0) if column.num_chunks else pa.array([], raw.schema.field(name).type)
        # A slice keeps its parent's offsets; list arithmetic below wants them from zero.
        return pa.concat_arrays([array]) if array.offset else array

    rule_names = list(RULES)
    reason = np.zeros(n, dtype=np.int16)  # 0 = passed, else 1 + index into rule_names
    details: dict[int, str] = {}

    def flag(rule: str, mask: np.ndarray, message=None) -> None:
        """First failing rule wins; ``message`` is a text, per-row texts, or a function of
        the flagged row numbers (so messages are only built for rejected rows)."""
        rows = np.flatnonzero(mask & (reason == 0))
        if len(rows) == 0:
            return
        reason[rows] = rule_names.index(rule) + 1
        if callable(message):
            details.update(zip(rows.tolist(), message(rows)))
        elif isinstance(message, np.ndarray):
            details.update(zip(rows.tolist(), message[rows].tolist()))
        elif message is not None:
            details.update(dict.fromkeys(rows.tolist(), message))

    if config.levels is not None:
        level = col("level")
        selected = pa.array(list(config.levels), pa.int64())
        level_ok = _np(pc.or_kleene(pc.is_null(level), pc.is_in(level, value_set=selected)))
        levels = _np(pc.fill_null(level, -1))
        flag("level_excluded", ~level_ok, lambda rows: [f"level {levels[r]} is not among the selected levels {list(config.levels)}" for r in rows])
    parse_error = col("parse_error")
    flag("unparseable", _np(parse_error.is_valid()), lambda rows: parse_error.take(pa.array(rows)).to_pylist())

    ids = pc.utf8_trim_whitespace(col("id"))
    flag("missing_id", _blank(col("id")))
    event = _collapse_ws(col("event"))
    flag("empty_event", _blank(col("event")))
    end_time = iso_dates(col("end_time"))
    flag("bad_end_time", _np(end_time.is_null()))

    options_in = col("options")
    n_options = _np(pc.fill_null(pc.list_value_length(options_in), 0))
    flag("too_few_options", n_options < 2)
    opt_flat = pc.list_flatten(options_in)
    opt_parents = pc.list_parent_indices(options_in).to_numpy()
    labels = _collapse_ws(opt_flat)
    blank_row = np.zeros(n, dtype=bool)
    blank_row[opt_parents[_blank(opt_flat)]] = True
    flag("blank_option", blank_row)
    folded = pc.utf8_lower(labels)
    flag("duplicate_options", _rows_with_repeated_labels(folded, opt_parents, n))

    answer_in = col("answer")
    flag("empty_answer", _blank(answer_in))
    indices, tokens_ok = _answer_indices(answer_in)
    flag("answer_not_letters", ~tokens_ok)
    idx_flat = indices.values.to_numpy()
    idx_parents = pc.list_parent_indices(indices).to_numpy()
    out_of_range = np.zeros(n, dtype=bool)
    out_of_range[idx_parents[(idx_flat < 0) | (idx_flat >= n_options[idx_parents])]] = True
    flag("answer_out_of_range", out_of_range)
    answer, n_letters = _canonical_answer(indices)

    # Question type: Yes/No options (any case) are yes_no; 2 named → binary_named; ≥3 → MC.
    two = n_options == 2
    label_starts = options_in.offsets.to_numpy()[:-1]
    pair_starts = label_starts[two]
    is_yes_no = np.zeros(n, dtype=bool)
    is_yes_no[two] = _np(pc.fill_null(pc.and_(pc.equal(folded.take(pair_starts), "yes"), pc.equal(folded.take(pair_starts + 1), "no")), False))
    type_code = np.where(is_yes_no, 0, np.where(two, 1, 2))
    inferred = pa.array(list(QUESTION_TYPES)).take(pa.array(type_code))
    given_type = col("question_type")
    type_ok = _np(pc.or_kleene(pc.is_null(given_type), pc.equal(given_type, inferred)))
    flag("question_type_mismatch", ~type_ok, lambda rows: [
        f"question_type {g!r} does not fit {n_options[r]} option(s); expected {QUESTION_TYPES[type_code[r]]!r}"
        for r, g in zip(rows, given_type.take(pa.array(rows)).to_pylist())
    ])
    derived_choice = pa.array(["single", "multi"]).take(pa.array((n_letters != 1).astype(np.int8)))
    given_choice = col("choice_type")
    choice_ok = _np(pc.or_kleene(pc.is_null(given_choice), pc.equal(given_choice, derived_choice)))
    flag("choice_type_mismatch", ~choice_ok, lambda rows: [
        f"choice_type {g!r} but the answer has {n_letters[r]} letter(s)"
        for r, g in zip(rows, given_choice.take(pa.array(rows)).to_pylist())
    ])

    pattern = _phrase_pattern(config.post_resolution_phrases)
    if pattern:
        flag("post_resolution_wording", _np(pc.fill_null(pc.match_substring_regex(event, pattern), False)))
    markers = [m.strip().lower() for m in config.outcome_markers if m.strip()]
    if markers:
        hit = np.zeros(len(folded), dtype=bool)
        for marker in markers:
            hit |= _np(pc.fill_null(pc.match_substring(folded, marker), False))
        encoded = np.zeros(n, dtype=bool)
        encoded[opt_parents[hit]] = True
        flag("option_encodes_outcome", encoded)

    # Yes/No items get the canonical labels in place: their two labels sit at label_starts.
    yes_no_at = label_starts[is_yes_no]
    yes_no_slots = np.zeros(len(labels), dtype=bool)
    yes_no_slots[yes_no_at] = yes_no_slots[yes_no_at + 1] = True
    labels = pc.replace_with_mask(labels, pa.array(yes_no_slots), pa.array(["Yes", "No"]).take(pa.array(np.tile([0, 1], len(yes_no_at)))))
    canonical_labels = pa.ListArray.from_arrays(options_in.offsets, labels) if len(options_in) else options_in
    candidates = pa.table(
        {
            "source_row": col("source_row"),
            "id": ids,
            "choice_type": derived_choice,
            "question_type": inferred,
            "event": event,
            "options": canonical_labels,
            "answer": answer,
            "end_time": end_time,
        }
    )
    passed = reason == 0
    rejected = np.flatnonzero(~passed)
    rules = [rule_names[code - 1] for code in reason[rejected]]
    messages = [details.get(row, RULES[rule][1]) for row, rule in zip(rejected.tolist(), rules)]
    return candidates.filter(pa.array(passed)), _quarantine_rows(raw, rejected, rules, messages)


def counts_by_type(questions: pa.Table) -> dict[str, int]:
    if questions.num_rows == 0:
        return {}
    grouped = questions.group_by(["question_type", "choice_type"]).aggregate([("id", "count")])
    return {
        f"{qt}/{ct}": int(c)
        for qt, ct, c in sorted(zip(*(grouped.column(k).to_pylist() for k in ("question_type", "choice_type", "id_count"))))
    }


def _deduplicate(candidates: pa.Table, rejected: dict[int, tuple[str, str]]) -> np.ndarray:
    """Apply the duplicate rules; record rejections in ``rejected`` (row → (rule,
    message)) and return the collapsed mask.

    By id: exact copies (all seven fields equal) collapse onto the first row; any
    difference quarantines every row of that id. By content (normalised event + options):
    the smallest id is kept, the others quarantined naming it."""
    collapsed = np.zeros(candidates.num_rows, dtype=bool)
    if candidates.num_rows == 0:
        return collapsed
    _, id_group_size = _group_sizes(candidates.column("id").combine_chunks())  # ids are short
    in_dup = id_group_size > 1
    if in_dup.any():
        rows = np.flatnonzero(in_dup)
        records: dict[str, list[tuple[int, tuple]]] = {}
        for row, rec in zip(rows, candidates.take(pa.array(rows)).drop(["source_row"]).to_pylist()):
            records.setdefault(rec["id"], []).append((row, tuple(json.dumps(rec[k], default=str) for k in sorted(rec))))
        for qid, group in records.items():
            if len({fields for _, fields in group}) == 1:
                collapsed[[row for row, _ in group[1:]]] = True
            else:
                for row, _ in group:
                    rejected[int(row)] = ("conflicting_duplicate_id", f"{len(group)} rows share id {qid!r} with different fields")
    # Content duplicates among the rows still standing. Events are compared first (cheap,
    # nearly unique); only rows whose event repeats build the full event + options key.
    standing = ~collapsed
    standing[list(rejected)] = False
    event_codes = pc.dictionary_encode(pc.utf8_lower(candidates.column("event"))).combine_chunks().indices.to_numpy(zero_copy_only=False)
    event_sizes = np.bincount(event_codes[standing], minlength=int(event_codes.max(initial=-1)) + 1)
    maybe = np.flatnonzero(standing & (event_sizes[event_codes] > 1))
    if len(maybe) == 0:
        return collapsed
    subset = candidates.take(pa.array(maybe))
    key = pc.binary_join_element_wise(
        pc.utf8_lower(subset.column("event").combine_chunks()),
        pc.utf8_lower(pc.binary_join(subset.column("options").combine_chunks(), "\x1f")),
        "\x1e",
    )
    codes = pc.dictionary_encode(key).indices.to_numpy(zero_copy_only=False)
    sizes = np.bincount(codes, minlength=int(codes.max(initial=-1)) + 1)
    in_dup = np.flatnonzero(sizes[codes] > 1)
    if len(in_dup):
        groups: dict[str, list[tuple[str, int]]] = {}
        taken = pa.array(in_dup)
        for k, qid, row in zip(key.take(taken).to_pylist(), subset.column("id").take(taken).to_pylist(), maybe[in_dup].tolist()):
            groups.setdefault(k, []).append((qid, row))
        for group in groups.values():
            group.sort()
            kept_id = group[0][0]
            for qid, row in group[1:]:
                rejected[row] = ("duplicate_content", f"same event and options as id {kept_id!r}")
    return collapsed


def quarantine_with_originals(quarantine: pa.Table, originals: dict[int, dict[str, Any]]) -> pa.Table:
    """Attach each quarantined row's original source record as JSON (the ``raw`` column)."""
    raw = [
        json.dumps(originals.get(row), sort_keys=True, ensure_ascii=False, default=str)
        for row in quarantine.column("source_row").to_pylist()
    ]
    return quarantine.append_column("raw", pa.array(raw, pa.string())).select(QUARANTINE_SCHEMA.names)

