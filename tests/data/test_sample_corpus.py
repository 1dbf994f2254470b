"""Invariants of the embedded sample corpus (data/sample/futurex_sample.jsonl) and its search archive."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from oracleproto.corpus.sources.futurex import parse_futurex
from oracleproto.letters import answer_indices

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "sample"
SAMPLE_PATH = SAMPLE_DIR / "futurex_sample.jsonl"
FUTUREX_KEYS = ["id", "prompt", "ground_truth", "end_time", "level", "title", "source_url", "resolution_note"]
POST_RESOLUTION_WORDING = re.compile(
    r"\b(the result was|was won by|turned out|has been announced|were announced|has won|have won)\b", re.I
)


def _load_module(name: str):
    spec = importlib.util.spec_from_file_location(name, SAMPLE_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_PATH.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def parsed(rows) -> list[dict]:
    """The rows as the ingest stage reads them (FutureX prompt → event, options, answer)."""
    table = parse_futurex(pa.Table.from_pylist(rows))
    return table.select(["id", "event", "options", "answer", "end_time", "parse_error"]).to_pylist()


def _strata(options: list[str], answer: str) -> tuple[str, str]:
    if options == ["Yes", "No"]:
        question_type = "yes_no"
    elif len(options) == 2:
        question_type = "binary_named"
    else:
        question_type = "multiple_choice"
    return question_type, "single" if len(answer_indices(answer)) == 1 else "multi"


def test_rows_have_futurex_keys_in_order(rows):
    assert len(rows) >= 60
    for row in rows:
        assert list(row) == FUTUREX_KEYS, row["id"]


def test_ids_are_unique_24_hex(rows):
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{24}", qid) for qid in ids)


def test_rows_are_sorted_by_end_time_then_id(rows):
    keys = [(row["end_time"], row["id"]) for row in rows]
    assert keys == sorted(keys)


def test_resolution_dates_span_2023_to_2026(rows):
    years = Counter(dt.date.fromisoformat(row["end_time"]).year for row in rows)
    assert set(years) <= {2023, 2024, 2025, 2026}
    # several model cutoffs (2023-10 … 2026-03) split the sample, so every year must be populated
    assert all(years[year] >= 5 for year in (2023, 2024, 2025, 2026)), years


def test_every_row_has_a_source_and_a_note(rows):
    for row in rows:
        assert row["source_url"].startswith("https://"), row["id"]
        assert row["resolution_note"].strip(), row["id"]


def test_prompts_parse_back_to_the_title(parsed, rows):
    for row, back in zip(rows, parsed):
        assert back["parse_error"] is None, (row["id"], back["parse_error"])
        assert back["event"] == row["title"]
        assert back["end_time"] == row["end_time"]


def test_strata_counts(parsed):
    counts = Counter(_strata(row["options"], row["answer"]) for row in parsed)
    assert counts[("yes_no", "single")] >= 5
    assert counts[("binary_named", "single")] >= 2
    assert counts[("multiple_choice", "single")] >= 5
    assert counts[("multiple_choice", "multi")] >= 5
    assert sum(counts.values()) == len(parsed)


def test_levels_follow_question_type(parsed, rows):
    for row, back in zip(rows, parsed):
        question_type, _ = _strata(back["options"], back["answer"])
        assert row["level"] == (2 if question_type == "multiple_choice" else 1), row["id"]


def test_options_are_well_formed(parsed):
    for row in parsed:
        options = row["options"]
        folded = [label.strip().casefold() for label in options]
        assert len(set(folded)) == len(folded), row["id"]
        assert len(options) == 2 or len(options) >= 3
        assert not any("winner" in label for label in folded), row["id"]
        assert max(answer_indices(row["answer"])) < len(options)


def test_events_are_phrased_before_resolution(rows):
    for row in rows:
        assert not POST_RESOLUTION_WORDING.search(row["title"]), row["title"]
        assert re.match(r"(Will|Which|Who|What|At which)\b", row["title"]), row["title"]


def test_committed_jsonl_is_what_the_generator_writes(rows):
    make_sample = _load_module("make_sample")
    assert make_sample.sample_rows() == rows
    assert len({item["slug"] for item in make_sample.QUESTIONS}) == len(make_sample.QUESTIONS)


# ------------------------------------------------------------------------------ search archive
ARCHIVE_PATH = SAMPLE_DIR / "archive.jsonl"
ARCHIVE_KEYS = ["doc_id", "url", "title", "published_date", "content"]
PRE_KINDS = {"background", "preview"}
POST_KINDS = {"result", "recap"}
DOC_KINDS = PRE_KINDS | POST_KINDS | {"stale", "undated"}


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    return [json.loads(line) for line in ARCHIVE_PATH.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def resolution(rows) -> dict[str, dt.date]:
    return {row["id"]: dt.date.fromisoformat(row["end_time"]) for row in rows}


def _split_doc_id(doc_id: str) -> tuple[str, str]:
    qid, _, kind = doc_id.partition("-")
    return qid, kind


def _kind_of(doc: dict) -> str:
    return _split_doc_id(doc["doc_id"])[1]


def _verdict(doc: dict, cutoff: dt.date) -> str:
    from oracleproto.harness.detector import heuristic_verdict
    from oracleproto.harness.search import SearchHit

    hit = SearchHit(title=doc["title"], url=doc["url"], content=doc["content"], published_date=doc["published_date"])
    return heuristic_verdict(hit, cutoff, undated="drop")


def test_archive_docs_are_well_formed(docs, resolution):
    assert ARCHIVE_PATH.stat().st_size < 1_000_000
    ids = [doc["doc_id"] for doc in docs]
    assert len(set(ids)) == len(ids)
    for doc in docs:
        assert list(doc) == ARCHIVE_KEYS, doc["doc_id"]
        qid, kind = _split_doc_id(doc["doc_id"])
        assert qid in resolution and kind in DOC_KINDS, doc["doc_id"]
        assert 300 <= len(doc["content"]) <= 1200, doc["doc_id"]
        assert doc["title"].strip() and doc["url"].startswith("https://")
        if doc["published_date"] is not None:
            dt.date.fromisoformat(doc["published_date"])


def test_each_question_has_pre_and_post_resolution_docs(docs, resolution):
    pre, post, per_question = Counter(), Counter(), Counter()
    for doc in docs:
        qid, kind = _split_doc_id(doc["doc_id"])
        per_question[qid] += 1
        if doc["published_date"] is None or kind == "stale":
            continue
        published, tau = dt.date.fromisoformat(doc["published_date"]), resolution[qid]
        pre[qid] += published < tau
        post[qid] += published >= tau
    for qid in resolution:
        assert pre[qid] >= 1 and post[qid] >= 1, qid
        assert 3 <= per_question[qid] <= 6, qid


def test_clean_pre_resolution_docs_survive_the_date_mask_and_heuristic_filter(docs, resolution, rows):
    notes = {row["id"]: row["resolution_note"] for row in rows}
    for doc in (doc for doc in docs if _kind_of(doc) in PRE_KINDS):
        qid = _split_doc_id(doc["doc_id"])[0]
        cutoff = resolution[qid] - dt.timedelta(days=1)  # χ = τ − δ with the default δ of 1 day
        assert _verdict(doc, cutoff) == "keep", doc["doc_id"]
        assert notes[qid] not in doc["content"]


def test_outcome_docs_are_dated_on_or_after_resolution_and_masked(docs, resolution):
    for doc in (doc for doc in docs if _kind_of(doc) in POST_KINDS):
        qid = _split_doc_id(doc["doc_id"])[0]
        assert dt.date.fromisoformat(doc["published_date"]) >= resolution[qid]
        assert _verdict(doc, resolution[qid] - dt.timedelta(days=1)).startswith("drop:published_after_cutoff")


def test_stale_docs_pass_the_date_mask_but_leak_a_later_date(docs, resolution):
    stale = [doc for doc in docs if _kind_of(doc) == "stale"]
    assert len(stale) >= 10
    for doc in stale:
        cutoff = resolution[_split_doc_id(doc["doc_id"])[0]] - dt.timedelta(days=1)
        assert dt.date.fromisoformat(doc["published_date"]) <= cutoff, doc["doc_id"]
        assert _verdict(doc, cutoff).startswith("drop:date_after_cutoff:content"), doc["doc_id"]


def test_undated_docs(docs, resolution):
    undated = [doc for doc in docs if doc["published_date"] is None]
    assert len(undated) >= 5
    assert {_kind_of(doc) for doc in undated} == {"undated"}
    for doc in undated:
        assert _verdict(doc, resolution[_split_doc_id(doc["doc_id"])[0]]) == "drop:undated"


def test_committed_archive_is_what_the_generator_writes(docs):
    assert _load_module("make_archive").archive_docs() == docs
