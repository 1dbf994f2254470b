"""OpenAI-compatible chat client: ``POST {base_url}/chat/completions`` on httpx (async).

Works against any endpoint that speaks the chat-completions wire format (OpenRouter, vLLM,
Ollama, llama.cpp server). Every request passes the browsing barrier of Table 11 before it
leaves: no ``:online`` slug, at most one tool and it is ``web_search``, no ``plugins`` or
``web_search_options``. Reasoning-class slugs get no temperature/top_p; the token-limit
field name is per model.

Requests go through the :class:`~oracleproto.harness.replay.CallCache` *without* the key (the
key travels only in the Authorization header of the client's ``httpx.AsyncClient``), so a
recorded run replays with no key and the cache holds no secret. Transport and HTTP failures are retried per
:data:`~oracleproto.harness.faults.LLM_RETRY`; what is left is raised as a
:class:`~oracleproto.harness.faults.CallError` (``AuthError`` for 401/403) whose message has
been scrubbed of keys.

Each call is one POST on ``httpx.AsyncClient`` held to a wall-clock deadline and a
response-size cap (:mod:`oracleproto.harness.bounded_http`). The body of each call is
JSON-encoded once and serves both as the cache key material and as the bytes on the wire.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from oracleproto.config import ONLINE_SUFFIX, Sampling
from oracleproto.errors import RunAborted
from oracleproto.harness.bounded_http import (
    ERROR_BODY_CHARS,
    CallLimits,
    ChannelSlots,
    JsonPoster,
    raise_for_status,
)
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
)
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.settings import SECRETS, Endpoint, ModelSpec
from oracleproto.tools import WEB_SEARCH

LLM_CHANNEL = "llm"


class BrowsingBarrierError(RunAborted):
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
    invalid_usage: tuple[str, ...] = ()  # usage fields the provider sent out of range (taken as unknown)

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


# A provider's numbers are untrusted input: a count past this (or negative, or not an
# integer) is unknown, never stored — 10**20 tokens once crashed the export after every
# trial of a paid run was stored. Costs must be finite and non-negative.
MAX_COUNT = 10**12


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage_count(usage: Mapping[str, Any], name: str, invalid: list[str]) -> int:
    value = usage.get(name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        invalid.append(name)
        return 0
    return value


def _usage_cost(usage: Mapping[str, Any], invalid: list[str]) -> float | None:
    cost = usage.get("cost")
    if cost is None:
        return None
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or not 0 <= cost <= MAX_COUNT:
        invalid.append("cost")
        return None
    return float(cost)


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
    invalid: list[str] = []
    reasoning = _usage_count(details, "reasoning_tokens", invalid) or _usage_count(usage, "reasoning_tokens", invalid)
    return ChatResult(
        message=canonical_assistant_message(choice["message"], step),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        response_id=data.get("id") if isinstance(data.get("id"), str) else None,
        system_fingerprint=data.get("system_fingerprint") if isinstance(data.get("system_fingerprint"), str) else None,
        prompt_tokens=_usage_count(usage, "prompt_tokens", invalid),
        completion_tokens=_usage_count(usage, "completion_tokens", invalid),
        reasoning_tokens=reasoning,
        provider_cost_usd=_usage_cost(usage, invalid),
        latency_ms=_int(envelope.get("latency_ms")),
        invalid_usage=tuple(sorted(set(invalid))),
    )


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


def describe_failure(exc: BaseException) -> str:
    return SECRETS.scrub(f"{type(exc).__name__}: {exc}")[:ERROR_BODY_CHARS]


class ChatClient:
    """Chat-completions calls for the models of one endpoint, under the channel's shared slots.

    Each call is one :class:`~oracleproto.harness.bounded_http.JsonPoster` exchange (an httpx
    transport keeping ``max_connections`` alive), held to
    ``sampling.timeout_s`` from connect to last byte and ``sampling.max_response_bytes``.
    ``transport`` replaces httpx's network transport (tests: ``httpx.MockTransport``).
    """

    def __init__(
        self,
        endpoint: Endpoint,
        sampling: Sampling,
        cache: CallCache,
        *,
        slots: ChannelSlots,
        max_connections: int = 10,
        transport: httpx.AsyncBaseTransport | None = None,
        meter: ChannelMeter | None = None,
        retry_policy: RetryPolicy = LLM_RETRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        SECRETS.register(endpoint.api_key)  # scrubbed from every message this client builds
        self.endpoint = endpoint
        self.sampling = sampling
        self.cache = cache
        self._slots = slots
        self._meter = meter or ChannelMeter()
        self._retry = retry_policy
        self._sleep = sleep
        self._limits = CallLimits(sampling.timeout_s, sampling.max_response_bytes)
        self._what = f"{endpoint.key_env} endpoint"  # names the endpoint in errors without its URL or key
        headers = {} if endpoint.api_key is None else {"Authorization": f"Bearer {endpoint.api_key}"}
        self._http = JsonPoster(f"{endpoint.base_url}/chat/completions", headers, max_connections, transport)

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
        request = self._http.prepare(payload)
        async with self._slots.hold(request), self._meter.track(LLM_CHANNEL):
            reply = await self._http.send(request, self._limits, self._what)
        raise_for_status(reply, self._what)
        try:
            data = json.loads(reply.content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MalformedResponseError(f"HTTP {reply.status} body is not JSON") from exc
        return check_response_body(data), reply.latency_ms

    async def aclose(self) -> None:
        await self._http.aclose()
