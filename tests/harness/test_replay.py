import asyncio

import pytest

from oracleproto.errors import InputError
from oracleproto.harness.faults import CallError
from oracleproto.harness.replay import (
    CallCache,
    CallContext,
    ReplayMissError,
    call_key,
    canonical_json,
)

CTX = CallContext("m", "q1", 1, 2, 3)


def run(coro):
    return asyncio.run(coro)


async def answer():
    return {"ok": 1}


def test_key_depends_on_request_and_place():
    base = call_key("llm", {"a": 1}, CTX)
    assert call_key("llm", {"a": 1}, CTX, canonical_json({"a": 1})) == base
    assert call_key("llm", {"a": 2}, CTX) != base
    assert call_key("llm", {"a": 1}, CallContext("m", "q1", 1, 2, 4)) != base
    assert call_key("search", {"a": 1}, CTX) != base


def test_deferred_stores_wait_for_flush(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = CallCache(path, "record", deferred=True)
    assert run(cache.call("llm", {"a": 1}, CTX, answer)) == {"ok": 1}
    # visible to its own lookups at once, to other readers only after flush
    assert cache.lookup(call_key("llm", {"a": 1}, CTX)) == {"ok": 1}
    with pytest.raises(ReplayMissError):
        run(CallCache(path, "replay").call("llm", {"a": 1}, CTX, answer))
    cache.flush()
    assert run(CallCache(path, "replay").call("llm", {"a": 1}, CTX, answer)) == {"ok": 1}
    cache.close()


def test_immediate_stores_by_default(tmp_path):
    path = tmp_path / "c.sqlite"
    run(CallCache(path, "record").call("llm", {"a": 1}, CTX, answer))
    assert run(CallCache(path, "replay").call("llm", {"a": 1}, CTX, answer)) == {"ok": 1}


def test_off_mode_always_calls_and_stores_nothing():
    calls = []

    async def send():
        calls.append(1)
        return {"n": len(calls)}

    cache = CallCache(None, "off")
    assert run(cache.call("llm", {}, CTX, send)) == {"n": 1}
    assert run(cache.call("llm", {}, CTX, send)) == {"n": 2}


def test_replay_of_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no recorded calls"):  # nothing was recorded: not a miss mid-run
        CallCache(tmp_path / "none.sqlite", "replay")


def test_recorded_error_entry(tmp_path):
    path = tmp_path / "c.sqlite"

    async def refuse():
        raise CallError("bad_request", "nope", status=400)

    with pytest.raises(CallError):
        run(CallCache(path, "record").call("llm", {"a": 1}, CTX, refuse))
    with pytest.raises(CallError) as info:
        run(CallCache(path, "replay").call("llm", {"a": 1}, CTX, refuse))
    assert (info.value.kind, info.value.message, info.value.status) == ("bad_request", "nope", 400)
