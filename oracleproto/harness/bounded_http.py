"""Bounded HTTP exchanges for the model and leak-detector calls: httpx under a deadline and a size cap.

Both channels POST one JSON body to an OpenAI-compatible endpoint through an httpx
transport (:class:`JsonPoster`) and hold the whole exchange to two limits (:class:`CallLimits`):

- a wall-clock deadline from connect to last byte (:func:`~oracleproto.harness.faults.within_deadline`),
  so a server that trickles its headers or an endless body ends as a ``timeout``;
- a cap on the body, counted while it streams in, so an oversized or endless body ends as
  ``response_too_large`` after at most one network read past the cap.

Malformed HTTP (a bogus status line, conflicting Content-Length, a header that never ends)
is httpx's to reject: h11 raises ``RemoteProtocolError``, classified ``network``.

Why plain httpx rather than the ``openai`` SDK (with ``max_retries=0``): httpx is already a
dependency; the request body is sent as the exact bytes that keyed the call cache (the SDK
re-encodes a dict); retries, classification and status handling are ours (Table 20/21), so
the SDK's own layer of them would only have to be switched off; and its response models
cost CPU on every call for fields the harness reads itself.

Why the transport (``httpx.AsyncHTTPTransport``, httpx's documented extension point) rather
than ``AsyncClient.send``: the client's per-request layers (URL merging, the cookie jar, the
auth and redirect flows, event hooks) cost ~0.25 ms of CPU per call, a fifth of httpx's
share here, and none of them applies to a JSON POST to one fixed URL that carries its own
``Authorization`` header. The request is built before the caller takes its concurrency
slot, so the slot covers the exchange alone. Proxies still come from the environment
(``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``), decided once per endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx

from oracleproto import __version__
from oracleproto.harness.faults import (
    AUTH,
    RESPONSE_TOO_LARGE,
    AuthError,
    CallError,
    classify_status,
    parse_retry_after,
    within_deadline,
)
from oracleproto.harness.settings import SECRETS

ERROR_BODY_CHARS = 300  # of a provider's error body, quoted in a CallError message
HAND_OVER_YIELDS = 8  # httpcore yields 4-5 times between taking a connection and writing a request


@dataclass(frozen=True)
class CallLimits:
    """What one call may cost: wall-clock seconds and response-body bytes."""

    deadline_s: float
    max_response_bytes: int


@dataclass(frozen=True)
class HttpReply:
    """A fully read response: status, headers, body and the exchange's wall time."""

    status: int
    headers: httpx.Headers
    content: bytes
    latency_ms: int


DEFAULT_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Accept-Encoding": "gzip, deflate",
    "User-Agent": f"oracleproto/{__version__}",
}


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process (trust store and ``SSL_CERT_FILE`` read once).

    Building one loads the CA bundle, ~25 ms; each channel's client (and the preflight's)
    would otherwise build its own at the start of every evaluation.
    """
    return httpx.create_ssl_context()


def make_http_client(headers: Mapping[str, str], transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An ``AsyncClient`` for a one-off request (the preflight's): the shared TLS context,
    environment proxies, no per-phase timeouts (the caller sets one deadline)."""
    return httpx.AsyncClient(headers=dict(headers), timeout=None, transport=transport, verify=tls_context())


class ChannelSlots:
    """A channel's cap on calls in flight (Table 20) that hands a freed slot straight to the wire.

    On one event loop, a call that frees its slot goes on with its trial (parse the reply,
    search, build the next prompt) while the call it woke waits behind that work at each of
    the transport's internal yields before its request is written: with replies arriving in
    bursts, that idled ~5 % of the channel at 50 ms latency (bench/harness.py). So a call
    that frees a slot somebody waits for yields until every slot holder's request is on the
    wire (httpx's ``trace`` extension reports it), at most ``HAND_OVER_YIELDS`` times.
    """

    def __init__(self, size: int) -> None:
        self._semaphore = asyncio.Semaphore(size)
        self._waiting = 0  # calls queued for a slot
        self._unsent = 0  # slot holders whose request is not fully written yet

    @contextlib.asynccontextmanager
    async def hold(self, request: httpx.Request) -> AsyncIterator[None]:
        """One slot for the exchange of ``request`` (its ``trace`` extension is set here)."""
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        unsent = [True]

        def sent() -> None:
            if unsent[0]:
                unsent[0] = False
                self._unsent -= 1

        async def trace(event: str, info: object) -> None:
            if event.endswith("send_request_body.complete"):
                sent()

        self._unsent += 1
        request.extensions["trace"] = trace
        try:
            yield
        finally:
            sent()
            self._semaphore.release()
        await self._hand_over()

    async def _hand_over(self) -> None:
        for _ in range(HAND_OVER_YIELDS):  # bounded: a transport without trace events never reports
            if not (self._unsent or self._waiting):
                return
            await asyncio.sleep(0)  # a woken call runs first: it takes the slot and starts its send


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``NO_PROXY`` honoured), or None."""
    parsed = httpx.URL(url)
    if urllib.request.proxy_bypass(parsed.host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parsed.scheme) or proxies.get("all")


class JsonPoster:
    """POSTs JSON bodies to one URL through an httpx transport, each exchange bounded.

    :meth:`prepare` builds the request (outside any concurrency slot); :meth:`send` runs
    the exchange under :class:`CallLimits`. The transport keeps ``max_connections`` alive:
    the channel's semaphore caps calls in flight, so a pool of that size never makes a call
    wait for a connection. ``transport`` is for tests (``httpx.MockTransport``).
    """

    def __init__(self, url: str, headers: Mapping[str, str], max_connections: int, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = httpx.URL(url)
        self._headers = httpx.Headers({**DEFAULT_HEADERS, **headers})
        if transport is None:
            limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
            transport = httpx.AsyncHTTPTransport(limits=limits, verify=tls_context(), proxy=environment_proxy(url))
        self._transport = transport

    def prepare(self, payload: bytes) -> httpx.Request:
        return httpx.Request("POST", self.url, headers=self._headers, content=payload)

    async def send(self, request: httpx.Request, limits: CallLimits, what: str) -> HttpReply:
        """The whole reply (any status) within ``limits``; ``what`` names the endpoint in errors."""
        started = time.perf_counter()

        async def exchange() -> HttpReply:
            response = await self._transport.handle_async_request(request)
            try:
                content = await read_capped(response, limits.max_response_bytes, what)
            finally:
                await response.aclose()
            return HttpReply(response.status_code, response.headers, content, round((time.perf_counter() - started) * 1000))

        return await within_deadline(exchange(), limits.deadline_s, what)

    async def aclose(self) -> None:
        await self._transport.aclose()


async def read_capped(response: httpx.Response, max_bytes: int, what: str) -> bytes:
    """The (decoded) body, read chunk by chunk; a ``response_too_large`` CallError past ``max_bytes``.

    Counted after Content-Encoding is undone, so the cap is on what the harness would
    hold in memory, whatever the wire size or the Content-Length claim.
    """
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise CallError(RESPONSE_TOO_LARGE, f"{what}: response body exceeds {max_bytes} bytes; reading stopped")
    return bytes(body)


def raise_for_status(reply: HttpReply, what: str) -> None:
    """Nothing for a status below 400; else the classified CallError (AuthError for 401/403).

    The message quotes the start of the provider's body, scrubbed of every registered key
    (a provider may echo the key it rejected).
    """
    if reply.status < 400:
        return
    text = reply.content.decode("utf-8", "replace")
    kind = classify_status(reply.status, text.lower())
    message = f"HTTP {reply.status} from {what}: {SECRETS.scrub(text)[:ERROR_BODY_CHARS]}"
    if kind == AUTH:
        raise AuthError(message, status=reply.status)
    raise CallError(kind, message, status=reply.status, retry_after=parse_retry_after(reply.headers.get("retry-after")))
