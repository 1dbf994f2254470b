import asyncio
import json
import socket
import threading
import time

import httpx
import pytest

from oracleproto.config import Sampling
from oracleproto.errors import ConfigError
from oracleproto.harness.bounded_http import ChannelSlots
from oracleproto.harness.faults import AuthError, CallError, RetryPolicy
from oracleproto.harness.llm import (
    BrowsingBarrierError,
    ChatClient,
    assert_no_browsing,
    build_chat_request,
    canonical_assistant_message,
    check_response_body,
    encode_chat_request,
)
from oracleproto.harness.react import WEB_SEARCH_TOOL
from oracleproto.harness.replay import CallCache, CallContext, ReplayMissError
from oracleproto.harness.settings import Endpoint, ModelSpec
from tests.servers.openai_server import (
    Fault,
    OpenAIServer,
    SearchThenAnswer,
    content_reply,
    status_fault,
)
from tests.servers.raw_server import RawServer, response_bytes

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
        Endpoint(server.base_url, key), sampling, cache, slots=ChannelSlots(2), sleep=sleep, **kwargs
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
    with pytest.raises(ConfigError, match=":online"):
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


def test_chunked_told_to_close_and_truncated_replies():
    """Wire forms a provider may use: a 429 that closes the connection (its Retry-After is
    honoured), a reply cut short of its Content-Length (a network fault), then a chunked
    reply with a chunk extension."""
    reply = json.dumps(content_reply("\\boxed{Yes}", {"messages": MESSAGES})).encode()
    half = len(reply) // 2

    def told_to_close(conn):
        conn.sendall(response_bytes(429, b'{"error": {"message": "slow down"}}', [("connection", " Close"), ("Retry-After", "7")]))

    def truncated(conn):
        conn.sendall(response_bytes(200, reply)[: -half])
        conn.shutdown(socket.SHUT_RDWR)

    def chunked(conn):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        first, second = reply[:half], reply[half:]
        conn.sendall(head + b"%x\r\n%s\r\n%x;x=1\r\n%s\r\n0\r\n\r\n" % (len(first), first, len(second), second))

    scripts = [told_to_close, truncated, chunked]
    waits = []
    with RawServer(lambda conn: scripts.pop(0)(conn)) as server:
        result = run(complete(type("S", (), {"base_url": server.url})(), waits=waits))
    assert result.message["content"] == "\\boxed{Yes}"
    assert waits == [7.0, 5] and server.requests == 3  # Retry-After, then the network sequence at attempt 1


def test_a_stalled_call_is_a_timeout_retried_like_a_network_fault():
    waits = []
    plan = faults_then_ok(Fault("stall", stall_s=0.6))
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=plan) as server:
        result = run(complete(server, waits=waits, sampling=Sampling(timeout_s=0.2)))
    assert waits == [2] and result.message["content"] and len(server.requests) == 2


def test_a_stall_past_every_retry_leaves_as_a_timeout():
    policy = RetryPolicy(backoff={"timeout": (0,)}, max_retries=1)
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=lambda body, seen: Fault("stall", stall_s=0.6)) as server:
        with pytest.raises(CallError) as info:
            run(complete(server, sampling=Sampling(timeout_s=0.2), retry=policy))
    assert info.value.kind == "timeout" and "0.2 s" in info.value.message and len(server.requests) == 2


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

    async def many(server):
        client = ChatClient(Endpoint(server.base_url, KEY), Sampling(), CallCache(None, "off"), slots=ChannelSlots(3))
        contexts = [CallContext("m", f"q{i}", 1, 1) for i in range(9)]
        try:
            await asyncio.gather(*(client.complete(SPEC, MESSAGES, [], c) for c in contexts))
        finally:
            await client.aclose()

    with OpenAIServer(slow_brain) as server:
        run(many(server))
    assert in_flight["max"] == 3


def test_an_injected_transport_gets_the_cache_key_bytes_and_the_key_header():
    """Tests (and only tests) replace httpx's network transport through ``transport=``."""
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=content_reply("\\boxed{Yes}", json.loads(request.content)))

    async def one_call():
        client = ChatClient(
            Endpoint("http://model.invalid/v1", KEY), Sampling(), CallCache(None, "off"),
            slots=ChannelSlots(1), transport=httpx.MockTransport(handler),
        )
        try:
            return await client.complete(SPEC, MESSAGES, [], CTX)
        finally:
            await client.aclose()

    result = run(one_call())
    (request,) = seen
    assert str(request.url) == "http://model.invalid/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}" and request.headers["content-type"] == "application/json"
    # the bytes on the wire are the cache-key text: one encoding per call
    assert request.content.decode() == encode_chat_request(build_chat_request(SPEC, Sampling(), MESSAGES, []))
    assert result.message["content"] == "\\boxed{Yes}"


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
            client = ChatClient(Endpoint(Address.base_url, KEY), Sampling(), CallCache(None, "off"), slots=ChannelSlots(1))
            try:
                return [await client.complete(SPEC, MESSAGES, [], CallContext("m", f"q{i}", 1, 1)) for i in range(2)]
            finally:
                await client.aclose()

        results = run(twice())
    finally:
        server.shutdown()
        server.server_close()
    assert [r.message["content"] for r in results] == ["\\boxed{No}"] * 2
