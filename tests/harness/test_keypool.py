import pytest

from oracleproto.errors import ConfigError
from oracleproto.harness.keypool import (
    AllKeysExhausted,
    KeyPool,
    read_keys,
    shared_pool,
)
from oracleproto.harness.settings import SECRETS


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_least_used_key_first_ties_in_list_order():
    pool = KeyPool(["a", "b", "c"])
    assert [pool.acquire().key for _ in range(7)] == ["a", "b", "c", "a", "b", "c", "a"]
    assert pool.usage() == [3, 2, 2]


def test_auth_blacklists_for_good():
    clock = FakeClock()
    pool = KeyPool(["a", "b"], clock=clock)
    pool.report(pool.acquire(), "auth")
    clock.now += 10_000
    assert {pool.acquire().key for _ in range(3)} == {"b"}


def test_rate_limit_cools_down_for_retry_after_else_default():
    clock = FakeClock()
    pool = KeyPool(["a", "b"], cooldown_s=60, clock=clock)
    pool.report(pool.acquire(), "rate_limit", retry_after=5)  # a
    pool.report(pool.acquire(), "rate_limit")  # b: default 60 s
    with pytest.raises(AllKeysExhausted) as exhausted:
        pool.acquire()
    assert exhausted.value.retry_in == 5
    assert (exhausted.value.n_blacklisted, exhausted.value.n_cooling) == (0, 2)
    clock.now += 5
    assert pool.acquire().key == "a"
    clock.now += 54
    assert pool.acquire().key == "a"  # b still cooling at +59 s
    clock.now += 1
    assert pool.acquire().key == "b"


def test_other_failures_leave_the_key_usable():
    pool = KeyPool(["a"])
    pool.report(pool.acquire(), "server_5xx")
    pool.report(pool.acquire(), "network")
    assert pool.acquire().key == "a"


def test_all_blacklisted_has_no_retry_time():
    pool = KeyPool(["a", "b"])
    pool.report(pool.acquire(), "auth")
    pool.report(pool.acquire(), "auth")
    with pytest.raises(AllKeysExhausted) as exhausted:
        pool.acquire()
    assert exhausted.value.retry_in is None
    assert "a" not in str(exhausted.value).split() and "2 rejected" in str(exhausted.value)


def test_repr_and_lease_hide_keys():
    pool = KeyPool(["tvly-secret-1", "tvly-secret-2"])
    lease = pool.acquire()
    assert "secret" not in repr(pool) and "secret" not in repr(lease)


def test_read_keys_splits_dedupes_and_registers_for_scrubbing():
    keys = read_keys("TAVILY_API_KEY", {"TAVILY_API_KEY": " tvly-k1 , tvly-k2,tvly-k1,, "})
    assert keys == ("tvly-k1", "tvly-k2")
    assert "tvly-k2" not in SECRETS.scrub("sent with tvly-k2")


@pytest.mark.parametrize("value", [None, "", "  ", " , "])
def test_missing_key_is_a_startup_error_naming_the_variable(value):
    environ = {} if value is None else {"TAVILY_API_KEY": value}
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        read_keys("TAVILY_API_KEY", environ)


@pytest.mark.parametrize("placeholder", ["REPLACE_ME", "changeme", "PUT_YOUR_KEY_HERE"])
def test_placeholder_key_is_an_error_without_echoing_other_keys(placeholder):
    with pytest.raises(ConfigError, match="TAVILY_API_KEY: entry 2") as error:
        read_keys("TAVILY_API_KEY", {"TAVILY_API_KEY": f"tvly-real-key,{placeholder}"})
    assert "tvly-real-key" not in str(error.value)


def test_shared_pool_is_one_per_key_set():
    first = shared_pool(("tvly-shared-a", "tvly-shared-b"))
    assert shared_pool(["tvly-shared-a", "tvly-shared-b"]) is first
    assert shared_pool(("tvly-shared-b",)) is not first


def test_pool_rejects_empty_or_repeated_keys():
    with pytest.raises(ValueError):
        KeyPool([])
    with pytest.raises(ValueError):
        KeyPool(["a", "a"])
