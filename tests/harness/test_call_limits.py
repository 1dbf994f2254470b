"""Every outbound call ends at its deadline or its size cap, whatever the server does.

Hostile servers are raw sockets here (no HTTP library on the server side could send what
they send): headers trickled a byte a second, endless or oversized bodies, conflicting
Content-Length, a bogus status line, a header that never ends. Each must end within the
deadline + 2 s with its classified kind, for the model call and for the leak detector's
call; a stalling or trickling Tavily stand-in ends at the search deadline.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable, Iterator
from datetime import date

import pytest

from oracleproto.config import Sampling
from oracleproto.harness.bounded_http import ChannelSlots
from oracleproto.harness.detector import DetectorSettings, LeakDetector
from oracleproto.harness.faults import LLM_RETRY, CallError, RetryPolicy
from oracleproto.harness.keypool import KeyPool
from oracleproto.harness.llm import ChatClient
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchHit, SearchSettings
from oracleproto.harness.settings import Endpoint, ModelSpec
from oracleproto.harness.tavily import TavilyBackend
from tests.servers.openai_server import content_reply
from tests.servers.raw_server import RawServer, response_bytes
from tests.servers.tavily_server import Fault as TavilyFault
from tests.servers.tavily_server import TavilyStub

DEADLINE_S = 1.0
SLACK_S = 2.0  # the brief's bound: a call must be over within deadline + 2 s
CAP = 64 * 1024
KEY = "sk-limits-KEY-0123456789abcdef"
NO_RETRY = RetryPolicy(backoff={}, max_retries=0)  # one attempt: the timing is the call's own
SPEC = ModelSpec(label="m", slug="vendor/chat-model")
MESSAGES = [{"role": "user", "content": "Will it rain? \\boxed{Yes} or \\boxed{No}"}]
CONTEXT = CallContext("m", "q1", 1, 1)


# ---------------------------------------------------------------------------------------
# What the hostile servers send


def header_bytes_forever(head: bytes) -> Iterator[int]:
    """The bytes of ``head``, then the byte "a" for ever (a header value that never ends)."""
    yield from head
    while True:
        yield ord("a")


def trickled_headers(conn: socket.socket) -> None:
    for byte in header_bytes_forever(b"HTTP/1.1 200 OK\r\nX-Slow: "):
        conn.sendall(bytes([byte]))
        time.sleep(1.0)


def endless_chunked_body(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"
    while True:
        conn.sendall(chunk)


def endless_slow_chunked_body(conn: socket.socket) -> None:
    """Ten bytes every 50 ms: never near the cap, never idle long enough for a read timeout."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    while True:
        conn.sendall(b"a\r\n          \r\n")
        time.sleep(0.05)


def oversized_content_length(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
    block = b" " * 65536
    while True:
        conn.sendall(block)


def oversized_chunked_body(conn: socket.socket) -> None:
    """A finite, well-formed chunked body of twice the cap."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(2 * CAP // 0x4000):
        conn.sendall(b"4000\r\n" + b" " * 0x4000 + b"\r\n")
    conn.sendall(b"0\r\n\r\n")


def conflicting_content_length(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 20\r\n\r\n{}" + b" " * 18)


def bogus_status_line(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 2000 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")


def endless_header(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Endless: ")
    block = b"a" * 65536
    while True:
        conn.sendall(block)


HOSTILE = [
    pytest.param(trickled_headers, "timeout", id="headers-one-byte-per-second"),
    pytest.param(endless_chunked_body, "response_too_large", id="endless-chunked-body"),
    pytest.param(endless_slow_chunked_body, "timeout", id="endless-slow-chunked-body"),
    pytest.param(oversized_content_length, "response_too_large", id="oversized-content-length"),
    pytest.param(oversized_chunked_body, "response_too_large", id="oversized-chunked"),
    # malformed HTTP is refused by h11 (RemoteProtocolError): a network fault
    pytest.param(conflicting_content_length, "network", id="conflicting-content-length"),
    pytest.param(bogus_status_line, "network", id="status-2000"),
    pytest.param(endless_header, "network", id="endless-header"),
]


def assert_ended_in_time(seconds: float, kind: str) -> None:
    assert seconds < DEADLINE_S + SLACK_S, f"{kind} took {seconds:.2f} s"
    if kind == "timeout":
        assert seconds >= DEADLINE_S * 0.9, f"ended before the deadline: {seconds:.2f} s"


def timed(coro_factory: Callable[[], object]) -> tuple[object, float]:
    started = time.perf_counter()
    result = asyncio.run(coro_factory())
    return result, time.perf_counter() - started


# ---------------------------------------------------------------------------------------
# The model call


def chat_client(url: str, retry: RetryPolicy = NO_RETRY, waits: list[float] | None = None) -> ChatClient:
    async def sleep(seconds: float) -> None:
        if waits is not None:
            waits.append(seconds)

    sampling = Sampling(timeout_s=DEADLINE_S, max_response_bytes=CAP)
    return ChatClient(
        Endpoint(url, KEY), sampling, CallCache(None, "off"), slots=ChannelSlots(2), retry_policy=retry, sleep=sleep
    )


async def model_call(client: ChatClient) -> CallError | object:
    try:
        return await client.complete(SPEC, MESSAGES, [], CONTEXT)
    except CallError as exc:
        return exc
    finally:
        await client.aclose()


@pytest.mark.parametrize(("script", "kind"), HOSTILE)
def test_model_call_ends_at_the_deadline_or_the_cap(script, kind):
    with RawServer(script) as server:
        error, seconds = timed(lambda: model_call(chat_client(server.url)))
    assert isinstance(error, CallError) and error.kind == kind, error
    assert KEY not in error.message
    assert_ended_in_time(seconds, kind)


def test_an_oversized_body_is_not_retried_and_a_timeout_is():
    waits: list[float] = []
    with RawServer(oversized_content_length) as server:
        error = asyncio.run(model_call(chat_client(server.url, retry=LLM_RETRY, waits=waits)))
    assert error.kind == "response_too_large" and server.requests == 1 and waits == []
    one_retry = RetryPolicy(backoff=LLM_RETRY.backoff, max_retries=1)  # LLM_RETRY's waits, one deadline less to sit out
    with RawServer(endless_slow_chunked_body) as server:
        error = asyncio.run(model_call(chat_client(server.url, retry=one_retry, waits=waits)))
    assert error.kind == "timeout" and server.requests == 2 and waits == [2]


def test_a_body_exactly_at_the_cap_is_read():
    reply = json.dumps(content_reply("\\boxed{Yes}", {"messages": MESSAGES})).encode()
    padded = reply + b" " * (CAP - len(reply))  # JSON allows trailing whitespace

    def exactly_cap(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, padded))

    with RawServer(exactly_cap) as server:
        result = asyncio.run(model_call(chat_client(server.url)))
    assert result.message["content"] == "\\boxed{Yes}"


def test_an_idle_connection_the_server_closed_is_replaced_without_a_retry():
    """The server closes every connection after its reply (a keep-alive timeout): the pool
    must notice before the next call instead of failing it."""
    waits: list[float] = []

    def answer(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, json.dumps(content_reply("\\boxed{No}", {"messages": MESSAGES})).encode()))

    async def two_calls(client: ChatClient):
        try:
            first = await client.complete(SPEC, MESSAGES, [], CONTEXT)
            # the server has closed the connection while it idles in the pool
            assert await asyncio.to_thread(server.closed_connections.acquire, timeout=10)
            second = await client.complete(SPEC, MESSAGES, [], CallContext("m", "q2", 1, 1))
            return first, second
        finally:
            await client.aclose()

    with RawServer(answer, close_after_reply=True) as server:
        first, second = asyncio.run(two_calls(chat_client(server.url, retry=LLM_RETRY, waits=waits)))
    assert first.message == second.message and server.requests == 2 and waits == []


# ---------------------------------------------------------------------------------------
# The leak detector's call


def detector(url: str) -> LeakDetector:
    settings = DetectorSettings(model="det/model", base_url=url, api_key=KEY, timeout_s=DEADLINE_S, max_response_bytes=CAP)
    return LeakDetector(settings, CallCache(None, "off"), retry=NO_RETRY)


async def judge_one(leak_detector: LeakDetector):
    hit = SearchHit(title="Fed holds rates", url="https://n/a", content="The Fed held rates.", published_date="2025-02-10")
    try:
        return await leak_detector.judge(hit, date(2025, 3, 1), CallContext("m", "q1", 1, 0, 0))
    finally:
        await leak_detector.aclose()


@pytest.mark.parametrize(("script", "kind"), HOSTILE)
def test_detector_call_ends_at_the_deadline_or_the_cap(script, kind):
    with RawServer(script) as server:
        verdict, seconds = timed(lambda: judge_one(detector(server.url)))
    assert verdict.verdict == f"failed:{kind}"  # fail-closed: the result is dropped
    assert_ended_in_time(seconds, kind)


# ---------------------------------------------------------------------------------------
# Search


def tavily(url: str) -> TavilyBackend:
    settings = SearchSettings(detector_mode="off", timeout_s=DEADLINE_S)
    return TavilyBackend(
        settings, CallCache(None, "off"), None, environ={"TAVILY_BASE_URL": url}, pool=KeyPool(("tvly-limits-key-1",)), retry=NO_RETRY
    )


async def one_search(backend: TavilyBackend):
    try:
        return await backend.search("fed rates", date(2025, 3, 1), CallContext("m", "q1", 1, 0, 0))
    finally:
        await backend.aclose()


def test_search_against_a_stalling_tavily_ends_at_its_deadline():
    with TavilyStub() as stub:
        stub.fail_next(TavilyFault(200, body={"results": []}, delay_s=DEADLINE_S + SLACK_S + 1))
        outcome, seconds = timed(lambda: one_search(tavily(stub.url)))
    assert outcome.error == "tavily_error" and outcome.audit["error_kind"] == "timeout"
    assert_ended_in_time(seconds, "timeout")


def test_search_against_a_trickling_tavily_ends_at_its_deadline():
    """A byte every 50 ms never trips httpx's per-read timeout: only the deadline ends it."""
    with RawServer(endless_slow_chunked_body) as server:
        outcome, seconds = timed(lambda: one_search(tavily(server.url)))
    assert outcome.error == "tavily_error" and outcome.audit["error_kind"] == "timeout"
    assert_ended_in_time(seconds, "timeout")


def capped_tavily(url: str, retry: RetryPolicy = NO_RETRY) -> TavilyBackend:
    settings = SearchSettings(detector_mode="off", timeout_s=DEADLINE_S, max_response_bytes=CAP)
    return TavilyBackend(
        settings, CallCache(None, "off"), None, environ={"TAVILY_BASE_URL": url}, pool=KeyPool(("tvly-limits-key-1",)), retry=retry
    )


@pytest.mark.parametrize(
    "script", [endless_chunked_body, oversized_chunked_body, oversized_content_length], ids=["endless", "oversized", "content-length"]
)
def test_search_body_ends_at_the_cap_with_bounded_memory_and_no_retry(script):
    """Read while it streams in: the search stops at the cap (not at the deadline), holding
    about the cap in memory, and is not retried (the same request gets the same body)."""
    import tracemalloc

    from oracleproto.harness.faults import SEARCH_RETRY

    with RawServer(script) as server:
        tracemalloc.start()
        try:
            outcome, seconds = timed(lambda: one_search(capped_tavily(server.url, retry=SEARCH_RETRY)))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        requests = server.requests
    assert outcome.error == "tavily_error" and outcome.audit["error_kind"] == "response_too_large"
    assert outcome.audit["faults"] == ["response_too_large"] and requests == 1
    assert seconds < DEADLINE_S / 2, f"{seconds:.2f} s: the cap, not the deadline, ended it"
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes for a {CAP}-byte cap"


def test_a_compressed_search_reply_is_refused_before_it_can_expand():
    """Asked for identity encoding, a gzip reply (100 KiB that inflate to 100 MiB) is a search
    error at once: never decompressed, never retried, nothing near its inflated size held."""
    import gzip
    import tracemalloc

    bomb = gzip.compress(b"\0" * (100 << 20), compresslevel=9)

    def gzip_reply(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, bomb, headers=[("Content-Encoding", "gzip")]))

    with RawServer(gzip_reply) as server:
        tracemalloc.start()
        try:
            outcome = asyncio.run(one_search(capped_tavily(server.url)))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        head, _ = server.received[0]
    assert b"accept-encoding: identity" in head.lower()
    assert outcome.error == "tavily_error" and outcome.audit["error_kind"] == "unknown", outcome.audit
    assert outcome.audit["faults"] == ["unknown"] and server.requests == 1
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes"


def test_search_body_exactly_at_the_cap_is_read():
    body = json.dumps({"query": "fed rates", "results": [{"title": "t", "url": "https://u", "content": "c"}]}).encode()
    padded = body + b" " * (CAP - len(body))

    def exactly_cap(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, padded))

    with RawServer(exactly_cap) as server:
        outcome = asyncio.run(one_search(capped_tavily(server.url)))
    assert outcome.error is None and [hit.title for hit in outcome.hits] == ["t"]


def test_an_oversized_search_is_a_search_error_and_the_run_goes_on(tmp_path):
    """Every search answers past the cap: each is a counted search error (not a transport
    failure: the channel answered, so it never stops the run), every trial completes."""
    import datetime as dt

    from oracleproto.harness.evaluate import evaluate
    from oracleproto.harness.questions import EvalJob, QuestionSet
    from oracleproto.harness.settings import EvalSettings
    from oracleproto.io import write_parquet
    from oracleproto.schema import QUESTION_SCHEMA
    from tests.harness.test_evaluate_run import make_questions
    from tests.servers.openai_server import OpenAIServer, SearchThenAnswer

    path = tmp_path / "questions.parquet"
    write_parquet(make_questions(6), path, QUESTION_SCHEMA, sort_by=("id",))
    job = EvalJob(ModelSpec(label="m", slug="m", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    settings = EvalSettings(search_backend="tavily", detector="off", max_consecutive_failures=1)
    with OpenAIServer(SearchThenAnswer(searches=2)) as model, RawServer(endless_chunked_body) as search:
        summary = evaluate([job], settings, tmp_path / "run", env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": KEY},
                           search_factory=lambda cache, s, env: capped_tavily(search.url))  # fmt: skip
    assert summary.rows == 18 and summary.errors == {} and summary.search_errors == 36
