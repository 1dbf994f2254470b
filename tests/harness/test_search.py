import asyncio
import json
from datetime import date, datetime

import pytest

from oracleproto.errors import ConfigError
from oracleproto.harness import search
from oracleproto.harness.replay import CallCache, CallContext, ReplayMissError
from oracleproto.harness.search import (
    SearchHit,
    SearchOutcome,
    SearchSettings,
    backend_names,
    check_end_date,
    make_backend,
    record_or_replay,
    register_backend,
    truncate,
)

CONTEXT = CallContext(model="m", q_id="q1", trial=1, step=2, seq=0)


def outcome(**overrides) -> SearchOutcome:
    values = dict(
        query="rates",
        end_date=date(2025, 3, 1),
        hits=[SearchHit("T", "https://a", "body", published_date="2025-02-01"), SearchHit("U", "https://b", "c", score=0.5)],
        answer=None,
        error=None,
        audit={"n_results_raw": 3, "n_results_kept": 2, "detector_verdicts": ["keep", "drop", "keep"]},
        cost_usd=0.008,
    )
    return SearchOutcome(**{**values, **overrides})


def test_llm_payload_omits_null_fields_audit_and_end_date():
    payload = outcome().to_llm_payload()
    assert payload == {
        "query": "rates",
        "results": [
            {"title": "T", "url": "https://a", "content": "body", "published_date": "2025-02-01"},
            {"title": "U", "url": "https://b", "content": "c", "score": 0.5},
        ],
    }
    text = json.dumps(payload)
    assert "2025-03-01" not in text and "detector" not in text


def test_llm_payload_carries_the_answer_when_present():
    assert outcome(answer="a summary").to_llm_payload()["answer"] == "a summary"


def test_failure_payload_shape():
    failed = outcome(hits=[], error="tavily_error", message="search failed (server_5xx: HTTP 503)")
    assert failed.to_llm_payload() == {
        "error": "tavily_error",
        "message": "search failed (server_5xx: HTTP 503)",
        "results": [],
        "answer": None,
    }


def test_search_call_entry_has_iso_end_date_and_audit():
    entry = outcome().to_search_call()
    assert entry["end_date"] == "2025-03-01"
    assert entry["n_results"] == 2 and entry["n_results_raw"] == 3
    assert entry["detector_verdicts"] == ["keep", "drop", "keep"]
    json.dumps(entry)  # JSON-able


def test_settings_defaults_are_table_12():
    s = SearchSettings(detector_mode="llm")
    assert (s.max_results, s.search_depth, s.include_raw_content, s.include_answer, s.raw_content_max_chars) == (
        5,
        "basic",
        "markdown",
        False,
        8000,
    )


@pytest.mark.parametrize(
    "values, field",
    [
        ({"max_results": 0}, "max_results"),
        ({"max_results": 21}, "max_results"),
        ({"search_depth": "deep"}, "search_depth"),
        ({"include_raw_content": "html"}, "include_raw_content"),
        ({"include_answer": "yes"}, "include_answer"),
        ({"raw_content_max_chars": -1}, "raw_content_max_chars"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"detector_mode": "strict"}, "detector_mode"),
        ({"undated": "maybe"}, "undated"),
        ({"max_result": 5}, "max_result: unknown key \\(did you mean max_results\\?\\)"),
    ],
)
def test_bad_settings_name_the_field(values, field):
    with pytest.raises(ConfigError, match=field):
        SearchSettings.checked(**{"detector_mode": "off", **values})


def test_true_means_the_default_format():
    s = SearchSettings(detector_mode="off", include_raw_content=True, include_answer=True)
    assert (s.include_raw_content, s.include_answer) == ("markdown", "basic")


def test_truncate_marks_the_cut():
    assert truncate("abcdef", 0) == "abcdef"
    assert truncate("abc", 3) == "abc"
    cut = truncate("abcdef", 3)
    assert cut.startswith("abc\n") and "truncated to 3 characters" in cut
    assert truncate(None, 3) is None


def test_end_date_must_be_a_date_not_a_datetime():
    assert check_end_date(date(2025, 1, 1)) == date(2025, 1, 1)
    with pytest.raises(TypeError):
        check_end_date(datetime(2025, 1, 1, 12))
    with pytest.raises(TypeError):
        check_end_date("2025-01-01")


def test_registry_lists_builtins_and_rejects_unknown_names():
    assert {"tavily", "archive"} <= set(backend_names())
    with pytest.raises(ValueError, match="unknown search backend 'bing'.*archive"):
        make_backend("bing", SearchSettings(detector_mode="off"), CallCache(None, "off"), None)


def test_llm_mode_without_a_detector_is_a_startup_error():
    with pytest.raises(ConfigError, match="detector_mode 'llm'"):
        make_backend("archive", SearchSettings(archive_path="x.jsonl", detector_mode="llm"), CallCache(None, "off"), None)


def test_a_name_cannot_be_registered_twice(monkeypatch):
    monkeypatch.setattr(search, "_FACTORIES", dict(search._FACTORIES))
    register_backend("test-dummy")(lambda s, c, d: None)
    with pytest.raises(ValueError, match="already registered"):
        register_backend("test-dummy")(lambda s, c, d: None)


class Sender:
    def __init__(self, *responses):
        self.responses = list(responses)
        self.calls = 0

    async def __call__(self):
        self.calls += 1
        return self.responses.pop(0)


def failed(record):
    return ("network", record["error"]) if record.get("error") is not None else None


def test_record_serves_success_but_retries_a_recorded_failure(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite", "record")
    request = {"query": "q"}
    send = Sender({"error": "tavily_error"}, {"error": None, "results": [1]}, {"error": None, "results": [2]})

    async def go():
        first = await record_or_replay(cache, "search", request, CONTEXT, send, failed)
        second = await record_or_replay(cache, "search", request, CONTEXT, send, failed)
        third = await record_or_replay(cache, "search", request, CONTEXT, send, failed)
        return first, second, third

    first, second, third = asyncio.run(go())
    assert first["error"] == "tavily_error"
    assert second == third == {"error": None, "results": [1]}
    assert send.calls == 2


def test_replay_serves_recorded_failures_and_misses_loudly(tmp_path):
    path = tmp_path / "calls.sqlite"
    record = CallCache(path, "record")
    asyncio.run(record_or_replay(record, "search", {"query": "q"}, CONTEXT, Sender({"error": "tavily_error"}), failed))
    record.close()
    replay = CallCache(path, "replay")
    never = Sender()
    assert asyncio.run(record_or_replay(replay, "search", {"query": "q"}, CONTEXT, never, failed)) == {"error": "tavily_error"}
    with pytest.raises(ReplayMissError):
        asyncio.run(record_or_replay(replay, "search", {"query": "other"}, CONTEXT, never, failed))
    assert never.calls == 0
