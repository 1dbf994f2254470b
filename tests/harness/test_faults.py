import asyncio

import httpx
import pytest

from oracleproto.harness import faults as errors
from oracleproto.harness.faults import (
    CALL_ERROR_KINDS,
    DETECTOR_RETRY,
    LLM_RETRY,
    SEARCH_RETRY,
    CallError,
    MalformedResponseError,
    RetryLog,
    RetryPolicy,
    call_with_retries,
    classify,
    parse_retry_after,
    within_deadline,
)
from oracleproto.schema import ERROR_KINDS


def status_error(status: int, body: str = "", headers: dict | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/chat/completions")
    response = httpx.Response(status, text=body, headers=headers, request=request)
    return httpx.HTTPStatusError(f"status {status}", request=request, response=response)


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.ConnectTimeout("slow"),
        httpx.WriteTimeout("slow"),
        httpx.WriteError("pipe"),
        httpx.PoolTimeout("pool"),
        httpx.RemoteProtocolError("cut"),
        asyncio.TimeoutError(),
        ConnectionResetError(),
        MalformedResponseError("not json"),
    ],
)
def test_transport_failures_are_network(exc):
    assert classify(exc) == "network"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, "", "auth"),
        (403, "forbidden", "auth"),
        (429, "", "rate_limit"),
        (500, "", "server_5xx"),
        (503, "", "server_5xx"),
        (599, "", "server_5xx"),
        (400, '{"error": {"code": "content_policy_violation"}}', "content_policy"),
        (400, "Output blocked by content filter", "content_policy"),
        (400, "request rejected: data_inspection_failed", "content_policy"),
        (400, "Input contains SENSITIVE words", "content_policy"),
        (400, "max_tokens must be an integer", "bad_request"),
        (432, "Usage limit exceeded for this plan", "rate_limit"),
        (404, "no such model", "unknown"),
        (408, "", "network"),
    ],
)
def test_http_status_classification(status, body, kind):
    assert classify(status_error(status, body)) == kind


def test_content_policy_is_checked_before_bad_request():
    # the same 400 status: only the body decides
    assert classify(status_error(400, "safety system refused")) == "content_policy"
    assert classify(status_error(400, "bad json")) == "bad_request"


def test_status_code_attribute_and_body_attribute():
    class SdkError(Exception):
        status_code = 400
        body = {"message": "flagged by the content filter"}

    assert classify(SdkError()) == "content_policy"


def test_anything_else_is_unknown():
    assert classify(ValueError("boom")) == "unknown"
    assert classify(KeyError("x")) == "unknown"


def test_call_error_keeps_its_kind():
    assert classify(CallError("bad_request", "x")) == "bad_request"
    with pytest.raises(ValueError, match="unknown call-error kind"):
        CallError("weird", "x")


def test_parse_retry_after():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0


def test_llm_policy_uses_table_20_sequences():
    assert [LLM_RETRY.delay("network", i) for i in range(6)] == [2, 5, 15, 30, 60, None]
    assert [LLM_RETRY.delay("rate_limit", i) for i in range(5)] == [10, 30, 60, 120, 300]
    assert [LLM_RETRY.delay("server_5xx", i) for i in range(5)] == [5, 15, 30, 60, 120]
    for kind in ("auth", "content_policy", "bad_request", "unknown"):
        assert LLM_RETRY.delay(kind, 0) is None


def test_retry_after_is_honoured_but_bounded():
    assert LLM_RETRY.delay("rate_limit", 0, retry_after=3.0) == 3.0
    assert LLM_RETRY.delay("rate_limit", 0, retry_after=10_000.0) == LLM_RETRY.max_retry_after
    # a provider that always sends Retry-After still runs out of retries
    assert LLM_RETRY.delay("rate_limit", 5, retry_after=1.0) is None


def test_search_policy_uses_all_three_backoffs():
    assert [SEARCH_RETRY.delay("network", i) for i in range(4)] == [2, 5, 15, None]


@pytest.mark.parametrize("policy", [LLM_RETRY, SEARCH_RETRY, DETECTOR_RETRY], ids=["llm", "search", "detector"])
def test_a_timeout_is_retried_like_network_and_an_oversized_body_never(policy):
    budget = policy.max_retries + 1
    assert [policy.delay("timeout", i) for i in range(budget)] == [policy.delay("network", i) for i in range(budget)]
    assert policy.delay("timeout", 0) is not None
    assert policy.delay("response_too_large", 0) is None


def test_every_call_error_kind_is_a_trial_error_kind():
    # the trial table's error column (validated by the scorer) must accept whatever a call can end in
    assert set(CALL_ERROR_KINDS) <= set(ERROR_KINDS)
    assert {"timeout", "response_too_large"} <= set(CALL_ERROR_KINDS)


def test_within_deadline_turns_the_expiry_into_a_timeout_call_error():
    async def stall():
        await asyncio.sleep(10)

    error, seconds = run(_elapsed(within_deadline(stall(), 0.05, "slow endpoint")))
    assert isinstance(error, CallError) and error.kind == "timeout" and "slow endpoint" in error.message
    assert seconds < 1


def test_within_deadline_passes_results_and_other_failures_through():
    async def answer():
        return 42

    async def fail():
        raise TimeoutError("an inner library's own timeout, not the deadline")

    assert run(within_deadline(answer(), 1, "x")) == 42
    with pytest.raises(TimeoutError, match="inner library"):
        run(within_deadline(fail(), 1, "x"))


def test_within_deadline_classifies_a_cancellation_a_library_converted():
    # httpcore/anyio may turn the deadline's CancelledError into an error of their own
    async def converts():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            raise httpx.ReadError("connection torn down") from None

    error, _ = run(_elapsed(within_deadline(converts(), 0.05, "x")))
    assert isinstance(error, CallError) and error.kind == "timeout"


async def _elapsed(awaitable):
    """(the exception raised or None, seconds taken)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        await awaitable
    except Exception as exc:
        return exc, loop.time() - started
    return None, loop.time() - started


def run(coro):
    return asyncio.run(coro)


def test_call_with_retries_shares_one_counter_across_kinds():
    failures = [errors.CallError("network", "a"), status_error(503), status_error(429, headers={"Retry-After": "4"})]
    waits: list[float] = []

    async def operation():
        if failures:
            raise failures.pop(0)
        return "ok"

    async def sleep(seconds):
        waits.append(seconds)

    log = RetryLog()
    assert run(call_with_retries(operation, LLM_RETRY, sleep=sleep, log=log)) == "ok"
    # attempt 0 network -> 2; attempt 1 5xx -> 15; attempt 2 429 with Retry-After -> 4
    assert waits == [2, 15, 4.0]
    assert [kind for kind, _ in log.retries] == ["network", "server_5xx", "rate_limit"]


def test_call_with_retries_gives_up_and_reraises_last_failure():
    calls = 0

    async def operation():
        nonlocal calls
        calls += 1
        raise status_error(500)

    async def sleep(seconds):
        pass

    policy = RetryPolicy(backoff={"server_5xx": (1, 2)}, max_retries=2)
    with pytest.raises(httpx.HTTPStatusError):
        run(call_with_retries(operation, policy, sleep=sleep))
    assert calls == 3


def test_call_with_retries_does_not_retry_non_retryable():
    calls = 0

    async def operation():
        nonlocal calls
        calls += 1
        raise status_error(400, "bad")

    with pytest.raises(httpx.HTTPStatusError):
        run(call_with_retries(operation, LLM_RETRY))
    assert calls == 1
