"""The search side of the ReAct loop: result types, settings and the backend registry.

The model's ``web_search`` tool carries only ``query``. The harness adds ``end_date`` = χ
(τ − δ) and calls ``backend.search(query, end_date, context)``; the backend fetches raw
results, masks them to χ, runs the leak filter (``detector.screen``) and returns a
:class:`SearchOutcome`: what the model may see (``hits``, ``answer``) plus the audit
record that goes into the trial's ``search_calls`` column and never into the dialogue.

Backends register themselves by name (``tavily``, ``archive``); ``make_backend`` builds
one from :class:`SearchSettings` (the ``evaluate.search_options`` knobs of params.yaml).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from oracleproto.config import (
    ArchivePath,
    DetectorMode,
    ResultsPerSearch,
    SearchOptions,
)
from oracleproto.errors import ConfigError
from oracleproto.harness.replay import CallCache, CallContext, FailureOf, call_key

# Error values of SearchOutcome.error (the kind of fault is in audit["error_kind"]).
TAVILY_ERROR = "tavily_error"
ALL_KEYS_EXHAUSTED = "all_keys_exhausted"


@dataclass(frozen=True)
class SearchHit:
    """One result, as the model may see it."""

    title: str
    url: str
    content: str
    published_date: str | None = None
    score: float | None = None
    raw_content: str | None = None

    def to_payload(self) -> dict[str, Any]:
        """JSON-able dict with the null fields left out (what the tool message carries)."""
        # Field by field: dataclasses.asdict deep-copies and was ~5 % of harness CPU per trial.
        payload = {"title": self.title, "url": self.url, "content": self.content}
        for key in ("published_date", "score", "raw_content"):
            value = getattr(self, key)
            if value is not None:
                payload[key] = value
        return payload


@dataclass
class SearchOutcome:
    """The result of one ``web_search`` call after masking and leak detection."""

    query: str
    end_date: date
    hits: list[SearchHit]
    answer: str | None
    error: str | None
    audit: dict[str, Any]
    cost_usd: float = 0.0
    message: str | None = None  # human-readable failure text for the model; never holds a key

    def to_llm_payload(self) -> dict[str, Any]:
        """What the tool message carries: no audit fields, no end_date, null fields omitted."""
        if self.error is not None:
            return {"error": self.error, "message": self.message or self.error, "results": [], "answer": None}
        payload: dict[str, Any] = {"query": self.query, "results": [hit.to_payload() for hit in self.hits]}
        if self.answer is not None:
            payload["answer"] = self.answer
        return payload

    def to_search_call(self) -> dict[str, Any]:
        """The entry for the trial's ``search_calls`` column (Table 18 audit fields included)."""
        return {
            "query": self.query,
            "end_date": self.end_date.isoformat(),
            "n_results": len(self.hits),
            "error": self.error,
            "cost_usd": self.cost_usd,
            **self.audit,
        }


class LeakDetector(Protocol):
    """The LLM leak detector as the backends see it (built in :mod:`oracleproto.harness.detector`,
    which imports this module: the backends depend on this shape, not on that module)."""

    async def judge_all(self, hits: Sequence[tuple[int, SearchHit]], cutoff: date, context: CallContext) -> list[Any]: ...

    async def aclose(self) -> None: ...


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, end_date: date, context: CallContext) -> SearchOutcome: ...

    async def aclose(self) -> None: ...


class SearchSettings(SearchOptions, ResultsPerSearch, ArchivePath):
    """What a backend is built with: ``evaluate.search_options`` plus the evaluation's R,
    leak-detection mode and archive (defaults: :mod:`oracleproto.config`, paper Table 12)."""

    detector_mode: DetectorMode


def truncate(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters with a visible marker (limit 0 = unlimited)."""
    if text is None or limit == 0 or len(text) <= limit:
        return text
    return text[:limit] + f"\n[… truncated to {limit} characters]"


def check_detector(settings: SearchSettings, detector: LeakDetector | None) -> None:
    """Mode ``llm`` needs a detector; a detector with another mode would silently idle."""
    if settings.detector_mode == "llm" and detector is None:
        raise ConfigError("search settings: detector_mode 'llm' needs a leak detector (set DETECTOR_MODEL and its endpoint)")


def check_end_date(end_date: object) -> date:
    """χ must be a calendar date computed by the harness (a datetime would carry a clock time)."""
    if not isinstance(end_date, date) or hasattr(end_date, "hour"):
        raise TypeError(f"end_date must be a datetime.date (the prediction cutoff), got {type(end_date).__name__}")
    return end_date


async def record_or_replay(
    cache: CallCache,
    channel: str,
    request: dict[str, Any],
    context: CallContext,
    send: Callable[[], Awaitable[dict[str, Any]]],
    failure: FailureOf,
) -> dict[str, Any]:
    """``cache.call`` for a call whose final outcome (after its own retries) may be a failure.

    The whole bounded retry loop is the recorded unit, failures included, so a replay
    reproduces a run that met faults. A recorded *failure* (``failure(record)`` is its
    ``(kind, detail)``, None for a success) is served only in replay mode: in record mode it
    is retried (and overwritten), so fixing a key or an outage heals.
    """
    if cache.mode != "record":
        return await cache.call(channel, request, context, send, failure=failure)
    key = call_key(channel, request, context)
    cached = cache.lookup(key)
    if cached is not None and failure(cached) is None:
        return cached
    response = await cache.live(channel, context, send, failure)
    cache.store(key, channel, context, response)
    return response


# ---------------------------------------------------------------------------------------
# Registry
BackendFactory = Callable[[SearchSettings, CallCache, LeakDetector | None], SearchBackend]
_FACTORIES: dict[str, BackendFactory] = {}
_BUILTIN_MODULES = ("oracleproto.harness.tavily", "oracleproto.harness.archive")


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator: register ``factory(settings, cache, detector) -> SearchBackend`` under ``name``."""

    def decorate(factory: BackendFactory) -> BackendFactory:
        if name in _FACTORIES and _FACTORIES[name] is not factory:
            raise ValueError(f"search backend {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return decorate


def backend_names() -> tuple[str, ...]:
    _import_builtins()
    return tuple(sorted(_FACTORIES))


def make_backend(
    name: str, settings: SearchSettings, cache: CallCache, detector: LeakDetector | None
) -> SearchBackend:
    """Build the backend registered as ``name``; unknown names list the known ones."""
    _import_builtins()
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ValueError(f"unknown search backend {name!r}; known: {sorted(_FACTORIES)}")
    check_detector(settings, detector)
    return factory(settings, cache, detector)


def _import_builtins() -> None:
    # Imported lazily: the backend modules import this one to register themselves.
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)

