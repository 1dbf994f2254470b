"""The JSON channel's HTTP layer: environment proxies, headers on the wire, the body as sent."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from oracleproto.harness.bounded_http import (
    CallLimits,
    ChannelSlots,
    JsonPoster,
    environment_proxy,
)
from tests.servers.raw_server import RawServer, response_bytes

LIMITS = CallLimits(deadline_s=5.0, max_response_bytes=1 << 20)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def no_proxy_env(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_environment_proxy_by_scheme_with_no_proxy_honoured(no_proxy_env):
    assert environment_proxy("https://api.example.com/v1") is None
    no_proxy_env.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    no_proxy_env.setenv("ALL_PROXY", "http://fallback.internal:3128")
    assert environment_proxy("https://api.example.com/v1") == "http://proxy.internal:3128"
    assert environment_proxy("http://api.example.com/v1") == "http://fallback.internal:3128"
    no_proxy_env.setenv("NO_PROXY", "example.com")
    assert environment_proxy("https://api.example.com/v1") is None


def test_a_post_goes_through_the_environment_proxy(no_proxy_env):
    """The upstream host does not resolve, so only a call sent to the proxy can succeed."""
    def proxy(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, b'{"ok": true}'))

    with RawServer(proxy, close_after_reply=True) as server:
        no_proxy_env.setenv("HTTP_PROXY", server.url)
        reply = asyncio.run(_post(JsonPoster("http://upstream.invalid/v1/chat/completions", {}, 1), b"{}"))
    assert reply.status == 200 and json.loads(reply.content) == {"ok": True}
    head, _ = server.received[0]  # an absolute-form request line: the proxy's to forward
    assert head.startswith(b"POST http://upstream.invalid/v1/chat/completions HTTP/1.1\r\n")


def test_the_exact_body_and_channel_headers_reach_the_server(no_proxy_env):
    def server_script(conn: socket.socket) -> None:
        conn.sendall(response_bytes(200, b"{}"))

    payload = b'{"model": "m", "messages": []}'
    with RawServer(server_script, close_after_reply=True) as server:
        poster = JsonPoster(f"{server.url}/chat/completions", {"Authorization": "Bearer sk-test"}, 2)
        asyncio.run(_post(poster, payload))
    head, body = server.received[0]
    assert body == payload
    for header in (b"authorization: bearer sk-test", b"content-type: application/json", b"user-agent: oracleproto/", f"content-length: {len(payload)}".encode()):
        assert header in head.lower()


async def _post(poster: JsonPoster, payload: bytes):
    try:
        return await poster.send(poster.prepare(payload), LIMITS, "test endpoint")
    finally:
        await poster.aclose()


def test_a_mock_transport_replaces_the_network():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, content=request.content[::-1])

    reply = asyncio.run(_post(JsonPoster("http://x.test/chat", {}, 1, httpx.MockTransport(handler)), b"abc"))
    assert (reply.status, reply.content) == (201, b"cba")



class SlowToWrite(httpx.AsyncBaseTransport):
    """Yields like httpcore does (a few times) before the request is on the wire, then answers."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        for _ in range(4):
            await asyncio.sleep(0)
        await request.extensions["trace"]("http11.send_request_body.complete", {})
        self.log.append(f"{request.content.decode()} on the wire")
        await asyncio.sleep(0.01)  # the provider's latency
        return httpx.Response(200, content=b"{}")


def test_a_freed_slot_reaches_the_wire_before_the_freeing_call_goes_on():
    log: list[str] = []
    transport = SlowToWrite(log)
    slots = ChannelSlots(1)
    in_flight = []

    async def call(name: str) -> None:
        request = httpx.Request("POST", "http://x.test/", content=name.encode())
        async with slots.hold(request):
            in_flight.append(name)
            assert len(in_flight) == 1  # the cap holds
            response = await transport.handle_async_request(request)
            await response.aread()
            in_flight.remove(name)
        log.append(f"{name} goes on")

    async def main() -> None:
        await asyncio.gather(call("a"), call("b"), call("c"))

    asyncio.run(main())
    # each freed slot is on the wire again before its former holder does its own work
    assert log == ["a on the wire", "b on the wire", "a goes on", "c on the wire", "b goes on", "c goes on"]


def test_with_nobody_waiting_a_call_goes_on_at_once():
    async def main() -> int:
        slots = ChannelSlots(2)
        request = httpx.Request("POST", "http://x.test/")
        async with slots.hold(request):
            await request.extensions["trace"]("http11.send_request_body.complete", {})
        loop_turns = 0

        async def count() -> None:
            nonlocal loop_turns
            while True:
                loop_turns += 1
                await asyncio.sleep(0)

        counter = asyncio.create_task(count())
        await asyncio.sleep(0)
        async with slots.hold(httpx.Request("POST", "http://x.test/")) as _:
            pass  # never sent: a failed exchange still frees its slot and its count
        turns = loop_turns
        counter.cancel()
        return turns

    assert asyncio.run(main()) <= 2
