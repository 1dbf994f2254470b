"""The Tavily API-key pool (paper Table 14) and reading its keys from the environment.

Pool semantics (REFERENCE-BEHAVIOUR §5.4): least-used healthy key first (ties by list
order); ``auth`` (401/403) blacklists a key for the life of the process; ``rate_limit``
(429 or a quota-exceeded body) cools it down for ``Retry-After`` seconds, else for
``cooldown_s``; other failures leave it alone. When no key is usable,
:class:`AllKeysExhausted` says how long until the first cooling key is back (None when
every key is blacklisted), so the caller can wait within its retry budget.

Keys never leave this module in a message: errors, ``repr`` and logs name a key by its
position in the pool (the config snapshot redacts the whole variable as one value).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from oracleproto.config import SearchOptions
from oracleproto.errors import ConfigError
from oracleproto.harness.faults import AUTH, RATE_LIMIT
from oracleproto.harness.settings import SECRETS, is_placeholder

COOLDOWN_S = SearchOptions().key_cooldown_s  # evaluate.search_options.key_cooldown_s


def read_keys(name: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Comma-separated keys from ``name``, de-duplicated in order.

    Unset, blank or placeholder entries are start-up errors naming the variable (never the
    value); every key is registered with :data:`SECRETS` so logs are scrubbed of it.
    """
    raw = environ.get(name) or ""
    keys = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    if not keys:
        raise ConfigError(f"environment variable {name} is not set (one key, or several separated by commas)")
    for position, key in enumerate(keys, start=1):
        if is_placeholder(key):
            raise ConfigError(f"environment variable {name}: entry {position} holds a placeholder, not a key")
    SECRETS.register(*keys)
    return keys


class AllKeysExhausted(RuntimeError):
    """No key is usable now; ``retry_in`` is the wait until one is, or None if none ever will."""

    def __init__(self, n_blacklisted: int, n_cooling: int, retry_in: float | None):
        super().__init__(f"no API key usable: {n_blacklisted} rejected (auth), {n_cooling} cooling down (rate limit)")
        self.n_blacklisted = n_blacklisted
        self.n_cooling = n_cooling
        self.retry_in = retry_in


@dataclass(frozen=True)
class KeyLease:
    """One acquired key; ``key`` is hidden from ``repr`` so a lease can be logged."""

    index: int
    key: str = field(repr=False)


@dataclass
class _KeyState:
    used: int = 0
    blacklisted: bool = False
    cooling_until: float = float("-inf")


class KeyPool:
    """Least-used rotation over a fixed set of keys with cooldown and blacklist."""

    def __init__(self, keys: Sequence[str], cooldown_s: float = COOLDOWN_S, clock: Callable[[], float] = time.monotonic):
        if not keys:
            raise ValueError("a key pool needs at least one key")
        if len(set(keys)) != len(keys):
            raise ValueError("a key pool's keys must be distinct")
        self._keys = tuple(keys)
        self._states = [_KeyState() for _ in self._keys]
        self.cooldown_s = cooldown_s
        self._clock = clock

    def __repr__(self) -> str:
        return f"KeyPool(size={len(self._keys)}, cooldown_s={self.cooldown_s})"

    def __len__(self) -> int:
        return len(self._keys)

    def acquire(self) -> KeyLease:
        """The least-used usable key (first in list order on ties); counts one use."""
        now = self._clock()
        usable = [i for i, s in enumerate(self._states) if not s.blacklisted and s.cooling_until <= now]
        if not usable:
            cooling = [s.cooling_until for s in self._states if not s.blacklisted]
            retry_in = max(min(cooling) - now, 0.0) if cooling else None
            raise AllKeysExhausted(len(self._states) - len(cooling), len(cooling), retry_in)
        index = min(usable, key=lambda i: self._states[i].used)
        self._states[index].used += 1
        return KeyLease(index, self._keys[index])

    def report(self, lease: KeyLease, kind: str, retry_after: float | None = None) -> None:
        """Update the key's state after a failure of ``kind`` (a Table 21 kind)."""
        state = self._states[lease.index]
        if kind == AUTH:
            state.blacklisted = True
        elif kind == RATE_LIMIT:
            wait = self.cooldown_s if retry_after is None else retry_after
            state.cooling_until = max(state.cooling_until, self._clock() + wait)

    def usage(self) -> list[int]:
        """Uses per key position (for tests and logs; no key material)."""
        return [s.used for s in self._states]


# One pool per key set per process, shared by every backend (and grid cell) that uses it,
# so usage counts and cooldowns are global to the run.
_SHARED: dict[tuple[str, ...], KeyPool] = {}


def shared_pool(keys: Sequence[str], cooldown_s: float = COOLDOWN_S) -> KeyPool:
    """The process-wide pool for ``keys`` (the first caller's cooldown wins)."""
    signature = tuple(keys)
    pool = _SHARED.get(signature)
    if pool is None:
        pool = _SHARED[signature] = KeyPool(signature, cooldown_s)
    return pool
