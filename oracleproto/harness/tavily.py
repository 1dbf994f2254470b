"""The ``tavily`` search backend: tavily-python's async client behind the key pool.

Each search sends ``end_date = χ`` with the Table 12 settings. The bounded retry loop
(Table 14 / REFERENCE-BEHAVIOUR §5.3, with the defects of §12.10 fixed):

- ``auth`` (401/403): blacklist the key, swap at once; no wait, no retry budget used;
- ``rate_limit`` (429, 432/433, or any 4xx whose body says the quota is spent): cool the
  key down for its ``Retry-After`` (else the pool cooldown) and swap at once; when every
  key is cooling, wait for the first one within the retry budget;
- ``network`` / ``timeout`` / ``server_5xx`` (resets, a 200 that is not a JSON object, no
  complete answer within ``timeout_s``): wait 2, 5, 15 s (all three entries used: four
  attempts) and retry, key untouched;
- anything else (400, 404, ``response_too_large``, …): give up at once, retrying cannot help.

Each request is held to ``search_options.timeout_s`` from connect to last byte and its
body to ``search_options.max_response_bytes`` (counted while it streams in, so an endless
or oversized body ends at the cap as a ``response_too_large`` search error).

The loop never raises: a search that fails for good becomes an outcome with ``error``
(``tavily_error`` or ``all_keys_exhausted``), its last fault kind and the list of faults
met on the way. The key travels only in the ``Authorization`` header that tavily-python
sets; the request recorded in the call cache is the JSON body, which has no key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import date
from typing import Any

import httpx
from tavily import AsyncTavilyClient
from tavily.errors import TimeoutError as TavilyTimeoutError

from oracleproto.harness.bounded_http import tls_context
from oracleproto.harness.detector import LeakDetector, screened_outcome
from oracleproto.harness.faults import (
    AUTH,
    NETWORK,
    RATE_LIMIT,
    RESPONSE_TOO_LARGE,
    SEARCH_RETRY,
    SERVER_5XX,
    TIMEOUT,
    UNKNOWN,
    CallError,
    MalformedResponseError,
    RetryPolicy,
    classify,
    retry_after_of,
    within_deadline,
)
from oracleproto.harness.keypool import (
    AllKeysExhausted,
    KeyLease,
    KeyPool,
    read_keys,
    shared_pool,
)
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import (
    ALL_KEYS_EXHAUSTED,
    TAVILY_ERROR,
    SearchHit,
    SearchOutcome,
    SearchSettings,
    check_detector,
    check_end_date,
    record_or_replay,
    register_backend,
    truncate,
)

log = logging.getLogger(__name__)

KEY_ENV = "TAVILY_API_KEY"
BASE_URL_ENV = "TAVILY_BASE_URL"
DEFAULT_BASE_URL = "https://api.tavily.com"
SEARCH_CHANNEL = "search"
QUOTA_STATUSES = (432, 433)  # Tavily: plan / pay-as-you-go limit exceeded
RETRIED_KINDS = (NETWORK, TIMEOUT, SERVER_5XX)


def fault_kind(exc: BaseException) -> str:
    """Table 21 kind of a failed Tavily request, with Tavily's own quota statuses as rate limits."""
    if isinstance(exc, TavilyTimeoutError):  # tavily-python re-raises httpx timeouts as its own type
        return NETWORK
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in QUOTA_STATUSES:
        return RATE_LIMIT
    return classify(exc)


class _CappedStream(httpx.AsyncByteStream):
    """A response body stream that raises ``response_too_large`` once past ``max_bytes``."""

    def __init__(self, stream: httpx.AsyncByteStream, max_bytes: int) -> None:
        self._stream, self._max_bytes = stream, max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._stream:
            size += len(chunk)
            if size > self._max_bytes:
                raise _too_large(self._max_bytes)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def _too_large(max_bytes: int) -> CallError:
    return CallError(RESPONSE_TOO_LARGE, f"Tavily search: response body exceeds {max_bytes} bytes; reading stopped")


def _response_check(max_bytes: int) -> Callable[[httpx.Response], Awaitable[None]]:
    """The httpx response hook of a Tavily client: the body read within ``max_bytes``, then
    :func:`_reject_unusable_response`.

    The cap is counted while the body streams in (an endless body stops at the cap, not at
    the deadline). The client asks for ``Accept-Encoding: identity``, and a compressed
    reply is refused before it is read: decompression would happen after the count, so a
    small compressed body could otherwise expand to many times the cap in memory.
    """

    async def check(response: httpx.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            # the same request gets the same reply: a fault that is not retried (nor a transport one)
            raise CallError(UNKNOWN, f"Tavily search: a {encoding!r}-encoded reply to a request for identity encoding")
        response.stream = _CappedStream(response.stream, max_bytes)  # type: ignore[arg-type]
        await response.aread()
        _reject_unusable_response(response)

    return check


def _reject_unusable_response(response: httpx.Response) -> None:
    """Raise with the status, headers and body tavily-python would drop (the body is read).

    tavily-python maps statuses to exception types that lose the status code (403 and 432
    share one) and the Retry-After header; raising here keeps both for the retry loop.
    """
    if response.status_code != 200:
        raise httpx.HTTPStatusError(f"Tavily answered HTTP {response.status_code}", request=response.request, response=response)
    try:
        body = json.loads(response.content)
    except ValueError as exc:
        raise MalformedResponseError("Tavily answered 200 with a body that is not JSON") from exc
    if not isinstance(body, dict) or not isinstance(body.get("results", []), list):
        raise MalformedResponseError("Tavily answered 200 without a results list")


def normalise_results(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Tavily results reduced to the fields a hit carries (items that are not objects skipped)."""
    results = []
    for item in body.get("results") or []:
        if not isinstance(item, dict):
            continue
        raw_content = item.get("raw_content")
        score = item.get("score")
        published = item.get("published_date")
        results.append(
            {
                "title": str(item.get("title") or ""),
                "url": str(item.get("url") or ""),
                "content": str(item.get("content") or ""),
                "published_date": str(published) if published else None,
                "score": float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
                "raw_content": raw_content if isinstance(raw_content, str) and raw_content else None,
            }
        )
    return results


class TavilyBackend:
    name = "tavily"

    def __init__(
        self,
        settings: SearchSettings,
        cache: CallCache,
        detector: LeakDetector | None,
        *,
        environ: Mapping[str, str] | None = None,
        pool: KeyPool | None = None,
        retry: RetryPolicy = SEARCH_RETRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        check_detector(settings, detector)
        environ = os.environ if environ is None else environ
        self.settings = settings
        self._cache = cache
        self._detector = detector
        self._retry = retry
        self._sleep = sleep
        self._transport = transport
        self._base_url = environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        # A replay calls nothing, so it needs no key; every other mode must have one.
        if pool is None and cache.mode != "replay":
            pool = shared_pool(read_keys(KEY_ENV, environ), settings.key_cooldown_s)
        self._pool = pool
        self._clients: dict[int, AsyncTavilyClient] = {}
        self._http: list[httpx.AsyncClient] = []

    def request_body(self, query: str, end_date: date) -> dict[str, Any]:
        """The JSON body tavily-python sends for this search (None values left out, no key)."""
        s = self.settings
        body: dict[str, Any] = {
            "query": query,
            "search_depth": s.search_depth,
            "end_date": end_date.isoformat(),
            "include_raw_content": s.include_raw_content,
            "max_results": s.max_results,
        }
        if s.include_answer:
            body["include_answer"] = s.include_answer
        return body

    async def search(self, query: str, end_date: date, context: CallContext) -> SearchOutcome:
        cutoff = check_end_date(end_date)
        request = self.request_body(query, cutoff)
        record = await record_or_replay(
            self._cache,
            SEARCH_CHANNEL,
            request,
            context,
            lambda: self._fetch(request, context),
            failure=search_failure,
        )
        fetch_audit = {"backend": self.name, "faults": record["faults"], "error_kind": record.get("error_kind")}
        if record.get("error") is not None:
            return SearchOutcome(
                query=query,
                end_date=cutoff,
                hits=[],
                answer=None,
                error=record["error"],
                message=record["message"],
                audit={**fetch_audit, "n_results_raw": 0, "n_results_kept": 0, "published_dates": []},
            )
        limit = self.settings.raw_content_max_chars
        hits = [SearchHit(**{**r, "raw_content": truncate(r["raw_content"], limit)}) for r in record["results"]]
        return await screened_outcome(
            query, cutoff, hits, record.get("answer"), settings=self.settings, detector=self._detector, context=context,
            audit=fetch_audit, cost_usd=record["credits"] * self.settings.usd_per_credit,
        )

    async def _fetch(self, request: dict[str, Any], context: CallContext) -> dict[str, Any]:
        """The retry loop of the module docstring; returns a JSON-able record, never raises."""
        if self._pool is None:
            raise RuntimeError("tavily backend built for replay has no keys to call with")
        faults: list[str] = []
        waits = 0  # network-class retries plus waits for a cooling key: one shared budget
        # Every pass either spends the wait budget or retires a key for a while, so this
        # bound (budget + rotations per key) is never the binding one in practice.
        for _ in range((self._retry.max_retries + 1) * (len(self._pool) + 1)):
            try:
                lease = self._pool.acquire()
            except AllKeysExhausted as exhausted:
                wait = None if exhausted.retry_in is None else self._retry.delay(RATE_LIMIT, waits, exhausted.retry_in)
                if wait is None:
                    kind = AUTH if exhausted.retry_in is None else RATE_LIMIT
                    return _failure(ALL_KEYS_EXHAUSTED, kind, faults, "no Tavily key is usable (rejected or rate-limited)")
                waits += 1
                await self._sleep(wait)
                continue
            try:
                body = await self._post(lease, request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                kind = fault_kind(exc)
                faults.append(kind)
                log.warning("tavily search fault %s (key #%d) for %s", kind, lease.index, context.describe())
                if kind in (AUTH, RATE_LIMIT):
                    self._pool.report(lease, kind, retry_after_of(exc))
                    continue
                wait = self._retry.delay(kind, waits) if kind in RETRIED_KINDS else None
                if wait is None:
                    return _failure(TAVILY_ERROR, kind, faults, f"search failed ({kind}: {_describe(exc)})", _detail(exc))
                waits += 1
                await self._sleep(wait)
                continue
            credits = 2 if self.settings.search_depth == "advanced" else 1
            return {
                "results": normalise_results(body),
                "answer": body.get("answer") if isinstance(body.get("answer"), str) else None,
                "credits": credits,
                "faults": faults,
                "error": None,
            }
        return _failure(TAVILY_ERROR, faults[-1] if faults else None, faults, "search failed: retry budget spent")

    async def _post(self, lease: KeyLease, request: dict[str, Any]) -> dict[str, Any]:
        client = self._clients.get(lease.index)
        if client is None:
            http = httpx.AsyncClient(
                base_url=self._base_url,
                transport=self._transport,
                headers={"Accept-Encoding": "identity"},  # what the size cap counts is what is held
                event_hooks={"response": [_response_check(self.settings.max_response_bytes)]},
                verify=tls_context(),
            )
            self._http.append(http)
            client = self._clients[lease.index] = AsyncTavilyClient(api_key=lease.key, api_base_url=self._base_url, client=http)
        # timeout_s bounds the whole search (connect to last byte); the same value handed to
        # tavily-python only sets httpx's per-read limits, which a trickling server never trips
        timeout = self.settings.timeout_s
        return await within_deadline(client.search(**request, timeout=timeout), timeout, "Tavily search")

    async def aclose(self) -> None:
        for http in self._http:
            await http.aclose()
        self._http.clear()
        self._clients.clear()


def _failure(error: str, kind: str | None, faults: list[str], message: str, detail: str = "") -> dict[str, Any]:
    record = {"error": error, "error_kind": kind, "message": message, "faults": faults}
    return {**record, "detail": detail} if detail else record


def search_failure(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """(fault kind, detail) of a search record that is a failure, None for results."""
    if record.get("error") is None:
        return None
    return str(record.get("error_kind") or record["error"]), str(record.get("detail") or "")


def _describe(exc: BaseException) -> str:
    """A key-free description: the HTTP status when there is one, else the exception type."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return f"HTTP {status}" if status is not None else type(exc).__name__


def _detail(exc: BaseException) -> str:
    """:func:`_describe`, or the message of our own deadline and size-cap errors (they say which)."""
    return exc.message if isinstance(exc, CallError) else _describe(exc)


@register_backend("tavily")
def _make_tavily(settings: SearchSettings, cache: CallCache, detector: LeakDetector | None) -> TavilyBackend:
    return TavilyBackend(settings, cache, detector)
