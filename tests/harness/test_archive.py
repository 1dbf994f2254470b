"""The archive backend: BM25 over a tiny dated archive with the hard filter published_date <= χ."""

import asyncio
import json
import os
from datetime import date

import bm25s
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracleproto.errors import ConfigError, InputError
from oracleproto.harness.archive import build_index, load_index, query_tokens
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchSettings, make_backend

CHI = date(2025, 3, 1)
DOCS = [
    {"doc_id": "d1", "url": "https://a/1", "title": "Fed holds interest rates", "published_date": "2024-12-01", "content": "The Fed held interest rates."},
    {"doc_id": "d2", "url": "https://a/2", "title": "Fed cuts interest rates", "published_date": "2025-03-05", "content": "Interest rates cut: interest rates fall, rates rates rates."},
    {"doc_id": "d3", "url": "https://a/3", "title": "Interest rates outlook", "published_date": None, "content": "Interest rates, interest rates."},
    {"doc_id": "d4", "url": "https://a/4", "title": "Bank of England rates", "published_date": "2025-01-10", "content": "The Bank kept rates."},
    {"doc_id": "d5", "url": "https://a/5", "title": "Weather", "published_date": "2025-02-01", "content": "Sunny all week."},
    {"doc_id": "d7", "url": "https://a/7", "title": "Twin report", "published_date": "2025-02-02", "content": "gold prices climb"},
    {"doc_id": "d6", "url": "https://a/6", "title": "Twin report", "published_date": "2025-02-02", "content": "gold prices climb"},
]


def write_jsonl(path, docs):
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    return path


@pytest.fixture
def archive(tmp_path):
    return write_jsonl(tmp_path / "archive.jsonl", DOCS)


def backend(path, **settings):
    return make_backend("archive", SearchSettings(archive_path=str(path), **{"detector_mode": "off", **settings}), CallCache(None, "off"), None)


def search(b, query, end_date=CHI):
    return asyncio.run(b.search(query, end_date, CallContext("m", "q1", 1, 0, 0)))


def ids(outcome):
    return [h.url.rsplit("/", 1)[1] for h in outcome.hits]


def test_post_cutoff_documents_never_returned_even_when_they_rank_best(archive):
    b = backend(archive)
    assert ids(search(b, "interest rates")) == ["1", "4"]
    assert ids(search(b, "interest rates", date(2025, 3, 5)))[0] == "2"  # from χ on it is admissible, and best


def test_undated_and_zero_score_documents_are_not_results(archive):
    out = search(backend(archive), "interest rates")
    assert "3" not in ids(out) and "5" not in ids(out)


def test_masking_happens_before_top_r_so_results_are_not_starved(archive):
    assert ids(search(backend(archive, max_results=1), "interest rates")) == ["1"]


def test_ties_are_broken_by_doc_id_whatever_the_file_order(archive):
    assert ids(search(backend(archive), "gold prices")) == ["6", "7"]


def test_hits_carry_iso_date_rounded_score_and_truncated_content(tmp_path):
    path = write_jsonl(tmp_path / "long.jsonl", [{**DOCS[0], "content": "interest " * 2000}])
    (h,) = search(backend(path, raw_content_max_chars=100), "interest").hits
    assert h.published_date == "2024-12-01" and h.raw_content is None
    assert h.score == round(h.score, 4) and h.score > 0
    assert h.content.startswith("interest ") and h.content.endswith("[… truncated to 100 characters]")


def test_audit_and_payload_of_an_archive_search(archive):
    out = search(backend(archive, detector_mode="heuristic"), "interest rates")
    call = out.to_search_call()
    assert call["backend"] == "archive" and call["end_date"] == "2025-03-01" and call["n_results"] == 2
    assert call["published_dates"] == ["2024-12-01", "2025-01-10"]
    assert "end_date" not in out.to_llm_payload() and out.cost_usd == 0


def test_heuristic_layer_runs_on_archive_hits(tmp_path):
    docs = [{**DOCS[0], "content": "The vote is scheduled for April 2, 2025."}, DOCS[3]]
    out = search(backend(write_jsonl(tmp_path / "a.jsonl", docs), detector_mode="heuristic"), "rates")
    assert ids(out) == ["4"]
    assert sorted(out.audit["heuristic_verdicts"]) == ["drop:date_after_cutoff:content:April 2, 2025", "keep"]


def test_documents_the_date_mask_withheld_from_the_top_r_are_recorded(archive):
    out = search(backend(archive, max_results=3), "interest rates")
    masked = {m["url"]: m["verdict"] for m in out.audit["masked_results"]}
    # unmasked, the top 3 are d2 (after χ), d3 (undated) and d1: two of them withheld
    assert masked == {"https://a/2": "drop:published_after_cutoff:2025-03-05", "https://a/3": "drop:undated"}
    undated = next(m for m in out.audit["masked_results"] if m["url"] == "https://a/3")
    assert "published_date" not in undated and undated["content"] == "Interest rates, interest rates."
    assert search(backend(archive, max_results=3), "interest rates", date(2025, 3, 5)).audit["masked_results"][0]["url"] == "https://a/3"


def test_searches_are_deterministic(archive):
    b = backend(archive)
    assert search(b, "interest rates").to_search_call() == search(b, "interest rates").to_search_call()


def test_queries_with_no_indexed_word_return_nothing(archive):
    assert search(backend(archive), "the of and").hits == []
    assert search(backend(archive), "zeppelin").hits == []


def test_parquet_archive_with_date_column(tmp_path):
    table = pa.Table.from_pylist(
        [{**d, "published_date": date.fromisoformat(d["published_date"]) if d["published_date"] else None} for d in DOCS],
        schema=pa.schema([("doc_id", pa.string()), ("url", pa.string()), ("title", pa.string()), ("published_date", pa.date32()), ("content", pa.string())]),
    )
    pq.write_table(table, tmp_path / "archive.parquet")
    assert ids(search(backend(tmp_path / "archive.parquet"), "interest rates")) == ["1", "4"]


def test_index_is_built_once_per_file_and_rebuilt_when_it_changes(archive):
    first = load_index(archive)
    assert load_index(str(archive)) is first
    write_jsonl(archive, DOCS[:2])
    os.utime(archive, ns=(1, 1))
    assert load_index(archive) is not first


@pytest.mark.parametrize(
    "docs, message",
    [
        ([{k: v for k, v in DOCS[0].items() if k != "url"}], r"missing column\(s\) \['url'\]"),
        ([DOCS[0], DOCS[0]], "row 2: doc_id 'd1' repeats row 1"),
        ([DOCS[0], {**DOCS[1], "published_date": "last week"}], r"row 2 \(doc_id=d2\): published_date 'last week'"),
        ([{**DOCS[0], "doc_id": ""}], "row 1: doc_id must be a non-empty string"),
    ],
)
def test_bad_archives_name_the_row_and_field(docs, message):
    with pytest.raises(InputError, match=message):
        build_index(pa.Table.from_pylist(docs))


def test_archive_backend_needs_a_path(tmp_path):
    with pytest.raises(ConfigError, match="archive_path"):
        make_backend("archive", SearchSettings(detector_mode="off"), CallCache(None, "off"), None)
    with pytest.raises(Exception, match="missing.jsonl"):
        backend(tmp_path / "missing.jsonl")


# Fragments that exercise case folding (İ, ß, É), stopwords, one-letter words and digits.
_FRAGMENTS = [*"aAbZ09_ éÉß-'.,\n", "The", " and ", "Fed", "İ", "2026", "it's", "rates"]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join) | st.text(max_size=40))
def test_query_tokens_are_the_tokens_the_index_was_built_with(text):
    assert query_tokens(text) == bm25s.tokenize([text], stopwords="en", return_ids=False, show_progress=False)[0]
