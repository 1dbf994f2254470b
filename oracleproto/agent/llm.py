"""OpenAI-compatible chat client: ``POST {base_url}/chat/completions`` on httpx (async).

Works against any endpoint that speaks the chat-completions wire format (OpenRouter, vLLM,
Ollama, llama.cpp server). Every request passes the browsing barrier of Table 11 before it
leaves: no ``:online`` slug, at most one tool and it is ``web_search``, no ``plugins`` or
``web_search_options``. Reasoning-class slugs get no temperature/top_p; the token-limit
field name is per model.

Requests go through the :class:`~oracleproto.agent.replay.CallCache` *without* the key (the
key is added as a header by :meth:`ChatClient._post`), so a recorded run replays with no
key and the cache holds no secret. Transport and HTTP failures are retried per
:data:`~oracleproto.agent.errors.LLM_RETRY`; what is left is raised as a
:class:`~oracleproto.agent.errors.CallError` (``AuthError`` for 401/403) whose message has
been scrubbed of keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from oracleproto.agent.errors import (
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
from oracleproto.agent.replay import CallCache, CallContext
from oracleproto.agent.settings import ONLINE_SUFFIX, SECRETS, Endpoint, ModelSpec, Sampling

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
# In-flight counters (for the progress bar)


class ChannelMeter:
    """Number of calls in flight per channel."""

    def __init__(self) -> None:
        self.in_flight: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def track(self, channel: str) -> AsyncIterator[None]:
        self.in_flight[channel] = self.in_flight.get(channel, 0) + 1
        try:
            yield
        finally:
            self.in_flight[channel] -= 1


# ---------------------------------------------------------------------------------------
# The client


def describe_failure(exc: BaseException) -> str:
    return SECRETS.scrub(f"{type(exc).__name__}: {exc}")[:ERROR_BODY_CHARS]


class ChatClient:
    """Chat-completions calls for the models of one endpoint, under a shared semaphore."""

    def __init__(
        self,
        endpoint: Endpoint,
        sampling: Sampling,
        cache: CallCache,
        *,
        semaphore: asyncio.Semaphore,
        http: httpx.AsyncClient | None = None,
        meter: ChannelMeter | None = None,
        retry_policy: RetryPolicy = LLM_RETRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        SECRETS.register(endpoint.api_key)  # scrubbed from every message this client builds
        self.endpoint = endpoint
        self.sampling = sampling
        self.cache = cache
        self._semaphore = semaphore
        self._http = http or httpx.AsyncClient(timeout=httpx.Timeout(sampling.timeout_s), trust_env=False)
        self._owns_http = http is None
        self._meter = meter or ChannelMeter()
        self._retry = retry_policy
        self._sleep = sleep

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
    ) -> ChatResult:
        body = build_chat_request(spec, self.sampling, messages, tools)
        envelope = await self.cache.call(LLM_CHANNEL, body, context, lambda: self._send(body))
        return result_from_envelope(envelope, context.step)

    async def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            response = await call_with_retries(lambda: self._post(body), self._retry, sleep=self._sleep)
        except Exception as exc:
            # whatever is left after the retries leaves as a CallError (AuthError for auth)
            kind = classify(exc)
            if isinstance(exc, AuthError) or (isinstance(exc, CallError) and kind != AUTH):
                raise
            message = exc.message if isinstance(exc, CallError) else describe_failure(exc)
            if kind == AUTH:
                raise AuthError(message) from exc
            raise CallError(kind, message) from exc
        return {"response": response, "latency_ms": round((time.perf_counter() - started) * 1000)}

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.endpoint.api_key is None:
            raise AuthError(f"no API key for {self.endpoint.key_env} (replay mode cannot call out)")
        headers = {"Authorization": f"Bearer {self.endpoint.api_key}"}
        async with self._semaphore, self._meter.track(LLM_CHANNEL):
            response = await self._http.post(f"{self.endpoint.base_url}/chat/completions", json=body, headers=headers)
        if response.status_code >= 400:
            text = SECRETS.scrub(response.text)[:ERROR_BODY_CHARS]
            kind = classify_status(response.status_code, text.lower())
            message = f"HTTP {response.status_code} from {self.endpoint.key_env} endpoint: {text}"
            if kind == AUTH:
                raise AuthError(message, status=response.status_code)
            raise CallError(
                kind, message, status=response.status_code, retry_after=parse_retry_after(response.headers.get("retry-after"))
            )
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MalformedResponseError(f"HTTP {response.status_code} body is not JSON") from exc
        return check_response_body(data)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()
