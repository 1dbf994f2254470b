"""The tavily backend against the loopback Tavily stub: request shape, key pool, faults, replay."""

import asyncio
import json
import logging
from datetime import date

import pytest

from oracleproto.errors import ConfigError
from oracleproto.harness.keypool import KeyPool
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchSettings, make_backend
from oracleproto.harness.tavily import TavilyBackend
from tests.servers.tavily_server import Fault, TavilyStub, result

CHI = date(2025, 3, 1)
KEYS = ("tvly-fake-key-one", "tvly-fake-key-two")
OLD = "2025-01-15"


class Sleeps:
    """Injected sleep and clock: records the waits and moves the clock, never sleeps."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = 0.0

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def stub():
    with TavilyStub() as server:
        server.script("fed rates", [result("Fed holds rates", "https://news/a", "The Fed held rates.", OLD)])
        yield server


def backend(stub, *, keys=KEYS, cache=None, settings=None, sleeps=None, pool=None):
    return TavilyBackend(
        settings or SearchSettings(detector_mode="off"),
        cache or CallCache(None, "off"),
        None,
        environ={"TAVILY_BASE_URL": stub.url},
        pool=pool or KeyPool(keys),
        sleep=sleeps or Sleeps(),
    )


def search(b, query="fed rates", end_date=CHI, seq=0):
    async def go():
        try:
            return await b.search(query, end_date, CallContext("m", "q1", 1, 0, seq))
        finally:
            await b.aclose()

    return asyncio.run(go())


def test_every_request_carries_end_date_chi_and_table_12_settings(stub):
    b = backend(stub)

    async def go():
        for i, chi in enumerate((date(2024, 6, 30), date(2025, 3, 1), date(2026, 1, 9))):
            await b.search("fed rates", chi, CallContext("m", "q1", 1, 0, i))
        await b.aclose()

    asyncio.run(go())
    bodies = [r.body for r in stub.searches()]
    assert [body["end_date"] for body in bodies] == ["2024-06-30", "2025-03-01", "2026-01-09"]
    assert bodies[0] == {
        "query": "fed rates",
        "search_depth": "basic",
        "end_date": "2024-06-30",
        "include_raw_content": "markdown",
        "max_results": 5,
    }


def test_key_travels_only_as_bearer_header(stub):
    search(backend(stub))
    (request,) = stub.searches()
    assert request.bearer == KEYS[0]
    assert all(key not in request.raw.decode() for key in KEYS)


def test_hits_and_cost(stub):
    out = search(backend(stub))
    assert out.error is None
    assert [h.title for h in out.hits] == ["Fed holds rates"]
    assert out.cost_usd == pytest.approx(0.008)
    assert out.audit["faults"] == [] and out.audit["n_results_raw"] == 1


def test_raw_content_truncated_to_limit_with_marker(stub):
    stub.script("long", [result("L", "https://l", "c", OLD, raw_content="x" * 9000)])
    out = search(backend(stub), "long")
    raw = out.hits[0].raw_content
    assert raw.startswith("x" * 8000) and raw[8000:] == "\n[… truncated to 8000 characters]"


def test_quick_answer_is_off_by_default_and_sent_when_enabled(stub):
    stub.script("q", [result("A", "https://a", "c", OLD)], answer="a quick summary")
    assert search(backend(stub), "q").answer is None
    assert "include_answer" not in stub.searches()[0].body
    out = search(backend(stub, settings=SearchSettings(detector_mode="off", include_answer=True)), "q")
    assert stub.searches()[1].body["include_answer"] == "basic"
    assert out.answer == "a quick summary"


def test_quick_answer_cleared_when_a_result_is_dropped(stub):
    stub.script("q", [result("A", "https://a", "c", OLD), result("B", "https://b", "c", "2025-06-01")], answer="summary")
    settings = SearchSettings(detector_mode="heuristic", include_answer="advanced")
    out = search(backend(stub, settings=settings), "q")
    assert [h.title for h in out.hits] == ["A"]
    assert out.answer is None and out.audit["answer_cleared"] is True


def test_keys_rotate_least_used(stub):
    b = backend(stub)

    async def go():
        for i in range(4):
            await b.search("fed rates", CHI, CallContext("m", "q1", 1, 0, i))
        await b.aclose()

    asyncio.run(go())
    assert [r.bearer for r in stub.searches()] == [KEYS[0], KEYS[1], KEYS[0], KEYS[1]]


def test_429_with_retry_after_cools_the_key_and_swaps_without_waiting(stub):
    stub.fail_next(Fault(429, headers={"Retry-After": "7"}, key=KEYS[0]))
    sleeps = Sleeps()
    pool = KeyPool(KEYS)
    out = search(backend(stub, sleeps=sleeps, pool=pool))
    assert out.error is None and out.audit["faults"] == ["rate_limit"]
    assert [r.bearer for r in stub.searches()] == [KEYS[0], KEYS[1]]
    assert sleeps.waits == []
    assert pool.acquire().key == KEYS[1]  # key one still cooling


def test_single_key_waits_out_retry_after_then_succeeds(stub):
    stub.fail_next(Fault(429, headers={"Retry-After": "3"}))
    sleeps = Sleeps()
    out = search(backend(stub, keys=KEYS[:1], sleeps=sleeps, pool=KeyPool(KEYS[:1], clock=sleeps.clock)))
    assert out.error is None
    assert sleeps.waits == [3.0]
    assert len(stub.searches()) == 2


def test_persistent_429_on_one_key_gives_up_within_the_budget(stub):
    stub.fail_next(*[Fault(429)] * 10)
    sleeps = Sleeps()
    out = search(backend(stub, keys=KEYS[:1], sleeps=sleeps, pool=KeyPool(KEYS[:1], cooldown_s=60, clock=sleeps.clock)))
    assert out.error == "all_keys_exhausted" and out.audit["error_kind"] == "rate_limit"
    assert sleeps.waits == [60.0, 60.0, 60.0] and len(stub.searches()) == 4


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_blacklists_and_swaps_at_once(stub, status):
    stub.bad_keys[KEYS[0]] = status
    sleeps = Sleeps()
    b = backend(stub, sleeps=sleeps)

    async def go():
        outs = [await b.search("fed rates", CHI, CallContext("m", "q1", 1, 0, i)) for i in range(3)]
        await b.aclose()
        return outs

    outs = asyncio.run(go())
    assert all(o.error is None for o in outs)
    assert [r.bearer for r in stub.searches()] == [KEYS[0], KEYS[1], KEYS[1], KEYS[1]]
    assert outs[0].audit["faults"] == ["auth"] and sleeps.waits == []


def test_quota_status_432_is_a_rate_limit_not_a_blacklist(stub):
    stub.fail_next(Fault(432, body={"detail": {"error": "This request exceeds your plan's set usage limit."}}, key=KEYS[0]))
    pool = KeyPool(KEYS, cooldown_s=60)
    out = search(backend(stub, pool=pool))
    assert out.error is None and out.audit["faults"] == ["rate_limit"]


def test_5xx_is_retried_with_every_backoff_entry_then_reported(stub):
    stub.fail_next(*[Fault(503)] * 4)
    sleeps = Sleeps()
    out = search(backend(stub, sleeps=sleeps))
    assert out.error == "tavily_error"
    assert sleeps.waits == [2, 5, 15]  # four attempts: the 15 s entry is used
    assert out.audit["error_kind"] == "server_5xx" and out.audit["faults"] == ["server_5xx"] * 4
    assert out.to_llm_payload() == {
        "error": "tavily_error",
        "message": "search failed (server_5xx: HTTP 503)",
        "results": [],
        "answer": None,
    }


def test_5xx_then_success_keeps_the_key(stub):
    stub.fail_next(Fault(500), Fault(502))
    sleeps = Sleeps()
    out = search(backend(stub, keys=KEYS[:1], sleeps=sleeps))
    assert out.error is None and sleeps.waits == [2, 5]
    assert out.audit["faults"] == ["server_5xx", "server_5xx"]


def test_malformed_200_is_a_network_fault_and_retried(stub):
    stub.fail_next(Fault(200, body=b'{"results": [ {"title"'), Fault(200, body=b"[1, 2]"))
    out = search(backend(stub))
    assert out.error is None and out.audit["faults"] == ["network", "network"]


def test_timeout_is_retried_like_a_network_fault(stub):
    stub.fail_next(Fault(200, body={"results": []}, delay_s=0.6))
    settings = SearchSettings(detector_mode="off", timeout_s=0.1)
    sleeps = Sleeps()
    out = search(backend(stub, settings=settings, sleeps=sleeps))
    assert out.error is None and out.audit["faults"] == ["timeout"] and sleeps.waits == [2]


def test_bad_request_is_not_retried(stub):
    stub.fail_next(Fault(400, body={"detail": {"error": "Query is too long."}}))
    sleeps = Sleeps()
    out = search(backend(stub, sleeps=sleeps))
    assert out.error == "tavily_error" and out.audit["error_kind"] == "bad_request"
    assert sleeps.waits == [] and len(stub.searches()) == 1


def test_all_keys_rejected_gives_all_keys_exhausted(stub):
    stub.bad_keys.update({KEYS[0]: 401, KEYS[1]: 401})
    out = search(backend(stub))
    assert out.error == "all_keys_exhausted" and out.audit["error_kind"] == "auth"
    assert out.to_llm_payload()["error"] == "all_keys_exhausted"


def test_connection_refused_is_network_and_bounded(stub):
    b = backend(stub)
    stub.stop()
    sleeps = Sleeps()
    b._sleep = sleeps
    out = search(b)
    assert out.error == "tavily_error" and out.audit["faults"] == ["network"] * 4 and sleeps.waits == [2, 5, 15]


def test_fake_keys_found_nowhere(stub, tmp_path, caplog):
    """Keys must not reach the cache, the outcome, a message or a log, even through faults."""
    stub.fail_next(Fault(429, key=KEYS[0]), Fault(503), Fault(200, body=b"garbage"))
    stub.bad_keys[KEYS[1]] = 401
    cache_path = tmp_path / "calls.sqlite"
    keys = ("tvly-fake-key-three", *KEYS)
    caplog.set_level(logging.DEBUG)
    out = search(backend(stub, keys=keys, cache=CallCache(cache_path, "record")))
    texts = [
        json.dumps(out.to_search_call(), ensure_ascii=False),
        json.dumps(out.to_llm_payload(), ensure_ascii=False),
        repr(out),
        caplog.text,
        cache_path.read_bytes().decode("latin-1"),
    ]
    for key in keys:
        assert all(key not in text for text in texts), key
    assert out.audit["faults"]  # the faults did happen


def test_missing_or_placeholder_key_is_a_startup_error(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        make_backend("tavily", SearchSettings(detector_mode="off"), CallCache(None, "off"), None)
    monkeypatch.setenv("TAVILY_API_KEY", "REPLACE_ME")
    with pytest.raises(ConfigError, match="TAVILY_API_KEY.*placeholder"):
        make_backend("tavily", SearchSettings(detector_mode="off"), CallCache(None, "off"), None)


def test_make_backend_reads_the_environment(stub, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-env-key-1,tvly-env-key-2")
    monkeypatch.setenv("TAVILY_BASE_URL", stub.url)
    b = make_backend("tavily", SearchSettings(detector_mode="off"), CallCache(None, "off"), None)
    assert search(b).error is None
    assert stub.searches()[0].bearer == "tvly-env-key-1"


def test_record_then_replay_with_network_off_and_no_keys(stub, tmp_path, monkeypatch):
    stub.script("q", [result("A", "https://a", "ok", OLD), result("B", "https://b", "in 2026 maybe", OLD)])
    stub.fail_next(Fault(503))
    settings = SearchSettings(detector_mode="heuristic")
    path = tmp_path / "calls.sqlite"
    recording = CallCache(path, "record")
    recorded = [search(backend(stub, cache=recording, settings=settings), "q"), search(backend(stub, cache=recording), "zzz", seq=1)]
    recording.close()
    dead_url = stub.url
    stub.stop()  # network off: nothing listens there any more
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setenv("TAVILY_BASE_URL", dead_url)
    replaying = CallCache(path, "replay")
    replayed = [
        search(make_backend("tavily", settings, replaying, None), "q"),
        search(make_backend("tavily", SearchSettings(detector_mode="off"), replaying, None), "zzz", seq=1),
    ]
    assert [o.to_search_call() for o in replayed] == [o.to_search_call() for o in recorded]
    assert [o.to_llm_payload() for o in replayed] == [o.to_llm_payload() for o in recorded]
    assert recorded[0].audit["faults"] == ["server_5xx"]


def test_a_failed_search_replays_as_the_same_failure(stub, tmp_path):
    stub.fail_next(*[Fault(500)] * 4)
    path = tmp_path / "calls.sqlite"
    recorded = search(backend(stub, cache=CallCache(path, "record")))
    replayed = search(backend(stub, cache=CallCache(path, "replay")))
    assert recorded.error == "tavily_error"
    assert replayed.to_search_call() == recorded.to_search_call()
    assert len(stub.searches()) == 4
