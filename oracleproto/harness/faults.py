"""Call-error classification (paper Table 21) and per-channel retry policy (Table 20).

Every outbound call (main LLM, search, detector) that fails is reduced to one of nine
kinds by :func:`classify`: the seven of Table 21, plus ``timeout`` (no complete response
within the call's overall deadline, :func:`within_deadline`) and ``response_too_large`` (a
body past the size cap). The order of the checks matters: transport failures first, then
the HTTP status, and for a 400 the content-policy needles *before* the generic
``bad_request`` so a moderation refusal is never filed as a malformed request.

Retries follow a :class:`RetryPolicy`: one shared attempt counter per call indexes the
backoff sequence of whichever retryable kind just failed, a numeric or HTTP-date
``Retry-After`` replaces the table value (capped), and the number of retries is bounded
even when the provider always sends ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

NETWORK = "network"
RATE_LIMIT = "rate_limit"
SERVER_5XX = "server_5xx"
AUTH = "auth"
CONTENT_POLICY = "content_policy"
BAD_REQUEST = "bad_request"
UNKNOWN = "unknown"
# Beyond Table 21: a call past its overall deadline is retried like a network fault (the
# provider may just be slow this once); a body past the size cap is not (the same request
# would get the same oversized answer).
TIMEOUT = "timeout"
RESPONSE_TOO_LARGE = "response_too_large"

CALL_ERROR_KINDS = (NETWORK, RATE_LIMIT, SERVER_5XX, AUTH, CONTENT_POLICY, BAD_REQUEST, UNKNOWN, TIMEOUT, RESPONSE_TOO_LARGE)
RETRYABLE_KINDS = frozenset({NETWORK, RATE_LIMIT, SERVER_5XX, TIMEOUT})

# Lower-cased substrings of a 400 body that mark a provider's moderation refusal.
CONTENT_POLICY_NEEDLES = (
    "content_policy",
    "content policy",
    "content filter",
    "content_filter",
    "safety",
    "data_inspection_failed",
    "inappropriate content",
    "sensitive",
)
# Lower-cased substrings of a non-429 4xx body that mean "quota exhausted" (Table 14).
QUOTA_NEEDLES = ("quota", "usage limit", "rate limit", "rate_limit", "exceeded your", "too many requests")

# Transport failures: the request may never have reached the provider, so a retry is safe.
_NETWORK_EXCEPTIONS: tuple[type[BaseException], ...] = (
    httpx.TimeoutException,  # ConnectTimeout, ReadTimeout, WriteTimeout, PoolTimeout
    httpx.NetworkError,  # ConnectError, ReadError, WriteError, CloseError
    httpx.RemoteProtocolError,
    asyncio.TimeoutError,
    ConnectionError,
)


class CallError(Exception):
    """A call that failed for good (after retries), with its classified kind.

    ``message`` is safe to log and store: callers build it from status codes and
    provider bodies that have already been scrubbed of secrets.
    """

    def __init__(self, kind: str, message: str, *, status: int | None = None, retry_after: float | None = None):
        if kind not in CALL_ERROR_KINDS:
            raise ValueError(f"unknown call-error kind {kind!r}; expected one of {CALL_ERROR_KINDS}")
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after


class AuthError(CallError):
    """401/403 from the evaluated model's endpoint: the whole run must stop."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(AUTH, message, status=status)


class MalformedResponseError(Exception):
    """An HTTP 200 whose body is not the JSON the protocol promises.

    Classified as ``network``: the body was cut or garbled in transit, so a retry is the
    right response (Table 14 "non-JSON 200", Table 17 "HTTP 200 with non-JSON body").
    """


def status_code_of(exc: BaseException) -> int | None:
    """HTTP status carried by an exception (``exc.response.status_code`` or ``exc.status_code``)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status is None:
        status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def body_text_of(exc: BaseException) -> str:
    """Lower-cased error body: response text, else JSON of ``exc.body``, else ``str(exc)``."""
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            text = response.text
        except (httpx.ResponseNotRead, AttributeError, UnicodeDecodeError):
            text = ""
        if text:
            return text.lower()
    body = getattr(exc, "body", None)
    if body is not None:
        try:
            return json.dumps(body, ensure_ascii=False).lower()
        except (TypeError, ValueError):
            return str(body).lower()
    return str(exc).lower()


def classify_status(status: int, body: str) -> str:
    """Kind of an HTTP error status given its (lower-cased) body."""
    if status in (401, 403):
        return AUTH
    if status == 429:
        return RATE_LIMIT
    if status == 408:
        return NETWORK
    if 500 <= status <= 599:
        return SERVER_5XX
    if status == 400:
        if any(needle in body for needle in CONTENT_POLICY_NEEDLES):
            return CONTENT_POLICY
        return BAD_REQUEST
    if 400 <= status <= 499 and any(needle in body for needle in QUOTA_NEEDLES):
        return RATE_LIMIT
    return UNKNOWN


def classify(exc: BaseException) -> str:
    """One of :data:`CALL_ERROR_KINDS` for any exception raised by a call (Table 21)."""
    if isinstance(exc, CallError):
        return exc.kind
    if isinstance(exc, (MalformedResponseError, *_NETWORK_EXCEPTIONS)):
        return NETWORK
    status = status_code_of(exc)
    if status is not None:
        return classify_status(status, body_text_of(exc))
    return UNKNOWN


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date); None if absent/bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(seconds, 0.0)


def retry_after_of(exc: BaseException) -> float | None:
    """The wait an exception asks for: ``exc.retry_after`` or its response's Retry-After header."""
    explicit = getattr(exc, "retry_after", None)
    if isinstance(explicit, (int, float)):
        return float(explicit)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    return parse_retry_after(headers.get("retry-after"))


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff sequences per retryable kind and the retry budget of one channel.

    ``delay(kind, attempt)`` gives the wait before retry number ``attempt`` (0-based) or
    None when the call must give up: kind not retryable or the budget is spent.
    """

    backoff: Mapping[str, tuple[float, ...]]
    max_retries: int
    max_retry_after: float = 300.0
    honour_retry_after: bool = True

    def delay(self, kind: str, attempt: int, retry_after: float | None = None) -> float | None:
        sequence = self.backoff.get(kind)
        if not sequence or attempt >= self.max_retries:
            return None
        if kind == RATE_LIMIT and self.honour_retry_after and retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return sequence[min(attempt, len(sequence) - 1)]


LLM_RETRY = RetryPolicy(
    backoff={
        NETWORK: (2, 5, 15, 30, 60),
        TIMEOUT: (2, 5, 15, 30, 60),
        RATE_LIMIT: (10, 30, 60, 120, 300),
        SERVER_5XX: (5, 15, 30, 60, 120),
    },
    max_retries=5,
)
SEARCH_RETRY = RetryPolicy(
    backoff={NETWORK: (2, 5, 15), TIMEOUT: (2, 5, 15), SERVER_5XX: (2, 5, 15), RATE_LIMIT: (2, 5, 15)},
    max_retries=3,
)
DETECTOR_RETRY = RetryPolicy(
    backoff={NETWORK: (2, 5, 15), TIMEOUT: (2, 5, 15), SERVER_5XX: (2, 5, 15), RATE_LIMIT: (2, 5, 15)},
    max_retries=3,
)

T = TypeVar("T")


async def within_deadline(operation: Awaitable[T], seconds: float, what: str) -> T:
    """``await operation``, or a ``timeout`` :class:`CallError` once ``seconds`` have passed.

    One wall-clock limit over the whole exchange (connect, send, every read), where an
    HTTP client's per-read timeouts restart on each byte: a server that trickles its
    headers or an endless body one byte at a time never trips those. ``what`` names the
    call in the message (it must hold no secret).
    """
    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            return await operation
    except Exception as exc:
        # asyncio turns its own cancellation into TimeoutError, but a library under it may
        # have converted the CancelledError into an error of its own on the way out
        if deadline.expired():
            raise CallError(TIMEOUT, f"{what}: no complete response within {seconds:g} s") from exc
        raise


@dataclass
class RetryLog:
    """What a retried call went through: one (kind, wait seconds) per retry."""

    retries: list[tuple[str, float]] = field(default_factory=list)


async def call_with_retries(
    operation: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    log: RetryLog | None = None,
) -> T:
    """Run ``operation`` until it succeeds or its failure is not retryable / out of budget.

    Retries only :data:`RETRYABLE_KINDS`; the last failure is re-raised unchanged so the
    caller can classify it. ``sleep`` is injectable so tests can record the waits.
    """
    attempt = 0
    while True:
        try:
            return await operation()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            kind = classify(exc)
            wait = policy.delay(kind, attempt, retry_after_of(exc))
            if wait is None:
                raise
            if log is not None:
                log.retries.append((kind, wait))
            attempt += 1
            await sleep(wait)
