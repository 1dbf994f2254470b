"""Construction-time audit: raw rows → the seven-column question table + quarantine.

Every raw row ends in exactly one place: the question table (possibly normalised), the
quarantine (with the first rule it breaks and a message naming the field), or — for exact
copies of a row of the same id — the collapsed list, which names the row each copy collapsed
into (kept, or quarantined by a later duplicate rule). Rules are vectorised masks; a row's
reason is the first failing rule in ``RULES`` order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.arrays import collapse_whitespace, iso_dates
from oracleproto.config import EndTimeRange
from oracleproto.contract import AUDITED_RULES, QuestionColumns
from oracleproto.parallel import ordered_map, take_rows
from oracleproto.schema import (
    COLLAPSED_SCHEMA,
    QUARANTINE_SCHEMA,
    QUESTION_TYPES,
    YES_NO_OPTIONS,
)

# Rule name → (field, what the rule requires). Order = precedence: the source's own verdicts,
# then the question contract (oracleproto.contract), then the leak cues and the duplicates.
RULES: dict[str, tuple[str, str]] = {
    "level_excluded": ("level", "level must be one of the selected levels"),
    "unparseable": ("raw", "the source record must parse into question fields"),
    **{rule.name: (rule.field, rule.message) for rule in AUDITED_RULES},
    "post_resolution_wording": ("event", "the event must not be worded after its resolution"),
    "option_encodes_outcome": ("options", "option labels must not encode the outcome"),
    "conflicting_duplicate_id": ("id", "rows sharing an id must be identical"),
    "duplicate_content": ("event", "the same event and options must not appear under two ids"),
}

QUESTION_SORT = ("end_time", "id")  # the canonical row order of every question table


@dataclass
class AuditConfig:
    levels: Sequence[int] | None  # None: every level (defaults: oracleproto.config)
    post_resolution_phrases: Sequence[str]
    outcome_markers: Sequence[str]
    end_times: EndTimeRange | None = None  # the audit section's plausible end_time range (None: its defaults)


@dataclass
class AuditResult:
    questions: pa.Table
    quarantine: pa.Table  # source_row, id, rule, message + raw fields (raw JSON added by the caller)
    report: dict[str, Any] = field(default_factory=dict)
    collapsed: pa.Table = field(default_factory=COLLAPSED_SCHEMA.empty_table)  # each collapsed copy and the row it collapsed into


def _np(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False))


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
    into = _deduplicate(candidates, dedup_reason)
    dropped = into >= 0
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
    collapsed = _collapsed_rows(candidates, into, dedup_reason)
    by_rule: dict[str, int] = {}
    for rule in quarantine.column("rule").to_pylist():
        by_rule[rule] = by_rule.get(rule, 0) + 1
    report = {
        "rows_in": n,
        "rows_out": questions.num_rows,
        "rows_quarantined": quarantine.num_rows,
        "duplicates_collapsed": collapsed.num_rows,
        "by_rule": dict(sorted(by_rule.items())),
        "counts_by_type": counts_by_type(questions),
    }
    assert report["rows_in"] == report["rows_out"] + report["rows_quarantined"] + collapsed.num_rows, report
    return AuditResult(questions=questions, quarantine=quarantine, report=report, collapsed=collapsed)


def _collapsed_rows(candidates: pa.Table, into: np.ndarray, rejected: dict[int, tuple[str, str]]) -> pa.Table:
    """One record per collapsed copy: its source row and id, and the source row it collapsed
    into with that row's fate (kept, or quarantined under a later duplicate rule)."""
    rows = np.flatnonzero(into >= 0)
    targets = into[rows]
    source_row = candidates.column("source_row")
    target_rules = [rejected.get(int(t), (None,))[0] for t in targets]
    return pa.table(
        {
            "source_row": source_row.take(pa.array(rows, pa.int64())),
            "id": candidates.column("id").take(pa.array(rows, pa.int64())),
            "into_source_row": source_row.take(pa.array(targets, pa.int64())),
            "into": pa.array(["kept" if rule is None else "quarantined" for rule in target_rules], pa.string()),
            "into_rule": pa.array(target_rules, pa.string()),
        },
        schema=COLLAPSED_SCHEMA,
    )


def _raw_positions(raw: pa.Table, source_rows: np.ndarray) -> np.ndarray:
    """Positions in ``raw`` of the given source rows (raw is in source order; fall back to
    a lookup when it is not)."""
    all_rows = _np(raw.column("source_row"))
    if len(all_rows) and (np.diff(all_rows) == 1).all():
        return source_rows - all_rows[0]
    index = {int(r): i for i, r in enumerate(all_rows)}
    return np.array([index[int(r)] for r in source_rows], dtype=np.int64)


class _Verdicts:
    """The first rule each row of a chunk breaks, and per-row messages (built only for the
    rows a rule rejects)."""

    def __init__(self, n_rows: int) -> None:
        self.rule_names = list(RULES)
        self.reason = np.zeros(n_rows, dtype=np.int16)  # 0 = passed, else 1 + index into rule_names
        self.details: dict[int, str] = {}

    def flag(self, rule: str, mask: np.ndarray, message: Callable[[np.ndarray], list[str]] | None = None) -> None:
        """Rows of ``mask`` not flagged yet break ``rule``; ``message`` words it per row."""
        rows = np.flatnonzero(mask & (self.reason == 0))
        if len(rows) == 0:
            return
        self.reason[rows] = self.rule_names.index(rule) + 1
        if message is not None:
            self.details.update(zip(rows.tolist(), message(rows)))

    @property
    def passed(self) -> np.ndarray:
        return self.reason == 0

    def rejections(self) -> tuple[np.ndarray, list[str], list[str]]:
        """(rejected rows, their rules, their messages)."""
        rows = np.flatnonzero(self.reason)
        rules = [self.rule_names[code - 1] for code in self.reason[rows]]
        return rows, rules, [self.details.get(row, RULES[rule][1]) for row, rule in zip(rows.tolist(), rules)]


def _question_fields(raw: pa.Table, end_times: EndTimeRange | None) -> QuestionColumns:
    """The chunk's columns as the contract reads them: ids trimmed, events with whitespace
    folded, end_time as dates (null where the text names no calendar day)."""
    given = QuestionColumns(raw)
    for name, array in (
        ("id", pc.utf8_trim_whitespace(given.column("id"))),
        ("event", collapse_whitespace(given.column("event"))),
        ("end_time", iso_dates(given.column("end_time"))),
    ):
        raw = raw.set_column(raw.schema.get_field_index(name), name, array)
    return QuestionColumns(raw, end_times)


def _source_rules(c: QuestionColumns, config: AuditConfig, verdicts: _Verdicts) -> None:
    """What the source says of a row: its level, and whether it parsed into fields."""
    if config.levels is not None:
        level = c.column("level")
        selected = pa.array(list(config.levels), pa.int64())
        level_ok = _np(pc.or_kleene(pc.is_null(level), pc.is_in(level, value_set=selected)))
        levels = _np(pc.fill_null(level, -1))
        verdicts.flag("level_excluded", ~level_ok, lambda rows: [f"level {levels[r]} is not among the selected levels {list(config.levels)}" for r in rows])
    parse_error = c.column("parse_error")
    verdicts.flag("unparseable", _np(parse_error.is_valid()), lambda rows: parse_error.take(pa.array(rows)).to_pylist())


def _leak_cues(c: QuestionColumns, config: AuditConfig, verdicts: _Verdicts) -> None:
    """Wording that gives the outcome away: in the event, or in an option label."""
    pattern = _phrase_pattern(config.post_resolution_phrases)
    if pattern:
        verdicts.flag("post_resolution_wording", _np(pc.fill_null(pc.match_substring_regex(c.column("event"), pattern), False)))
    markers = [m.strip().lower() for m in config.outcome_markers if m.strip()]
    if markers:
        hit = np.zeros(len(c.folded_labels), dtype=bool)
        for marker in markers:
            hit |= _np(pc.fill_null(pc.match_substring(c.folded_labels, marker), False))
        encoded = np.zeros(c.n_rows, dtype=bool)
        encoded[c.label_rows[hit]] = True
        verdicts.flag("option_encodes_outcome", encoded)


def _normalised(c: QuestionColumns) -> pa.Table:
    """The chunk's rows in stored form: canonical answers, "Yes"/"No" as the labels of every
    yes/no pair, the question type the options imply, and the choice type the source states
    (else the one the answer implies). Rows that break a rule come out as junk; the caller
    drops them."""
    yes_no_at = c.label_starts[c.yes_no_pair]
    yes_no_slots = np.zeros(len(c.labels), dtype=bool)
    yes_no_slots[yes_no_at] = yes_no_slots[yes_no_at + 1] = True
    canonical = pa.array(list(YES_NO_OPTIONS)).take(pa.array(np.tile([0, 1], len(yes_no_at))))
    labels = pc.replace_with_mask(c.labels, pa.array(yes_no_slots), canonical)
    offsets = np.zeros(c.n_rows + 1, dtype=np.int32)
    np.cumsum(c.n_options, out=offsets[1:])
    return pa.table(
        {
            "source_row": c.column("source_row"),
            "id": c.column("id"),
            "choice_type": c.filled_choice_type(),
            "question_type": pa.array(list(QUESTION_TYPES)).take(pa.array(c.implied_question_type)),
            "event": c.column("event"),
            "options": pa.ListArray.from_arrays(pa.array(offsets), labels),
            "answer": c.canonical_answer,
            "end_time": c.column("end_time"),
        }
    )


def _check_chunk(raw: pa.Table, config: AuditConfig) -> tuple[pa.Table, pa.Table]:
    """Row-local rules over one chunk: (normalised rows that passed, quarantine rows)."""
    raw = raw.combine_chunks()
    c = _question_fields(raw, config.end_times)
    verdicts = _Verdicts(raw.num_rows)
    _source_rules(c, config, verdicts)
    for rule in AUDITED_RULES:
        verdicts.flag(rule.name, rule.failing(c), (lambda rows, rule=rule: rule.messages(c, rows)) if rule.describe else None)
    _leak_cues(c, config, verdicts)
    rejected, rules, messages = verdicts.rejections()
    return _normalised(c).filter(pa.array(verdicts.passed)), _quarantine_rows(raw, rejected, rules, messages)


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
    message)) and return, per row, the row it collapsed into (-1: not collapsed).

    By id: exact copies (all seven fields equal) collapse onto the first row; any
    difference quarantines every row of that id. By content (normalised event + options):
    the smallest id is kept, the others quarantined naming it."""
    into = np.full(candidates.num_rows, -1, dtype=np.int64)
    if candidates.num_rows == 0:
        return into
    _, id_group_size = _group_sizes(candidates.column("id").combine_chunks())  # ids are short
    in_dup = id_group_size > 1
    if in_dup.any():
        rows = np.flatnonzero(in_dup)
        records: dict[str, list[tuple[int, tuple]]] = {}
        for row, rec in zip(rows, candidates.take(pa.array(rows)).drop(["source_row"]).to_pylist()):
            records.setdefault(rec["id"], []).append((row, tuple(json.dumps(rec[k], default=str) for k in sorted(rec))))
        for qid, group in records.items():
            if len({fields for _, fields in group}) == 1:
                into[[row for row, _ in group[1:]]] = group[0][0]
            else:
                for row, _ in group:
                    rejected[int(row)] = ("conflicting_duplicate_id", f"{len(group)} rows share id {qid!r} with different fields")
    # Content duplicates among the rows still standing. Events are compared first (cheap,
    # nearly unique); only rows whose event repeats build the full event + options key.
    standing = into < 0
    standing[list(rejected)] = False
    event_codes = pc.dictionary_encode(pc.utf8_lower(candidates.column("event"))).combine_chunks().indices.to_numpy(zero_copy_only=False)
    event_sizes = np.bincount(event_codes[standing], minlength=int(event_codes.max(initial=-1)) + 1)
    maybe = np.flatnonzero(standing & (event_sizes[event_codes] > 1))
    if len(maybe) == 0:
        return into
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
    return into


def quarantine_with_originals(quarantine: pa.Table, originals: dict[int, dict[str, Any]]) -> pa.Table:
    """Attach each quarantined row's original source record as JSON (the ``raw`` column)."""
    raw = [
        json.dumps(originals.get(row), sort_keys=True, ensure_ascii=False, default=str)
        for row in quarantine.column("source_row").to_pylist()
    ]
    return quarantine.append_column("raw", pa.array(raw, pa.string())).select(QUARANTINE_SCHEMA.names)

