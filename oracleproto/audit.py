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

from oracleproto.schema import QUARANTINE_SCHEMA, QUESTION_SCHEMA, QUESTION_TYPES

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

_WS = r"\s+"
_ANSWER_TOKENS = r"^\s*[^\s,]\s*(?:[,\s]\s*[^\s,]\s*)*$"


@dataclass
class AuditConfig:
    levels: Sequence[int] | None = (1, 2)
    post_resolution_phrases: Sequence[str] = ()
    outcome_markers: Sequence[str] = ()


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
    return pc.utf8_trim_whitespace(pc.replace_substring_regex(values, _WS, " "))


def _phrase_pattern(phrases: Sequence[str]) -> str | None:
    words = [p.strip().lower() for p in phrases if p.strip()]
    if not words:
        return None
    return r"(?i)(?:^|\W)(?:" + "|".join(re.escape(w) for w in words) + r")(?:\W|$)"


def _parse_dates(values: pa.Array) -> pa.Array:
    head = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(values), 0, 10)
    ok = pc.match_substring_regex(head, r"^\d{4}-\d{2}-\d{2}$")
    parsed = pc.strptime(head, format="%Y-%m-%d", unit="s", error_is_null=True)
    return pc.if_else(ok, pc.cast(parsed, pa.date32()), pa.scalar(None, pa.date32()))


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
    indices = codes - ord("A")
    counts = np.bincount(parents, minlength=len(answer))
    offsets = np.zeros(len(answer) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    tokens_ok = _np(pc.fill_null(pc.match_substring_regex(answer, _ANSWER_TOKENS), False))
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(indices)), tokens_ok


def letters_out_of_range(answer: pa.Array, options: pa.Array) -> np.ndarray:
    """Per row: does the answer hold a token that is not a letter of one of its options?"""
    indices, tokens_ok = _answer_indices(answer)
    n_options = _np(pc.fill_null(pc.list_value_length(options), 0))
    flat = indices.values.to_numpy()
    parents = pc.list_parent_indices(indices).to_numpy()
    bad = ~tokens_ok
    bad[parents[(flat < 0) | (flat >= n_options[parents])]] = True
    return bad


def _canonical_answer(indices: pa.ListArray) -> pa.Array:
    """Distinct indices in option order joined "A, C" (rows with bad indices give junk,
    but those rows are quarantined before this value is used)."""
    n = len(indices)
    flat = indices.values.to_numpy()
    parents = pc.list_parent_indices(indices).to_numpy()
    order = np.lexsort((flat, parents))
    flat, parents = flat[order], parents[order]
    first = np.ones(len(flat), dtype=bool)
    first[1:] = (flat[1:] != flat[:-1]) | (parents[1:] != parents[:-1])
    flat, parents = flat[first], parents[first]
    chars = np.clip(flat + ord("A"), 0, 255).astype(np.uint8).view("S1").astype("U1")
    counts = np.bincount(parents, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets), pa.array(chars, pa.string()))
    return pc.binary_join(lists, ", "), counts


def audit(raw: pa.Table, config: AuditConfig) -> AuditResult:
    """Run every rule over ``raw`` (the raw-row columns; ``original`` is not needed)."""
    raw = raw.combine_chunks()
    n = raw.num_rows
    col = lambda name: raw.column(name).chunk(0) if raw.column(name).num_chunks else pa.array([], raw.schema.field(name).type)  # noqa: E731
    reason = np.full(n, "", dtype=object)
    detail = np.full(n, "", dtype=object)

    def flag(rule: str, mask: np.ndarray, message: np.ndarray | str | None = None) -> None:
        fresh = mask & (reason == "")
        reason[fresh] = rule
        detail[fresh] = RULES[rule][1] if message is None else (message[fresh] if isinstance(message, np.ndarray) else message)

    level = _np(col("level"))
    if config.levels is not None:
        level_ok = np.isin(level, np.asarray(list(config.levels), dtype=float)) | np.isnan(level.astype(float))
        flag("level_excluded", ~level_ok, np.array([f"level {lv} is not among the selected levels {list(config.levels)}" for lv in level], dtype=object) if (~level_ok).any() else None)
    parse_error = col("parse_error")
    flag("unparseable", _np(parse_error.is_valid()), _np(pc.fill_null(parse_error, "")))

    ids = pc.utf8_trim_whitespace(col("id"))
    flag("missing_id", _blank(col("id")))
    event = _collapse_ws(col("event"))
    flag("empty_event", _blank(col("event")))
    end_time = _parse_dates(col("end_time"))
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
    pairs = pa.table({"row": opt_parents, "label": folded})
    distinct = pairs.group_by(["row", "label"]).aggregate([]).group_by("row").aggregate([("label", "count")])
    n_distinct = np.zeros(n, dtype=np.int64)
    n_distinct[_np(distinct.column("row"))] = _np(distinct.column("label_count"))
    flag("duplicate_options", (n_distinct != n_options) & (n_options >= 2))

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
    options_norm = pa.ListArray.from_arrays(options_in.offsets, labels) if len(options_in) else options_in
    first = pc.utf8_lower(pc.list_element(pc.if_else(pc.greater_equal(pc.list_value_length(options_in), 1), options_norm, pa.scalar(["?"], pa.list_(pa.string()))), 0))
    second = pc.utf8_lower(pc.list_element(pc.if_else(pc.greater_equal(pc.list_value_length(options_in), 2), options_norm, pa.scalar(["?", "?"], pa.list_(pa.string()))), 1))
    is_yes_no = (n_options == 2) & _np(pc.fill_null(pc.and_(pc.equal(first, "yes"), pc.equal(second, "no")), False))
    inferred = np.where(is_yes_no, "yes_no", np.where(n_options == 2, "binary_named", "multiple_choice"))
    given_type = _np(col("question_type")).astype(object)
    type_known = np.isin(given_type, list(QUESTION_TYPES)) | (given_type == None)  # noqa: E711
    type_fits = (given_type == None) | (given_type == inferred)  # noqa: E711
    flag("question_type_mismatch", ~(type_known & type_fits),
         np.array([f"question_type {g!r} does not fit {k} option(s) ({'Yes/No' if yn else 'named'}); expected {i!r}" for g, k, yn, i in zip(given_type, n_options, is_yes_no, inferred)], dtype=object))
    derived_choice = np.where(n_letters == 1, "single", "multi")
    given_choice = _np(col("choice_type")).astype(object)
    choice_fits = (given_choice == None) | (given_choice == derived_choice)  # noqa: E711
    flag("choice_type_mismatch", ~choice_fits,
         np.array([f"choice_type {g!r} but the answer has {c} letter(s)" for g, c in zip(given_choice, n_letters)], dtype=object))

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

    canonical_labels = pc.if_else(
        pa.array(is_yes_no), pa.array([["Yes", "No"]] * n, pa.list_(pa.string())) if n else options_norm, options_norm
    )
    candidates = pa.table(
        {
            "source_row": col("source_row"),
            "id": ids,
            "choice_type": pa.array(derived_choice, pa.string()),
            "question_type": pa.array(inferred, pa.string()),
            "event": event,
            "options": canonical_labels,
            "answer": answer,
            "end_time": end_time,
        }
    )
    passed = reason == ""
    collapsed_mask = _deduplicate(candidates, passed, reason, detail)
    keep = (reason == "") & ~collapsed_mask
    questions = candidates.filter(pa.array(keep)).drop(["source_row"])
    rejected = np.flatnonzero(reason != "")
    quarantine = pa.table(
        {
            "source_row": col("source_row").take(rejected),
            "id": col("id").take(rejected),
            "rule": pa.array(reason[rejected].astype(str), pa.string()),
            "message": pa.array(
                [f"{RULES[r][0]}: {m}" for r, m in zip(reason[rejected], detail[rejected])], pa.string()
            ),
            "event": col("event").take(rejected),
            "options": options_in.take(rejected),
            "answer": answer_in.take(rejected),
            "end_time": col("end_time").take(rejected),
        }
    )
    n_collapsed = int(collapsed_mask.sum())
    rules, counts = np.unique(reason[rejected].astype(str), return_counts=True)
    report = {
        "rows_in": n,
        "rows_out": questions.num_rows,
        "rows_quarantined": len(rejected),
        "duplicates_collapsed": n_collapsed,
        "by_rule": {str(r): int(c) for r, c in zip(rules, counts)},
        "counts_by_type": counts_by_type(questions),
    }
    assert report["rows_in"] == report["rows_out"] + report["rows_quarantined"] + n_collapsed, report
    return AuditResult(questions=questions, quarantine=quarantine, report=report)


def counts_by_type(questions: pa.Table) -> dict[str, int]:
    if questions.num_rows == 0:
        return {}
    grouped = questions.group_by(["question_type", "choice_type"]).aggregate([("id", "count")])
    return {
        f"{qt}/{ct}": int(c)
        for qt, ct, c in sorted(zip(*(grouped.column(k).to_pylist() for k in ("question_type", "choice_type", "id_count"))))
    }


def _deduplicate(candidates: pa.Table, passed: np.ndarray, reason: np.ndarray, detail: np.ndarray) -> np.ndarray:
    """Apply the duplicate rules in place on ``reason``/``detail``; return the collapsed mask.

    By id: exact copies (all seven fields equal) collapse onto the first row; any
    difference quarantines every row of that id. By content (normalised event + options):
    the smallest id is kept, the others quarantined naming it."""
    collapsed = np.zeros(candidates.num_rows, dtype=bool)
    live = np.flatnonzero(passed)
    if len(live) == 0:
        return collapsed
    sub = candidates.take(pa.array(live))
    counts = sub.group_by("id").aggregate([("id", "count")])
    dup_ids = counts.filter(pc.greater(counts.column("id_count"), 1)).column("id")
    if len(dup_ids):
        in_dup = _np(pc.is_in(sub.column("id"), value_set=dup_ids.combine_chunks()))
        rows = live[in_dup]
        records: dict[str, list[tuple[int, tuple]]] = {}
        for row, rec in zip(rows, candidates.take(pa.array(rows)).drop(["source_row"]).to_pylist()):
            records.setdefault(rec["id"], []).append((row, tuple(json.dumps(rec[k], default=str) for k in sorted(rec))))
        for qid, group in records.items():
            if len({fields for _, fields in group}) == 1:
                collapsed[[row for row, _ in group[1:]]] = True
            else:
                for row, _ in group:
                    reason[row] = "conflicting_duplicate_id"
                    detail[row] = f"{len(group)} rows share id {qid!r} with different fields"
    live = np.flatnonzero((reason == "") & ~collapsed)
    if len(live) == 0:
        return collapsed
    sub = candidates.take(pa.array(live))
    key = pc.binary_join_element_wise(
        pc.utf8_lower(sub.column("event")), pc.utf8_lower(pc.binary_join(sub.column("options").combine_chunks(), "\x1f")), "\x1e"
    )
    keyed = pa.table({"key": key, "pos": np.arange(len(live))})
    counts = keyed.group_by("key").aggregate([("pos", "count")])
    dup_keys = counts.filter(pc.greater(counts.column("pos_count"), 1)).column("key")
    if len(dup_keys):
        in_dup = _np(pc.is_in(key, value_set=dup_keys.combine_chunks()))
        groups: dict[str, list[tuple[str, int]]] = {}
        for k, qid, row in zip(pc.filter(key, pa.array(in_dup)).to_pylist(), pc.filter(sub.column("id"), pa.array(in_dup)).to_pylist(), live[in_dup]):
            groups.setdefault(k, []).append((qid, row))
        for group in groups.values():
            group.sort()
            kept_id = group[0][0]
            for qid, row in group[1:]:
                reason[row] = "duplicate_content"
                detail[row] = f"same event and options as id {kept_id!r}"
    return collapsed


def quarantine_with_originals(quarantine: pa.Table, originals: dict[int, dict[str, Any]]) -> pa.Table:
    """Attach each quarantined row's original source record as JSON (the ``raw`` column)."""
    raw = [
        json.dumps(originals.get(row), sort_keys=True, ensure_ascii=False, default=str)
        for row in quarantine.column("source_row").to_pylist()
    ]
    return quarantine.append_column("raw", pa.array(raw, pa.string())).select(QUARANTINE_SCHEMA.names)


QUESTION_SORT = ("end_time", "id")
assert set(QUESTION_SORT) <= set(QUESTION_SCHEMA.names)
