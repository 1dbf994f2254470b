"""Record/replay of every outbound call (model, search, detector).

Each call is stored under the sha256 of its canonical request plus where it happened
(model, q_id, trial, step, seq). Modes:
- ``record`` (default): serve from the cache when present, otherwise call and store;
- ``replay``: never call out; a miss is a :class:`ReplayMissError` naming the call;
- ``off``: always call, store nothing.
Secrets never enter a request passed here: callers pass the request body without keys
(keys travel in headers added by the transport).

A call that ends in a classified :class:`~oracleproto.harness.faults.CallError` (after its
retries) is recorded too, except ``auth``: replay re-raises the same error, so a run with
error rows replays byte-identically. In ``record`` mode a recorded error is *not* served:
the call is tried again, which is what resuming a run with error rows needs.

Every *live* call (one that went out, in ``record`` or ``off`` mode) runs through
:meth:`CallCache.live`, which tells the cache's ``observer`` how it ended: the fault kind
of a final :class:`CallError` or of a failure record (``failure``), None for a success.
The run counts consecutive transport failures per channel from these reports.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from oracleproto.config import CacheMode
from oracleproto.errors import InputError, RunAborted
from oracleproto.harness.faults import AUTH, TIMEOUT, CallError

CACHE_MODES: tuple[str, ...] = get_args(CacheMode)
ERROR_ENTRY = "__call_error__"

# The outcome of a failed call as a failure record tells it: (fault kind, short detail), or None.
FailureOf = Callable[[dict[str, Any]], "tuple[str, str] | None"]
# Told the end of every live call: (channel, context, fault kind or None, short detail).
Observer = Callable[[str, "CallContext", "str | None", str], None]


class ReplayMissError(RunAborted):
    """Replay mode met a call that was never recorded."""


@dataclass(frozen=True)
class CallContext:
    """Where a call happens: one trial's step; ``seq`` orders calls within a step."""

    model: str
    q_id: str
    trial: int
    step: int
    seq: int = 0

    def describe(self) -> str:
        return f"model={self.model} q_id={self.q_id} trial={self.trial} step={self.step} seq={self.seq}"


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def canonical_json(obj: Any) -> str:
    return _CANONICAL.encode(obj)


def call_key(channel: str, request: dict[str, Any], context: CallContext, request_text: str | None = None) -> str:
    """sha256 of where the call happens plus the canonical request.

    ``request_text`` is ``canonical_json(request)`` when the caller already has it (the
    model client serialises each body once, for the key and for the wire).
    """
    where = [channel, context.model, context.q_id, context.trial, context.step, context.seq]
    digest = hashlib.sha256(_COMPACT.encode(where).encode())
    digest.update(b"\n")
    digest.update((request_text if request_text is not None else canonical_json(request)).encode())
    return digest.hexdigest()


class CallCache:
    """A SQLite-backed (WAL) store of call responses keyed by :func:`call_key`."""

    def __init__(self, path: str | Path | None, mode: CacheMode, *, deferred: bool = False) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {CACHE_MODES}, got {mode!r}")
        if mode != "off" and path is None:
            raise ValueError(f"cache mode {mode!r} needs a cache path")
        self.mode: CacheMode = mode
        self._conn: sqlite3.Connection | None = None
        if mode != "off":
            assert path is not None
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            if mode == "replay" and not Path(path).exists():
                raise InputError(f"replay mode: no recorded calls at {path}")
            try:
                self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, channel TEXT NOT NULL, "
                    "context TEXT NOT NULL, response TEXT NOT NULL)"
                )
                keys = {k for (k,) in self._conn.execute("SELECT key FROM calls")}
            except sqlite3.DatabaseError as exc:
                raise InputError(f"{path} is not a usable call cache ({exc}); move it aside or name another --cache-file") from None
        # deferred: stores wait for flush() and go in one transaction (the evaluator flushes
        # before committing each trial); otherwise every store is written at once
        self._deferred = deferred
        self._pending: dict[str, tuple[str, str, str, str]] = {}
        self._keys: set[str] = set() if self._conn is None else keys
        self.observer: Observer | None = None

    def lookup(self, key: str) -> dict[str, Any] | None:
        if self._conn is None:
            return None
        pending = self._pending.get(key)
        if pending is not None:
            return json.loads(pending[3])
        if key not in self._keys:  # a miss costs no query (most calls of a fresh run miss)
            return None
        row = self._conn.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def store(self, key: str, channel: str, context: CallContext, response: dict[str, Any]) -> None:
        """Write a response, or queue it when deferred (:meth:`flush` writes the queue).

        A deferred cache's user flushes before committing anything that depends on the
        calls (a finished trial), so a killed run never keeps a trial whose calls were not
        recorded.
        """
        if self._conn is None:
            return
        # stored values need not be canonical (only keys do): plain, fast serialisation
        self._pending[key] = (key, channel, context.describe(), _COMPACT.encode(response))
        if not self._deferred:
            self.flush()

    def flush(self) -> None:
        if self._conn is None or not self._pending:
            return
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany(
                "INSERT OR REPLACE INTO calls (key, channel, context, response) VALUES (?, ?, ?, ?)", self._pending.values()
            )
        self._keys.update(self._pending)
        self._pending.clear()

    async def call(
        self,
        channel: str,
        request: dict[str, Any],
        context: CallContext,
        send: Callable[[], Awaitable[dict[str, Any]]],
        request_text: str | None = None,
        failure: FailureOf | None = None,
    ) -> dict[str, Any]:
        """Return the response for ``request``: cached, or from ``send()`` (then stored).

        Successful responses are stored and served. A final :class:`CallError` (not
        ``auth``) is stored as an error entry: replay re-raises it, record calls again.
        Any other exception is neither stored nor swallowed. ``failure`` reads a response
        that is a failure record (see :meth:`live`).
        """
        if self.mode == "off":
            return await self.live(channel, context, send, failure)
        key = call_key(channel, request, context, request_text)
        cached = self.lookup(key)
        if cached is not None and ERROR_ENTRY not in cached:
            return cached
        if self.mode == "replay":
            if cached is not None:
                error = cached[ERROR_ENTRY]
                raise CallError(error["kind"], error["message"], status=error.get("status"))
            raise ReplayMissError(f"replay miss: no recorded {channel} call for {context.describe()}")
        try:
            response = await self.live(channel, context, send, failure)
        except CallError as exc:
            if exc.kind != AUTH:
                entry = {ERROR_ENTRY: {"kind": exc.kind, "message": exc.message, "status": exc.status}}
                self.store(key, channel, context, entry)
            raise
        self.store(key, channel, context, response)
        return response

    async def live(
        self,
        channel: str,
        context: CallContext,
        send: Callable[[], Awaitable[dict[str, Any]]],
        failure: FailureOf | None = None,
    ) -> dict[str, Any]:
        """``await send()``, its outcome told to :attr:`observer`: a final :class:`CallError`'s
        kind, ``failure(response)`` for a response that records a failure, else a success."""
        try:
            response = await send()
        except CallError as exc:
            self._tell(channel, context, exc.kind, _short(exc))
            raise
        outcome = failure(response) if failure is not None else None
        self._tell(channel, context, *(outcome or (None, "")))
        return response

    def _tell(self, channel: str, context: CallContext, kind: str | None, detail: str) -> None:
        if self.observer is not None:
            self.observer(channel, context, kind, detail)

    def close(self) -> None:
        if self._conn is not None:
            self.flush()
            self._conn.close()
            self._conn = None


def _short(exc: CallError) -> str:
    """What failed, in a few words: the HTTP status, else the type of the underlying error."""
    if exc.status is not None:
        return f"HTTP {exc.status}"
    cause = exc.__cause__
    if exc.kind == TIMEOUT or cause is None or isinstance(cause, CallError):
        return exc.message[:120]
    return type(cause).__name__
