"""The audit: each rule quarantines with its reason; nothing is lost."""

import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.config import EndTimeRange
from oracleproto.contract import MAX_ID_CHARS
from oracleproto.corpus.audit import RULES, AuditConfig, audit
from oracleproto.corpus.sources import raw_table
from oracleproto.validation import validate_questions

CONFIG = AuditConfig(levels=(1, 2), post_resolution_phrases=["the result was", "was won by"], outcome_markers=["(winner)"])


def _raw(rows):
    cols = {k: [r.get(k) for r in rows] for k in ("id", "choice_type", "question_type", "event", "options", "answer", "end_time", "level", "parse_error")}
    return raw_table(source_row=list(range(len(rows))), original=pa.table({"n": list(range(len(rows)))}), **cols)


def q(**fields):
    base = {"id": "q", "event": "Will it rain?", "options": ["Yes", "No"], "answer": "A", "end_time": "2024-01-02", "level": 1}
    return {**base, **fields}


def _rules(rows, config=CONFIG, chunk_rows=1000):
    result = audit(_raw(rows), config, chunk_rows=chunk_rows)
    got = dict(zip(result.quarantine.column("id").to_pylist(), result.quarantine.column("rule").to_pylist()))
    return result, got


def test_clean_rows_are_normalised():
    result, quarantined = _rules([
        q(id="yn", options=["yes", " no "], answer="A"),
        q(id="bn", event="Who  wins?", options=["Lakers", "Celtics"], answer="B"),
        q(id="mc", options=["x", "y", "z"], answer="C,A"),
    ])
    assert quarantined == {}
    rows = {r["id"]: r for r in result.questions.to_pylist()}
    assert rows["yn"]["options"] == ["Yes", "No"] and rows["yn"]["question_type"] == "yes_no"
    assert rows["bn"]["question_type"] == "binary_named" and rows["bn"]["event"] == "Who wins?"
    assert rows["mc"]["answer"] == "A, C" and rows["mc"]["choice_type"] == "multi"
    assert rows["mc"]["end_time"] == dt.date(2024, 1, 2)
    assert validate_questions(result.questions) == []


def test_every_rule_quarantines_with_its_reason():
    cases = {
        "level_excluded": q(level=3),
        "unparseable": q(parse_error="prompt has no block"),
        "missing_id": q(id="  "),
        "id_too_long": q(),
        "invisible_id": q(),
        "empty_event": q(event=" "),
        "invisible_event": q(event="\u200b\u200d"),
        "bad_end_time": q(end_time="next Tuesday"),
        "end_time_out_of_range": q(end_time="0000-01-01"),
        "too_few_options": q(options=["Only"]),
        "too_many_options": q(options=[f"o{i}" for i in range(65)]),
        "blank_option": q(options=["a", " ", "c"]),
        "invisible_option": q(options=["a", "\x00", "c"]),
        "duplicate_options": q(options=["Paris", "paris ", "Rome"]),
        "empty_answer": q(answer=""),
        "answer_not_letters": q(options=["a", "b", "c"], answer="AB"),
        "answer_out_of_range": q(options=["a", "b", "c"], answer="D"),
        "question_type_mismatch": q(question_type="multiple_choice"),
        "choice_type_mismatch": q(options=["a", "b", "c"], answer="A, B", choice_type="single"),
        "post_resolution_wording": q(event="The final was won by Spain; who lifted the cup?"),
        "option_encodes_outcome": q(options=["Spain (winner)", "England"]),
    }
    ids = {"missing_id": "  ", "id_too_long": "x" * (MAX_ID_CHARS + 1), "invisible_id": "\u202e\ufeff"}
    rows = [{**row, "id": ids.get(rule, rule)} for rule, row in cases.items()]
    result, quarantined = _rules(rows)
    by_row = dict(zip(result.quarantine.column("source_row").to_pylist(), result.quarantine.column("rule").to_pylist()))
    assert [by_row[i] for i in range(len(cases))] == list(cases)
    messages = result.quarantine.column("message").to_pylist()
    assert all(m.split(":")[0] in {"level", "raw", "id", "event", "end_time", "options", "answer", "question_type", "choice_type"} for m in messages)
    assert result.report["by_rule"] == {rule: 1 for rule in cases}
    assert result.questions.num_rows == 0


@pytest.mark.parametrize("chunk_rows", [1, 4, 1000])
def test_duplicates_by_id_and_content(chunk_rows):
    rows = [
        q(id="same"), q(id="same"),  # exact copies collapse
        q(id="clash", answer="A"), q(id="clash", answer="B"),  # conflicting → both quarantined
        q(id="b-copy", event="Will it snow?"), q(id="a-orig", event="will  it SNOW?"),  # same content
    ]
    result, _ = _rules(rows, chunk_rows=chunk_rows)
    report = result.report
    assert report["duplicates_collapsed"] == 1
    assert report["by_rule"] == {"conflicting_duplicate_id": 2, "duplicate_content": 1}
    assert sorted(result.questions.column("id").to_pylist()) == ["a-orig", "same"]
    message = [m for m, r in zip(result.quarantine.column("message").to_pylist(), result.quarantine.column("rule").to_pylist()) if r == "duplicate_content"]
    assert "a-orig" in message[0]
    assert report["rows_in"] == report["rows_out"] + report["rows_quarantined"] + report["duplicates_collapsed"]
    assert result.collapsed.to_pylist() == [{"source_row": 1, "id": "same", "into_source_row": 0, "into": "kept", "into_rule": None}]
    assert_every_row_accounted_for(result, len(rows))


def assert_every_row_accounted_for(result, rows_in):
    """kept + quarantined + collapsed = rows in, and each collapsed copy names the kept or
    quarantined row (of its id) it collapsed into."""
    quarantined = dict(zip(result.quarantine.column("source_row").to_pylist(), result.quarantine.column("rule").to_pylist()))
    collapsed = result.collapsed.to_pylist()
    assert result.questions.num_rows + len(quarantined) + len(collapsed) == rows_in == result.report["rows_in"]
    assert result.report["duplicates_collapsed"] == len(collapsed)
    assert not set(quarantined) & {c["source_row"] for c in collapsed}
    kept_ids = set(result.questions.column("id").to_pylist())
    for copy in collapsed:
        target = copy["into_source_row"]
        assert target not in {c["source_row"] for c in collapsed}
        if copy["into"] == "quarantined":
            assert quarantined[target] == copy["into_rule"]
        else:
            assert copy["into"] == "kept" and copy["into_rule"] is None and target not in quarantined and copy["id"] in kept_ids


@pytest.mark.parametrize("chunk_rows", [1, 1000])
def test_a_copy_of_a_row_quarantined_later_is_listed_with_that_row(chunk_rows):
    rows = [
        q(id="a-first", event="Will it hail?"),
        q(id="b-second", event="Will it hail?"),  # same content as a-first: quarantined
        q(id="b-second", event="Will it hail?"),  # exact copy of that row: collapsed into it
        q(id="b-second", event="Will it hail?"),
        q(id="c", event="Will it fog?"), q(id="c", event="Will it fog?"),
    ]
    result, quarantined = _rules(rows, chunk_rows=chunk_rows)
    assert quarantined == {"b-second": "duplicate_content"}
    assert result.collapsed.to_pylist() == [
        {"source_row": 2, "id": "b-second", "into_source_row": 1, "into": "quarantined", "into_rule": "duplicate_content"},
        {"source_row": 3, "id": "b-second", "into_source_row": 1, "into": "quarantined", "into_rule": "duplicate_content"},
        {"source_row": 5, "id": "c", "into_source_row": 4, "into": "kept", "into_rule": None},
    ]
    assert_every_row_accounted_for(result, len(rows))


@pytest.mark.parametrize(
    ("end_time", "kept"),
    [("0000-01-01", False), ("0001-01-01", False), ("1899-12-31", False), ("1900-01-01", True), ("2100-12-31", True),
     ("2101-01-01", False), ("9999-12-31", False)],
)  # fmt: skip
def test_end_time_outside_the_plausible_range_is_quarantined(end_time, kept):
    result, quarantined = _rules([q(id="t", end_time=end_time)])
    assert quarantined == ({} if kept else {"t": "end_time_out_of_range"})
    if not kept:
        message = result.quarantine.column("message")[0].as_py()
        assert message == f"end_time: end_time {end_time} is outside the plausible range 1900-01-01 … 2100-12-31"
    assert validate_questions(result.questions) == []


def test_the_end_time_range_is_configurable():
    wide = AuditConfig(levels=None, post_resolution_phrases=(), outcome_markers=(), end_times=EndTimeRange(end_time_min=dt.date(1, 1, 1)))
    narrow = AuditConfig(levels=None, post_resolution_phrases=(), outcome_markers=(), end_times=EndTimeRange(end_time_max=dt.date(2020, 1, 1)))
    rows = [q(id="old", end_time="1850-01-01"), q(id="new", event="Will it snow?", end_time="2024-01-01")]
    assert _rules(rows, wide)[1] == {}
    assert _rules(rows, narrow)[1] == {"old": "end_time_out_of_range", "new": "end_time_out_of_range"}


def test_impossible_calendar_days_are_quarantined_not_rolled_over():
    result, quarantined = _rules([q(id="feb30", end_time="2025-02-30"), q(id="apr31", end_time="2025-04-31"), q(id="leap", end_time="2024-02-29")])
    assert quarantined == {"feb30": "bad_end_time", "apr31": "bad_end_time"}
    assert result.questions.column("end_time").to_pylist() == [dt.date(2024, 2, 29)]


def test_multi_answer_with_one_gold_letter_is_kept_as_multi():
    result, quarantined = _rules([
        q(id="stated", event="Which one?", options=["x", "y", "z"], answer="B", choice_type="multi"),
        q(id="unstated", event="Which two?", options=["x", "y", "z"], answer="B"),
        q(id="single", event="Which three?", options=["x", "y", "z"], answer="B", choice_type="single"),
    ])
    assert quarantined == {}
    assert {r["id"]: r["choice_type"] for r in result.questions.to_pylist()} == {"stated": "multi", "unstated": "single", "single": "single"}
    assert validate_questions(result.questions) == []


def test_sixty_four_options_pass_and_their_last_letter_is_written_canonically():
    result, quarantined = _rules([q(options=[f"o{i}" for i in range(64)], answer="\x80, A")])
    assert quarantined == {}
    assert result.questions.column("answer").to_pylist() == ["A, \x80"]


def test_counts_by_type_keys():
    result, _ = _rules([q(id="a"), q(id="b", event="Which?", options=["x", "y", "z"], answer="A, B")])
    assert result.report["counts_by_type"] == {"multiple_choice/multi": 1, "yes_no/single": 1}


labels = st.text(alphabet="abcXYZ ,(winner)", max_size=8)
raw_rows = st.fixed_dictionaries(
    {
        "id": st.one_of(st.none(), st.sampled_from(["a", "b", "c", "", " ", "\u200b"])),
        "event": st.one_of(st.none(), st.text(max_size=30)),
        "options": st.one_of(st.none(), st.lists(labels, max_size=5)),
        "answer": st.one_of(st.none(), st.text(alphabet="ABCDZ, a", max_size=6)),
        "end_time": st.one_of(st.none(), st.sampled_from(["2024-01-01", "2024-13-01", "x", "2025-06-30T00:00:00", "0000-01-01", "9999-12-31"])),
        "question_type": st.one_of(st.none(), st.sampled_from(["yes_no", "binary_named", "multiple_choice", "other"])),
        "choice_type": st.one_of(st.none(), st.sampled_from(["single", "multi", "?"])),
        "level": st.one_of(st.none(), st.integers(0, 4)),
        "parse_error": st.one_of(st.none(), st.just("bad prompt")),
    }
)


@settings(max_examples=150, deadline=None)
@given(st.lists(raw_rows, max_size=12))
def test_every_row_ends_admitted_or_quarantined(rows):
    result = audit(_raw(rows), CONFIG, chunk_rows=5)
    report = result.report
    assert report["rows_in"] == len(rows)
    assert report["rows_out"] + report["rows_quarantined"] + report["duplicates_collapsed"] == len(rows)
    assert_every_row_accounted_for(result, len(rows))
    assert set(result.quarantine.column("rule").to_pylist()) <= set(RULES)
    assert all(result.quarantine.column("message").to_pylist())
    assert validate_questions(result.questions) == []
