"""OpenAI-compatible chat client: ``POST {base_url}/chat/completions`` on httpx (async).

Works against any endpoint that speaks the chat-completions wire format (OpenRouter, vLLM,
Ollama, llama.cpp server). Every request passes the browsing barrier of Table 11 before it
leaves: no ``:online`` slug, at most one tool and it is ``web_search``, no ``plugins`` or
``web_search_options``. Reasoning-class slugs get no temperature/top_p; the token-limit
field name is per model.

Requests go through the :class:`~oracleproto.harness.replay.CallCache` *without* the key (the
key is added as a header by :meth:`ChatClient._post`), so a recorded run replays with no
key and the cache holds no secret. Transport and HTTP failures are retried per
:data:`~oracleproto.harness.faults.LLM_RETRY`; what is left is raised as a
:class:`~oracleproto.harness.faults.CallError` (``AuthError`` for 401/403) whose message has
been scrubbed of keys.

Calls go through an httpx transport: by default :class:`LeanTransport` (HTTP/1.1 keep-alive
on an asyncio Protocol, a tenth of httpcore's CPU per call), or httpx's own pool
(``make_transport("httpx")``). The body of each call is JSON-encoded once and serves both
as the cache key material and as the bytes on the wire.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from oracleproto.config import ONLINE_SUFFIX, Sampling
from oracleproto.harness.faults import (
    AUTH,
    LLM_RETRY,
    AuthError,
    CallError,
    MalformedResponseError,
    RetryPolicy,
    call_with_retries,
    classify,
    classify_status,
    parse_retry_after,
)
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.settings import SECRETS, Endpoint, ModelSpec

WEB_SEARCH = "web_search"
LLM_CHANNEL = "llm"
ERROR_BODY_CHARS = 300


class BrowsingBarrierError(ValueError):
    """A request would open a provider-side browsing channel (Table 11)."""


def assert_no_browsing(body: Mapping[str, Any]) -> None:
    """The send-time assertions of Table 11 on one main-LLM request body."""
    model = str(body.get("model", ""))
    if model.endswith(ONLINE_SUFFIX):
        raise BrowsingBarrierError(f"model {model!r}: ':online' slugs are refused at send time")
    tools = body.get("tools") or []
    if len(tools) > 1:
        raise BrowsingBarrierError(f"at most one tool may be offered, got {len(tools)}")
    for tool in tools:
        name = (tool.get("function") or {}).get("name") if isinstance(tool, Mapping) else None
        if name != WEB_SEARCH:
            raise BrowsingBarrierError(f"the only tool allowed is {WEB_SEARCH!r}, got {name!r}")
    for forbidden in ("plugins", "web_search_options"):
        if forbidden in body:
            raise BrowsingBarrierError(f"request field {forbidden!r} is refused: it enables provider-side browsing")


def build_chat_request(
    spec: ModelSpec,
    sampling: Sampling,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The JSON body for one call (no key, no endpoint), after the browsing barrier."""
    body: dict[str, Any] = {"model": spec.slug, "messages": list(messages)}
    if tools:
        body["tools"] = list(tools)
    body[spec.max_tokens_param] = sampling.max_tokens
    if not spec.is_reasoning(sampling.reasoning_patterns):
        if "temperature" not in spec.omit_sampling:
            body["temperature"] = sampling.temperature
        if "top_p" not in spec.omit_sampling:
            body["top_p"] = sampling.top_p
    assert_no_browsing(body)
    return body


# Compact ASCII JSON: the wire form of a request and of the stored trace. One encoder
# object, not one per call (json.dumps builds a new one whenever options are not default).
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode_json(value: Any) -> str:
    return _ENCODER.encode(value)


def encode_chat_request(body: Mapping[str, Any], messages_json: str | None = None) -> str:
    """The body as sent; ``messages_json`` (the already-encoded message list) saves re-encoding
    the whole conversation on every step. Equal to ``encode_json(body)`` for the same body."""
    if messages_json is None:
        messages_json = encode_json(body["messages"])
    rest = encode_json({k: v for k, v in body.items() if k not in ("model", "messages")})
    return '{"model":' + encode_json(body["model"]) + ',"messages":' + messages_json + "," + rest[1:]


# ---------------------------------------------------------------------------------------
# Responses


@dataclass(frozen=True)
class ChatResult:
    """One assistant turn with the provider's envelope fields."""

    message: dict[str, Any]  # canonical assistant message (see canonical_assistant_message)
    finish_reason: str | None
    response_id: str | None
    system_fingerprint: str | None
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    provider_cost_usd: float | None
    latency_ms: int

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return self.message.get("tool_calls") or []


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    # some local servers send a JSON object; the canonical trace always holds a string
    return json.dumps(arguments, ensure_ascii=False)


def canonical_assistant_message(raw: Mapping[str, Any], step: int) -> dict[str, Any]:
    """The assistant message as the trace stores it and as it is sent back next turn.

    Only role, content and tool_calls are kept; provider extras (reasoning, refusal,
    annotations) are dropped so the trace is the same whatever the provider adds. A tool
    call without an id gets ``call_<step>_<i>`` so its tool reply can refer to it.
    """
    content = raw.get("content")
    if isinstance(content, list):  # content parts: keep the text ones, in order
        content = "".join(
            str(part.get("text") or "") for part in content if isinstance(part, Mapping) and part.get("type") in ("text", "output_text")
        )
    message: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str) else None}
    calls = []
    for index, call in enumerate(raw.get("tool_calls") or []):
        if not isinstance(call, Mapping):
            raise MalformedResponseError(f"tool_calls[{index}] is not an object")
        function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
        calls.append(
            {
                "id": str(call.get("id") or f"call_{step}_{index}"),
                "type": "function",
                "function": {"name": str(function.get("name") or ""), "arguments": _arguments_text(function.get("arguments"))},
            }
        )
    if calls:
        message["tool_calls"] = calls
    return message


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def check_response_body(data: Any) -> dict[str, Any]:
    """The body if it is a chat completion; in-band errors become CallError, garbage MalformedResponseError."""
    if not isinstance(data, dict):
        raise MalformedResponseError("response body is not a JSON object")
    choices = data.get("choices")
    if not choices and isinstance(data.get("error"), Mapping):
        # some gateways answer 200 with {"error": {"code": 429, "message": ...}}
        error = data["error"]
        code = error.get("code")
        status = code if isinstance(code, int) else 500
        text = SECRETS.scrub(str(error.get("message", "")))[:ERROR_BODY_CHARS]
        raise CallError(classify_status(status, text.lower()), f"in-band error {status}: {text}", status=status)
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise MalformedResponseError("response has no choices[0]")
    if not isinstance(choices[0].get("message"), Mapping):
        raise MalformedResponseError("choices[0] has no message object")
    return data


def result_from_envelope(envelope: Mapping[str, Any], step: int) -> ChatResult:
    """A :class:`ChatResult` from a cached or fresh ``{"response", "latency_ms"}`` envelope."""
    data = check_response_body(envelope.get("response"))
    choice = data["choices"][0]
    usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
    details = usage.get("completion_tokens_details") if isinstance(usage.get("completion_tokens_details"), Mapping) else {}
    reasoning = _int(details.get("reasoning_tokens")) or _int(usage.get("reasoning_tokens"))
    cost = usage.get("cost")
    return ChatResult(
        message=canonical_assistant_message(choice["message"], step),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        response_id=data.get("id") if isinstance(data.get("id"), str) else None,
        system_fingerprint=data.get("system_fingerprint") if isinstance(data.get("system_fingerprint"), str) else None,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        reasoning_tokens=reasoning,
        provider_cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        latency_ms=_int(envelope.get("latency_ms")),
    )


# ---------------------------------------------------------------------------------------
# A lean HTTP/1.1 transport for httpx

_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_HEADER_LINES = 200
_HEAD_END = b"\r\n\r\n"

Parsed = tuple[int, bytes, bytes, bool]  # status, head (status line + headers), body, keep-alive


class _NoResponse(Exception):
    """The connection ended before any response byte: on a reused connection, safe to retry."""


_FRAMING = re.compile(rb"\r\n(content-length|transfer-encoding|connection)[ \t]*:[ \t]*([^\r]*)", re.IGNORECASE)


def split_headers(head: bytes) -> list[tuple[bytes, bytes]]:
    """The (name, value) pairs of a response head (status line excluded)."""
    lines = head.split(b"\r\n")[1:]
    if len(lines) > _MAX_HEADER_LINES:
        raise ValueError("too many header lines")
    pairs = []
    for line in lines:
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError(f"bad header line {line[:80]!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def header_value(head: bytes, name: bytes) -> str | None:
    """One header of a response head (case-insensitive), or None."""
    lowered = name.lower()
    return next((v.decode("latin-1") for k, v in split_headers(head) if k.lower() == lowered), None)


def parse_http_response(buffer: bytes | bytearray, eof: bool, method: str) -> Parsed | None:
    """One HTTP/1.1 response from the bytes received so far, or None while incomplete.

    Returns (status, head, body, keep-alive); ``head`` is the status line and headers, read
    by :func:`split_headers` only when needed (the framing headers are found by one regex,
    this runs on every response). Handles Content-Length, chunked and read-until-close
    bodies; raises ValueError for a malformed or truncated response.
    """
    head_end = buffer.find(_HEAD_END)
    if head_end < 0:
        if eof:
            raise ValueError("connection closed inside the response head")
        return None
    head = bytes(buffer[:head_end])
    if not head.startswith(b"HTTP/1."):
        raise ValueError(f"bad status line {head[:80]!r}")
    status = int(head[9:12])
    fields = {name.lower(): value.strip().lower() for name, value in _FRAMING.findall(head)}
    keep_alive = head.startswith(b"HTTP/1.1") and fields.get(b"connection") != b"close"
    start = head_end + len(_HEAD_END)
    if status in (204, 304) or 100 <= status < 200 or method == "HEAD":
        return status, head, b"", keep_alive
    if fields.get(b"transfer-encoding", b"").endswith(b"chunked"):
        chunks, position = [], start
        while True:
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                break
            size = int(bytes(buffer[position:line_end]).split(b";", 1)[0].strip(), 16)
            if size == 0:
                # the last chunk: complete once the (possibly empty) trailer section ends
                if buffer.find(_HEAD_END, line_end) < 0:
                    break
                return status, head, b"".join(chunks), keep_alive
            if len(buffer) < line_end + 2 + size + 2:
                break
            chunks.append(bytes(buffer[line_end + 2 : line_end + 2 + size]))
            position = line_end + 2 + size + 2
        if eof:
            raise ValueError("connection closed inside a chunked body")
        return None
    if b"content-length" in fields:
        length = int(fields[b"content-length"])
        if len(buffer) - start >= length:
            return status, head, bytes(buffer[start : start + length]), keep_alive
        if eof:
            raise ValueError(f"connection closed after {len(buffer) - start} of {length} body bytes")
        return None
    return (status, head, bytes(buffer[start:]), False) if eof else None


def _expire(waiter: asyncio.Future[Parsed]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError("read timed out"))


class _Connection(asyncio.Protocol):
    """One keep-alive connection; a response completes a future in a single wake-up."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reused = False
        self.closed = False
        self._buffer = bytearray()
        self._waiter: asyncio.Future[Parsed] | None = None
        self._method = "POST"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # bytes nobody asked for: the connection cannot be trusted again
            return
        self._buffer += data
        self._settle(eof=False)

    def eof_received(self) -> bool:
        self._settle(eof=True)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._settle(eof=True)

    def _settle(self, eof: bool) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self.closed = self.closed or eof
            return
        if eof and not self._buffer:
            waiter.set_exception(_NoResponse("connection closed before any response byte"))
            return
        try:
            parsed = parse_http_response(self._buffer, eof, self._method)
        except ValueError as exc:
            waiter.set_exception(exc)
            return
        if parsed is not None:
            waiter.set_result(parsed)

    async def exchange(self, payload: bytes, method: str, read_timeout: float | None) -> Parsed:
        assert self.transport is not None
        self._buffer.clear()
        self._method = method
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        self.transport.write(payload)
        # a bare timer on the future: cheaper than asyncio.timeout / wait_for per request
        timer = loop.call_later(read_timeout, _expire, waiter) if read_timeout is not None else None
        try:
            return await waiter
        finally:
            if timer is not None:
                timer.cancel()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 keep-alive on an asyncio Protocol, behind httpx's transport interface.

    Why: httpcore + anyio + h11 cost about 1 ms of CPU per request on this class of
    machine, which alone breaks the harness budget (≤ 2 ms per trial of ~3 calls); this
    transport does the same job for a fraction (one wake-up per response). It speaks what
    chat-completion endpoints need: one request per connection at a time, Content-Length,
    chunked or read-until-close bodies, TLS, idle-connection reuse with one retry when a
    reused connection turns out closed before any response byte. Failures surface as the
    httpx exceptions (ConnectError, ReadTimeout, RemoteProtocolError, …) that
    :func:`~oracleproto.harness.faults.classify` knows. Neither transport goes through a
    proxy (model endpoints are called directly).
    """

    def __init__(self, max_idle_per_origin: int = 20) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._max_idle = max_idle_per_origin
        self._ssl: Any = None

    async def _open(self, scheme: str, host: str, port: int, timeout: float | None, request: httpx.Request) -> _Connection:
        if scheme == "https" and self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(
                    _Connection, host, port, ssl=self._ssl if scheme == "https" else None
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connect to {host}:{port} timed out", request=request) from exc
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc.strerror or exc}", request=request) from exc
        return conn

    def _take_idle(self, origin: tuple[str, str, int]) -> _Connection | None:
        pool = self._idle.get(origin, [])
        while pool:
            conn = pool.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                conn.reused = True
                return conn
        return None

    def _give_back(self, origin: tuple[str, str, int], conn: _Connection) -> None:
        pool = self._idle.setdefault(origin, [])
        if len(pool) < self._max_idle:
            pool.append(conn)
        else:
            conn.close()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        status, head, content = await self.exchange(
            request.url, request.method, request.headers.raw, body, request.extensions.get("timeout", {}), request
        )
        try:
            headers = split_headers(head)
        except ValueError as exc:
            raise httpx.RemoteProtocolError(f"malformed response head: {exc}", request=request) from exc
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(content), request=request)

    async def exchange(
        self,
        url: httpx.URL,
        method: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
        request: httpx.Request | None = None,
    ) -> tuple[int, bytes, bytes]:
        """One request → (status, response head, body). ``headers`` must include Host and Content-Length.

        :class:`ChatClient` calls this directly: building and reading httpx Request and
        Response objects was a fifth of the harness CPU per call.
        """
        scheme = url.scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}", request=request)
        host = url.host
        origin = (scheme, host, url.port or _DEFAULT_PORTS[scheme])
        lines = [f"{method} {url.raw_path.decode('ascii')} HTTP/1.1".encode()]
        lines += [name + b": " + value for name, value in headers]
        payload = b"\r\n".join(lines) + _HEAD_END + body
        for _ in range(2):
            conn = self._take_idle(origin) or await self._open(scheme, host, origin[2], timeouts.get("connect"), request)
            try:
                status, head, content, keep_alive = await conn.exchange(payload, method, timeouts.get("read"))
            except _NoResponse as exc:
                conn.close()
                if conn.reused:
                    continue  # the server had closed the idle connection: retry once, fresh
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            except TimeoutError as exc:
                conn.close()
                raise httpx.ReadTimeout("read timed out", request=request) from exc
            except ValueError as exc:
                conn.close()
                raise httpx.RemoteProtocolError(f"malformed or truncated response: {exc}", request=request) from exc
            except BaseException:
                conn.close()
                raise
            if keep_alive and not conn.closed:
                self._give_back(origin, conn)
            else:
                conn.close()
            return status, head, content
        raise httpx.RemoteProtocolError("server closed the connection without a response", request=request)

    async def aclose(self) -> None:
        for pool in self._idle.values():
            for conn in pool:
                conn.close()
        self._idle.clear()


# ---------------------------------------------------------------------------------------
# In-flight counters (for the progress bar)


class _Tracked:
    def __init__(self, counts: dict[str, int], channel: str) -> None:
        self._counts, self._channel = counts, channel

    async def __aenter__(self) -> None:
        self._counts[self._channel] = self._counts.get(self._channel, 0) + 1

    async def __aexit__(self, *exc: object) -> None:
        self._counts[self._channel] -= 1


class ChannelMeter:
    """Number of calls in flight per channel."""

    def __init__(self) -> None:
        self.in_flight: dict[str, int] = {}

    def track(self, channel: str) -> _Tracked:
        return _Tracked(self.in_flight, channel)


# ---------------------------------------------------------------------------------------
# The client


HTTP_TRANSPORTS = ("lean", "httpx")


def make_transport(kind: str = "lean", max_connections: int = 10) -> httpx.AsyncBaseTransport:
    """The transport for model calls: :class:`LeanTransport` (default) or httpx's own pool."""
    if kind not in HTTP_TRANSPORTS:
        raise ValueError(f"http transport must be one of {HTTP_TRANSPORTS}, got {kind!r}")
    if kind == "lean":
        return LeanTransport()
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return httpx.AsyncHTTPTransport(limits=limits)


def describe_failure(exc: BaseException) -> str:
    return SECRETS.scrub(f"{type(exc).__name__}: {exc}")[:ERROR_BODY_CHARS]


class ChatClient:
    """Chat-completions calls for the models of one endpoint, under a shared semaphore.

    Requests go straight to the transport, not through ``httpx.AsyncClient``: its cookie,
    auth and redirect machinery is not needed for one JSON POST and costs CPU on every
    call. With :class:`LeanTransport` even the Request/Response objects are skipped.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        sampling: Sampling,
        cache: CallCache,
        *,
        semaphore: asyncio.Semaphore,
        transport: httpx.AsyncBaseTransport | None = None,
        meter: ChannelMeter | None = None,
        retry_policy: RetryPolicy = LLM_RETRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        SECRETS.register(endpoint.api_key)  # scrubbed from every message this client builds
        self.endpoint = endpoint
        self.sampling = sampling
        self.cache = cache
        self._semaphore = semaphore
        self._transport = transport or make_transport()
        self._owns_transport = transport is None
        self._meter = meter or ChannelMeter()
        self._retry = retry_policy
        self._sleep = sleep
        self._url = httpx.URL(f"{endpoint.base_url}/chat/completions")
        self._extensions = {"timeout": httpx.Timeout(sampling.timeout_s).as_dict()}
        self._headers = httpx.Headers(
            {"Authorization": f"Bearer {endpoint.api_key}", "Content-Type": "application/json", "Accept": "application/json"}
            if endpoint.api_key is not None
            else {}
        )
        # the header block for LeanTransport.exchange, built once (Content-Length added per call)
        host = self._url.netloc
        self._raw_headers = [(b"Host", host), *self._headers.raw, (b"User-Agent", b"oracleproto")]

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult:
        body = build_chat_request(spec, self.sampling, messages, tools)
        # One serialisation serves as the cache key and the HTTP body. Insertion order is
        # canonical here: every dict of the body is built by this module in a fixed order.
        text = encode_chat_request(body, messages_json)
        envelope = await self.cache.call(LLM_CHANNEL, body, context, lambda: self._send(text), request_text=text)
        return result_from_envelope(envelope, context.step)

    async def _send(self, text: str) -> dict[str, Any]:
        payload = text.encode("utf-8")
        try:
            response, latency_ms = await call_with_retries(lambda: self._post(payload), self._retry, sleep=self._sleep)
        except Exception as exc:
            # whatever is left after the retries leaves as a CallError (AuthError for auth)
            kind = classify(exc)
            if isinstance(exc, AuthError) or (isinstance(exc, CallError) and kind != AUTH):
                raise
            message = exc.message if isinstance(exc, CallError) else describe_failure(exc)
            if kind == AUTH:
                raise AuthError(message) from exc
            raise CallError(kind, message) from exc
        # latency of the answered request itself: no queueing for a slot, no retries or backoff
        return {"response": response, "latency_ms": latency_ms}

    async def _post(self, payload: bytes) -> tuple[dict[str, Any], int]:
        if self.endpoint.api_key is None:
            raise AuthError(f"no API key for {self.endpoint.key_env} (replay mode cannot call out)")
        async with self._semaphore, self._meter.track(LLM_CHANNEL):
            started = time.perf_counter()
            if isinstance(self._transport, LeanTransport):
                headers = [*self._raw_headers, (b"Content-Length", str(len(payload)).encode())]
                status, head, content = await self._transport.exchange(self._url, "POST", headers, payload, self._extensions["timeout"])
                retry_after = header_value(head, b"retry-after") if status >= 400 else None
            else:
                request = httpx.Request("POST", self._url, headers=self._headers, content=payload, extensions=self._extensions)
                response = await self._transport.handle_async_request(request)
                try:
                    content = await response.aread()
                finally:
                    await response.aclose()
                status, retry_after = response.status_code, response.headers.get("retry-after")
            latency_ms = round((time.perf_counter() - started) * 1000)
        if status >= 400:
            text = SECRETS.scrub(content.decode("utf-8", "replace"))[:ERROR_BODY_CHARS]
            kind = classify_status(status, text.lower())
            message = f"HTTP {status} from {self.endpoint.key_env} endpoint: {text}"
            if kind == AUTH:
                raise AuthError(message, status=status)
            raise CallError(kind, message, status=status, retry_after=parse_retry_after(retry_after))
        try:
            data = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MalformedResponseError(f"HTTP {status} body is not JSON") from exc
        return check_response_body(data), latency_ms

    async def aclose(self) -> None:
        if self._owns_transport:
            await self._transport.aclose()
