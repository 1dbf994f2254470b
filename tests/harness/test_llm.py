import asyncio
import json
import threading
import time

import pytest

from oracleproto.config import Sampling
from oracleproto.harness.faults import AuthError, CallError, RetryPolicy
from oracleproto.harness.llm import (
    BrowsingBarrierError,
    ChatClient,
    assert_no_browsing,
    build_chat_request,
    canonical_assistant_message,
    check_response_body,
    make_transport,
)
from oracleproto.harness.react import WEB_SEARCH_TOOL
from oracleproto.harness.replay import CallCache, CallContext, ReplayMissError
from oracleproto.harness.settings import Endpoint, ModelSpec, SettingsError
from tests.servers.openai_server import (
    Fault,
    OpenAIServer,
    SearchThenAnswer,
    content_reply,
    status_fault,
)

KEY = "sk-test-KEY-0123456789abcdef"
SPEC = ModelSpec(label="m", slug="vendor/chat-model")
MESSAGES = [{"role": "user", "content": "Will it rain? \\boxed{Yes} or \\boxed{No}"}]
CTX = CallContext("m", "q1", 1, 1)


def run(coro):
    return asyncio.run(coro)


async def complete(server, cache=None, spec=SPEC, tools=(WEB_SEARCH_TOOL,), key=KEY, waits=None, sampling=Sampling(), retry=None):
    async def sleep(seconds):
        if waits is not None:
            waits.append(seconds)

    cache = cache or CallCache(None, "off")
    kwargs = {"retry_policy": retry} if retry else {}
    client = ChatClient(
        Endpoint(server.base_url, key), sampling, cache, semaphore=asyncio.Semaphore(2), sleep=sleep, **kwargs
    )
    try:
        return await client.complete(spec, MESSAGES, list(tools), CTX)
    finally:
        cache.flush()
        await client.aclose()


# --- request shape ------------------------------------------------------------------------


def test_request_body_and_key_in_header_only():
    with OpenAIServer(SearchThenAnswer(searches=1)) as server:
        result = run(complete(server))
    (request,) = server.requests
    assert request.path == "/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in request.raw.decode()
    body = request.body
    assert body == {
        "model": "vendor/chat-model",
        "messages": MESSAGES,
        "tools": [WEB_SEARCH_TOOL],
        "max_tokens": 12000,
        "temperature": 0.7,
        "top_p": 1.0,
    }
    call = result.tool_calls[0]
    assert call["type"] == "function" and call["function"]["name"] == "web_search"
    assert isinstance(call["function"]["arguments"], str)
    assert result.finish_reason == "tool_calls"
    assert result.response_id.startswith("chatcmpl-") and result.system_fingerprint == "fp_loopback"
    assert result.reasoning_tokens == 3 and result.completion_tokens == 12 and result.prompt_tokens > 0


def test_no_tools_key_when_no_tools_are_offered():
    body = build_chat_request(SPEC, Sampling(), MESSAGES, [])
    assert "tools" not in body


@pytest.mark.parametrize("slug", ["openai/o3-mini", "deepseek/deepseek-r1", "qwen/qwq-32b", "openai/o4-mini"])
def test_reasoning_slugs_skip_sampling_fields(slug):
    body = build_chat_request(ModelSpec(label=slug, slug=slug), Sampling(), MESSAGES, [])
    assert "temperature" not in body and "top_p" not in body


def test_per_model_token_field_and_omitted_sampling():
    spec = ModelSpec(label="g", slug="openai/gpt-5", max_tokens_param="max_completion_tokens", omit_sampling=("top_p",))
    body = build_chat_request(spec, Sampling(max_tokens=99), MESSAGES, [])
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body
    assert "top_p" not in body and body["temperature"] == 0.7


def test_online_slugs_are_refused_at_startup_and_send_time():
    with pytest.raises(SettingsError, match=":online"):
        ModelSpec(label="x", slug="openai/gpt-4o:online")
    with pytest.raises(BrowsingBarrierError, match=":online"):
        assert_no_browsing({"model": "x:online", "messages": []})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "m", "tools": [WEB_SEARCH_TOOL, WEB_SEARCH_TOOL]}, "at most one tool"),
        ({"model": "m", "tools": [{"type": "function", "function": {"name": "browse"}}]}, "only tool allowed"),
        ({"model": "m", "plugins": [{"id": "web"}]}, "plugins"),
        ({"model": "m", "web_search_options": {}}, "web_search_options"),
    ],
)
def test_browsing_barrier(body, message):
    with pytest.raises(BrowsingBarrierError, match=message):
        assert_no_browsing(body)


# --- response handling -------------------------------------------------------------------


def test_canonical_assistant_message_normalises_tool_calls():
    raw = {
        "role": "assistant",
        "content": None,
        "reasoning": "hidden chain",
        "tool_calls": [{"function": {"name": "web_search", "arguments": {"query": "x"}}}],
    }
    assert canonical_assistant_message(raw, 3) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_3_0", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "x"}'}}],
    }


def test_content_parts_are_joined_as_text():
    raw = {"role": "assistant", "content": [{"type": "text", "text": "I think "}, {"type": "image_url"}, {"type": "text", "text": "\\boxed{A}"}]}
    assert canonical_assistant_message(raw, 1) == {"role": "assistant", "content": "I think \\boxed{A}"}


def test_in_band_error_is_classified():
    with pytest.raises(CallError) as info:
        check_response_body({"error": {"code": 429, "message": "slow down"}})
    assert info.value.kind == "rate_limit"


# --- retries and classification over the wire --------------------------------------------


def faults_then_ok(*faults):
    queue = list(faults)

    def plan(body, seen):
        return queue.pop(0) if queue else None

    return plan


def test_retries_transient_failures_with_table_20_waits():
    waits = []
    plan = faults_then_ok(status_fault(503), status_fault(429, retry_after="3"), Fault("malformed"))
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=plan) as server:
        result = run(complete(server, waits=waits))
    assert "\\boxed{Yes}" in result.message["content"]
    # 5xx -> 5, 429 with Retry-After -> 3, malformed JSON (network) -> 15
    assert waits == [5, 3.0, 15]
    assert len(server.requests) == 4


def test_dropped_fresh_connection_is_a_network_retry():
    waits = []
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=faults_then_ok(Fault("drop"))) as server:
        result = run(complete(server, waits=waits))
    assert waits == [2] and result.message["content"] and len(server.requests) == 2


def test_reused_connection_closed_by_the_server_is_retried_transparently():
    async def two_calls(server):
        client = ChatClient(Endpoint(server.base_url, KEY), Sampling(), CallCache(None, "off"), semaphore=asyncio.Semaphore(1))
        try:
            first = await client.complete(SPEC, MESSAGES, [], CTX)
            second = await client.complete(SPEC, MESSAGES, [], CallContext("m", "q2", 1, 1))
            return first, second
        finally:
            await client.aclose()

    plan = lambda body, seen: Fault("drop") if seen == 1 else None  # noqa: E731 (the same body, second time)
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=plan) as server:
        first, second = run(two_calls(server))
    assert first.message == second.message and len(server.requests) == 3


def test_lean_transport_reads_chunked_and_close_delimited_bodies():
    from oracleproto.harness.llm import header_value, parse_http_response, split_headers

    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=1\r\npedia\r\n0\r\n\r\n"
    status, head, body, keep_alive = parse_http_response(chunked, False, "POST")
    assert (status, body, keep_alive) == (200, b"Wikipedia", True)
    assert split_headers(head) == [(b"Transfer-Encoding", b"chunked")]
    assert parse_http_response(chunked[:-2], False, "POST") is None
    closing = b"HTTP/1.0 200 OK\r\nX: y\r\n\r\nbody"
    assert parse_http_response(closing, False, "POST") is None
    assert parse_http_response(closing, True, "POST") == (200, b"HTTP/1.0 200 OK\r\nX: y", b"body", False)
    told_to_close = b"HTTP/1.1 429 Too Many\r\nconnection:  Close\r\nRetry-After: 7\r\ncontent-length: 2\r\n\r\n{}"
    status, head, body, keep_alive = parse_http_response(told_to_close, False, "POST")
    assert (status, body, keep_alive) == (429, b"{}", False)
    assert header_value(head, b"retry-after") == "7"
    with pytest.raises(ValueError, match="of 10 body bytes"):
        parse_http_response(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", True, "POST")


def test_timeout_is_a_network_error():
    waits = []
    plan = faults_then_ok(Fault("stall", stall_s=0.6))
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=plan) as server:
        result = run(complete(server, waits=waits, sampling=Sampling(timeout_s=0.2)))
    assert waits == [2] and result.message["content"]


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (status_fault(400, '{"error": {"message": "blocked by content_filter"}}'), "content_policy"),
        (status_fault(400, '{"error": {"message": "unknown parameter"}}'), "bad_request"),
        (status_fault(404), "unknown"),
    ],
)
def test_non_retryable_kinds_fail_at_once(fault, kind):
    with OpenAIServer(fault_plan=lambda body, seen: fault) as server:
        with pytest.raises(CallError) as info:
            run(complete(server))
    assert info.value.kind == kind and len(server.requests) == 1


def test_exhausted_retries_raise_the_kind():
    policy = RetryPolicy(backoff={"server_5xx": (0, 0)}, max_retries=2)
    with OpenAIServer(fault_plan=lambda body, seen: status_fault(502)) as server:
        with pytest.raises(CallError) as info:
            run(complete(server, retry=policy))
    assert info.value.kind == "server_5xx" and len(server.requests) == 3


def test_auth_error_never_echoes_the_key():
    echo = status_fault(401, json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    with OpenAIServer(fault_plan=lambda body, seen: echo) as server:
        with pytest.raises(AuthError) as info:
            run(complete(server))
    assert KEY not in str(info.value) and KEY not in info.value.message
    assert len(server.requests) == 1


def test_connection_refused_is_network():
    class Closed:
        base_url = "http://127.0.0.1:9"

    policy = RetryPolicy(backoff={"network": (0,)}, max_retries=1)
    with pytest.raises(CallError) as info:
        run(complete(Closed(), retry=policy))
    assert info.value.kind == "network"


# --- record / replay ----------------------------------------------------------------------


def test_record_then_replay_without_key_or_server(tmp_path):
    path = tmp_path / "calls.sqlite"
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        recorded = run(complete(server, CallCache(path, "record")))
        base_url = server.base_url
    assert KEY not in path.read_bytes().decode("latin-1")

    class Gone:
        pass

    Gone.base_url = base_url  # server stopped: any call would fail
    replayed = run(complete(Gone(), CallCache(path, "replay"), key=None))
    assert replayed == recorded


def test_replay_miss_names_the_call(tmp_path):
    path = tmp_path / "calls.sqlite"
    CallCache(path, "record").close()
    with pytest.raises(ReplayMissError, match="q_id=q1 trial=1 step=1"):
        run(complete(type("S", (), {"base_url": "http://127.0.0.1:9"})(), CallCache(path, "replay"), key=None))


def test_recorded_error_replays_and_record_mode_retries_it(tmp_path):
    path = tmp_path / "calls.sqlite"
    fault = status_fault(400, "content_policy_violation")
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=faults_then_ok(fault)) as server:
        with pytest.raises(CallError):
            run(complete(server, CallCache(path, "record")))
        # replay re-raises the recorded failure
        with pytest.raises(CallError) as info:
            run(complete(server, CallCache(path, "replay"), key=None))
        assert info.value.kind == "content_policy"
        # record mode calls again (the fault is gone now) and overwrites the entry
        result = run(complete(server, CallCache(path, "record")))
    assert result.message["content"]
    assert run(complete(server, CallCache(path, "replay"), key=None)) == result


def test_auth_failures_are_not_recorded(tmp_path):
    path = tmp_path / "calls.sqlite"
    with OpenAIServer(fault_plan=lambda body, seen: status_fault(403)) as server:
        with pytest.raises(AuthError):
            run(complete(server, CallCache(path, "record")))
    with pytest.raises(ReplayMissError):
        run(complete(server, CallCache(path, "replay"), key=None))


def test_semaphore_caps_concurrency():
    lock = threading.Lock()
    in_flight = {"now": 0, "max": 0}

    def slow_brain(body):
        with lock:
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
        time.sleep(0.05)
        with lock:
            in_flight["now"] -= 1
        return content_reply("\\boxed{Yes}", body)

    async def many(server, transport):
        client = ChatClient(Endpoint(server.base_url, KEY), Sampling(), CallCache(None, "off"),
                            semaphore=asyncio.Semaphore(3), transport=transport)
        contexts = [CallContext("m", f"q{i}", 1, 1) for i in range(9)]
        await asyncio.gather(*(client.complete(SPEC, MESSAGES, [], c) for c in contexts))
        await transport.aclose()

    for kind in ("lean", "httpx"):  # both transports behave the same
        in_flight["max"] = 0
        with OpenAIServer(slow_brain) as server:
            run(many(server, make_transport(kind)))
        assert in_flight["max"] == 3


def test_http10_server_without_content_length():
    """A bare stdlib server: HTTP/1.0, no Content-Length, body ends when the connection closes."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Plain(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = content_reply("\\boxed{No}", body)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps(reply).encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Plain)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    class Address:
        base_url = f"http://127.0.0.1:{server.server_address[1]}"

    try:
        async def twice():
            client = ChatClient(Endpoint(Address.base_url, KEY), Sampling(), CallCache(None, "off"), semaphore=asyncio.Semaphore(1))
            try:
                return [await client.complete(SPEC, MESSAGES, [], CallContext("m", f"q{i}", 1, 1)) for i in range(2)]
            finally:
                await client.aclose()

        results = run(twice())
    finally:
        server.shutdown()
        server.server_close()
    assert [r.message["content"] for r in results] == ["\\boxed{No}"] * 2
