"""Leak detection for search results: a zero-cost heuristic layer, then an LLM judge.

Both layers run per result and record a verdict (paper B.4, Tables 15-18):

- heuristic (:func:`heuristic_verdict`): drop a result whose ``published_date`` is after
  χ (or missing / unreadable, unless ``undated="keep"``), or whose title, content or raw
  content names a date after χ ("2026-03-04", "March 3, 2026", "3 March 2026",
  "2026-03", "March 2026", a bare year after χ's year). A period counts as "after χ"
  only when it *starts* after χ, so "March 2026" leaks for χ = 2026-02-28 but not for
  χ = 2026-03-10.
- LLM (:class:`LeakDetector`): an OpenAI-compatible chat call per result that passed the
  heuristic layer, with a prompt that sees exactly six fields (:data:`DETECTOR_FIELDS`),
  temperature 0, max_tokens 512, the verdict parser of Algorithm 4, up to 4 attempts, and
  a fail-closed drop when no verdict can be had.

:func:`screen` runs the layers a mode asks for (``llm``, ``heuristic`` or ``off``) and
returns the kept results, the quick answer (cleared whenever any result was dropped: it
is a summary of all the pages, dropped ones included), and the audit fields.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

import httpx

from oracleproto.config import DEFAULT_MAX_RESPONSE_BYTES
from oracleproto.errors import ConfigError
from oracleproto.harness.bounded_http import (
    CallLimits,
    JsonPoster,
    raise_for_status,
)
from oracleproto.harness.faults import (
    DETECTOR_RETRY,
    CallError,
    MalformedResponseError,
    RetryLog,
    RetryPolicy,
    call_with_retries,
    classify,
)
from oracleproto.harness.llm import ChannelMeter, encode_json
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import (
    SearchHit,
    SearchOutcome,
    SearchSettings,
    record_or_replay,
)
from oracleproto.harness.settings import read_key

log = logging.getLogger(__name__)

DETECTOR_CHANNEL = "detector"
DETECTOR_ENDPOINT = "leak detector endpoint"  # how errors name it (no URL, no key)
DETECTOR_FIELDS = ("title", "url", "published_date", "content", "raw_content", "cutoff_date")
KEEP, DROP = "keep", "drop"
INVALID_VERDICT = "invalid_verdict"
SEQ_STRIDE = 100  # detector call for result i of search seq s uses seq s * 100 + i

# ---------------------------------------------------------------------------------------
# Prompt. Six constraints: the cutoff; what counts as leakage (observed, scheduled and
# speculative events after it); text-only judgement; doubt means drop; re-published pages
# about earlier events are fine; one line of JSON out. It is framed as a dating audit of a
# document and never mentions what the document will be used for.
DETECTOR_PROMPT_TEMPLATE = """\
You audit web documents for a time-travel archive. The archive may only contain material \
that could have been written on or before a fixed date. Decide whether the document \
below reveals anything from after that date.

cutoff_date: {cutoff_date}

Rules:
1. The cutoff date is {cutoff_date} (ISO 8601). Judge everything relative to it.
2. The document leaks if it mentions any event dated strictly after the cutoff date, in \
any of three forms: observed (reported as having happened, e.g. "the merger closed on a \
day after the cutoff"), scheduled (announced for a day after the cutoff, e.g. "the launch \
is set for a date after the cutoff"), or speculative (forecast or rumoured by someone \
writing after the cutoff, e.g. "analysts now expect the vote to fail").
3. Use only the text shown below. Do not use anything you know from elsewhere; what the \
text does not show does not count, for or against.
4. If you are unsure, the verdict is drop.
5. A copy, archive snapshot, listing or digest is fine (keep) when every event it \
describes happened on or before the cutoff date, whatever date the copy itself carries.
6. Reply with exactly one line of JSON and nothing else: \
{{"verdict": "keep" or "drop", "reason": "<one short sentence>"}}

Document:
title: {title}
url: {url}
published_date: {published_date}
content:
{content}
raw_content:
{raw_content}
"""


def detector_prompt_hash() -> str:
    """sha256 of the prompt template, 16 hex characters (for the config snapshot)."""
    return hashlib.sha256(DETECTOR_PROMPT_TEMPLATE.encode()).hexdigest()[:16]


def detector_input(hit: SearchHit, cutoff: date) -> dict[str, str]:
    """The whitelist of Table 16: exactly the six fields the detector may see."""
    return {
        "title": hit.title,
        "url": hit.url,
        "published_date": hit.published_date or "(unknown)",
        "content": hit.content,
        "raw_content": hit.raw_content or "(empty)",
        "cutoff_date": cutoff.isoformat(),
    }


def render_detector_message(item: Mapping[str, str]) -> str:
    if tuple(sorted(item)) != tuple(sorted(DETECTOR_FIELDS)):
        raise ValueError(f"detector input must have exactly the fields {DETECTOR_FIELDS}, got {sorted(item)}")
    return DETECTOR_PROMPT_TEMPLATE.format(**item)


# ---------------------------------------------------------------------------------------
# Verdict parser (Algorithm 4)
def parse_verdict(text: str | None) -> tuple[str, str] | None:
    """``(verdict, reason)`` from a detector reply, or None on any structural defect.

    Candidates, in order: the whole reply if it is brace-wrapped, then the first balanced
    ``{...}`` (string-aware, so a brace inside a quoted reason does not cut it). The first
    candidate that decodes to an object decides: its ``verdict`` must be keep or drop.
    """
    stripped = (text or "").strip()
    if not stripped:
        return None
    candidates: list[str] = []
    if stripped.startswith("{") and stripped.endswith("}"):
        candidates.append(stripped)
    embedded = _first_balanced_object(stripped)
    if embedded is not None:
        candidates.append(embedded)
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        verdict = obj.get("verdict")
        if verdict not in (KEEP, DROP):
            return None
        return verdict, str(obj.get("reason") or "")
    return None


def _first_balanced_object(text: str) -> str | None:
    start = text.find("{")
    if start < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for position in range(start, len(text)):
        char = text[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : position + 1]
    return None


# ---------------------------------------------------------------------------------------
# Heuristic layer
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
# Month names as a prefix tree: Python's re is several times faster on this than on a flat
# alternation of 24 names under IGNORECASE.
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
# A mention without a day is a month or a year: a period that starts on its first day.
_DATE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(?<!\d)" + _YEAR + r"[-/.](?P<month>\d{1,2})[-/.]" + r"(?P<day>\d{1,2})(?!\d)",  # 2026-03-04
        r"(?<!\d)" + _YEAR + r"-(?P<month>\d{2})(?![-/.]?\d)",  # 2026-03
        r"(?<![a-z])(?=[adfjmnos])" + _MONTH + r"(?:\s+" + _DAY + r",?)?\s+" + _YEAR + r"(?!\d)",  # March 3, 2026 / March 2026
        r"(?<!\w)(?=\d)" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR + r"(?!\d)",  # 3 March 2026
        r"(?<![\w.,$€£])(?P<year>(?:19|20|21)\d{2})(?!\w|[.,]\d)",  # 2026
    )
)
_YEAR_TOKEN = re.compile(r"(?<!\d)\d{4}(?!\d)")
_SCANNED_FIELDS = ("title", "content", "raw_content")


def _period_start(match: re.Match[str]) -> date | None:
    groups = match.groupdict()
    try:
        year = int(groups["year"])
        month_text = groups.get("month")
        if month_text is None:
            return date(year, 1, 1)
        month = int(month_text) if month_text.isdigit() else _MONTHS[month_text[:3].lower()]
        return date(year, month, int(groups["day"]) if groups.get("day") else 1)
    except ValueError:
        return None  # "February 30", "2026-13": not a date, so not a date after χ


def first_date_after(text: str, cutoff: date) -> str | None:
    """The leftmost date mention in ``text`` whose period starts after ``cutoff``."""
    # Every pattern names a year, and only a year >= χ's year can start after χ: most
    # pages settle here in one cheap pass.
    if not any(int(token.group()) >= cutoff.year for token in _YEAR_TOKEN.finditer(text)):
        return None
    found: re.Match[str] | None = None
    for pattern in _DATE_PATTERNS:
        match = next((m for m in pattern.finditer(text) if (s := _period_start(m)) and s > cutoff), None)
        if match is not None and (found is None or match.start() < found.start()):
            found = match
    return None if found is None else found.group(0)


def parse_published_date(value: str) -> date | None:
    """A date from ISO 8601 (date or datetime, date part as written) or RFC 2822 text."""
    text = value.strip()
    if re.match(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text[:10])
        except ValueError:
            return None
    try:
        return email.utils.parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        return None


def published_date_verdict(published_date: str | None, cutoff: date, undated: str = "drop") -> str | None:
    """The date-metadata part of the heuristic: ``drop:<reason>`` for a result published
    after χ (or with no readable date, under ``undated="drop"``), None when its date passes."""
    published_text = (published_date or "").strip()
    if not published_text:
        return "drop:undated" if undated == "drop" else None
    published = parse_published_date(published_text)
    if published is None:
        return "drop:unreadable_published_date" if undated == "drop" else None
    return f"drop:published_after_cutoff:{published.isoformat()}" if published > cutoff else None


def heuristic_verdict(hit: SearchHit, cutoff: date, undated: str = "drop") -> str:
    """``keep`` or ``drop:<reason>`` for one result (dates only; no call, no cost)."""
    dated = published_date_verdict(hit.published_date, cutoff, undated)
    if dated is not None:
        return dated
    for name in _SCANNED_FIELDS:
        mention = first_date_after(getattr(hit, name) or "", cutoff)
        if mention is not None:
            return f"drop:date_after_cutoff:{name}:{mention}"
    return KEEP


# ---------------------------------------------------------------------------------------
# LLM detector
class InvalidVerdictError(MalformedResponseError):
    """The detector replied, but not with a keep/drop verdict (retried like a garbled body)."""


@dataclass(frozen=True)
class DetectorSettings:
    """Endpoint and call parameters of the detector lane (Table 15)."""

    model: str
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 60.0  # wall-clock limit of one call, connect to last byte
    concurrency: int = 5
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if not self.model or not self.model.strip():
            raise ConfigError("detector: environment variable DETECTOR_MODEL is not set (the leak detector's model)")
        if self.model.strip().endswith(":online"):
            raise ConfigError(f"detector: model {self.model!r} ends in ':online' (a browsing model cannot audit leaks)")
        if self.concurrency < 1:
            raise ConfigError(f"detector: concurrency must be >= 1, got {self.concurrency}")
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or not self.timeout_s > 0:
            raise ConfigError(f"detector: timeout_s must be a number > 0, got {self.timeout_s!r}")
        if isinstance(self.max_response_bytes, bool) or not isinstance(self.max_response_bytes, int) or self.max_response_bytes < 1:
            raise ConfigError(f"detector: max_response_bytes must be an integer >= 1, got {self.max_response_bytes!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, model: str | None = None, require_endpoint: bool = True) -> DetectorSettings:
        """DETECTOR_* variables, falling back to OPENAI_BASE_URL / OPENAI_API_KEY.

        ``require_endpoint=False`` (replay) needs only the model: nothing is called.
        """
        chosen_model = model or environ.get("DETECTOR_MODEL") or ""
        base_url = (environ.get("DETECTOR_BASE_URL") or environ.get("OPENAI_BASE_URL") or "").strip() or None
        api_key = None
        if require_endpoint:
            if base_url is None:
                raise ConfigError("detector: environment variable DETECTOR_BASE_URL is not set (nor OPENAI_BASE_URL)")
            key_name = "DETECTOR_API_KEY" if environ.get("DETECTOR_API_KEY") else "OPENAI_API_KEY"
            api_key = read_key(environ, key_name, "the leak detector")
        return cls(model=chosen_model, base_url=base_url, api_key=api_key)

    @classmethod
    def from_snapshot(cls, snapshot: Mapping[str, Any]) -> DetectorSettings:
        """The settings a recorded run's :meth:`snapshot` names, with no endpoint and no key
        (a replay calls nothing, and its request bodies must be the recorded ones)."""
        return cls(
            model=str(snapshot.get("leak_detector_model") or ""),
            base_url=None,
            temperature=snapshot.get("leak_detector_temperature", cls.temperature),
            max_tokens=snapshot.get("leak_detector_max_tokens", cls.max_tokens),
        )

    def snapshot(self) -> dict[str, Any]:
        """Config-snapshot fields (no key, no endpoint)."""
        return {
            "leak_detector_model": self.model,
            "leak_detector_prompt_hash": detector_prompt_hash(),
            "leak_detector_temperature": self.temperature,
            "leak_detector_max_tokens": self.max_tokens,
        }


@dataclass(frozen=True)
class ItemVerdict:
    """The LLM detector's outcome for one result."""

    verdict: str  # keep | drop | failed:<kind>
    reason: str
    latency_ms: int
    cost_usd: float = 0.0
    faults: tuple[str, ...] = ()

    @property
    def error_kind(self) -> str | None:
        return self.verdict.split(":", 1)[1] if self.verdict.startswith("failed:") else None

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ItemVerdict:
        return cls(
            verdict=record["verdict"],
            reason=record["reason"],
            latency_ms=int(record["latency_ms"]),
            cost_usd=float(record["cost_usd"]),
            faults=tuple(record["faults"]),
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "faults": list(self.faults),
        }


class LeakDetector:
    """Judges search results keep/drop against a cutoff; fails closed."""

    def __init__(
        self,
        settings: DetectorSettings,
        cache: CallCache,
        *,
        retry: RetryPolicy = DETECTOR_RETRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
        meter: ChannelMeter | None = None,
    ):
        self.settings = settings
        self._meter = meter or ChannelMeter()
        self._cache = cache
        self._retry = retry
        self._sleep = sleep
        self._transport = transport
        self._client: JsonPoster | None = None
        self._limit = asyncio.Semaphore(settings.concurrency)

    def request_for(self, hit: SearchHit, cutoff: date) -> dict[str, Any]:
        """The chat body (no key: it travels in the Authorization header)."""
        message = render_detector_message(detector_input(hit, cutoff))
        return {
            "model": self.settings.model,
            "messages": [{"role": "user", "content": message}],
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
        }

    async def judge_all(self, hits: Sequence[tuple[int, SearchHit]], cutoff: date, context: CallContext) -> list[ItemVerdict]:
        """Verdicts for ``(raw index, hit)`` pairs, concurrently, in the given order."""
        return list(await asyncio.gather(*(self.judge(hit, cutoff, _item_context(context, i)) for i, hit in hits)))

    async def judge(self, hit: SearchHit, cutoff: date, context: CallContext) -> ItemVerdict:
        request = self.request_for(hit, cutoff)
        record = await record_or_replay(
            self._cache,
            DETECTOR_CHANNEL,
            request,
            context,
            lambda: self._judge_live(request, context),
            failure=verdict_failure,
        )
        return ItemVerdict.from_record(record)

    async def _judge_live(self, request: dict[str, Any], context: CallContext) -> dict[str, Any]:
        retries = RetryLog()
        started = time.perf_counter()
        cost: list[float] = []
        detail = ""
        async with self._limit, self._meter.track(DETECTOR_CHANNEL):
            try:
                verdict, reason = await call_with_retries(
                    lambda: self._ask(request, cost), self._retry, sleep=self._sleep, log=retries
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                kind = INVALID_VERDICT if isinstance(exc, InvalidVerdictError) else classify(exc)
                log.warning("leak detector failed (%s) for %s; result dropped", kind, context.describe())
                verdict, reason, detail = f"failed:{kind}", "", _failure_detail(exc)
        record = ItemVerdict(
            verdict=verdict,
            reason=reason,
            latency_ms=round((time.perf_counter() - started) * 1000),
            cost_usd=sum(cost),
            faults=tuple(kind for kind, _ in retries.retries),
        ).to_record()
        return {**record, "detail": detail} if verdict.startswith("failed:") else record

    async def _ask(self, request: dict[str, Any], cost: list[float]) -> tuple[str, str]:
        if self.settings.base_url is None:
            raise RuntimeError("detector has no endpoint (replay-only settings)")
        if self._client is None:
            headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
            url = f"{self.settings.base_url.rstrip('/')}/chat/completions"
            self._client = JsonPoster(url, headers, self.settings.concurrency, self._transport)
        limits = CallLimits(self.settings.timeout_s, self.settings.max_response_bytes)
        reply = await self._client.send(self._client.prepare(encode_json(request).encode()), limits, DETECTOR_ENDPOINT)
        raise_for_status(reply, DETECTOR_ENDPOINT)
        try:
            payload = json.loads(reply.content)
            content = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise MalformedResponseError("detector reply is not a chat completion") from exc
        usage = payload.get("usage")  # OpenRouter reports the call's price as usage.cost
        if isinstance(usage, dict) and isinstance(usage.get("cost"), (int, float)) and not isinstance(usage["cost"], bool):
            cost.append(float(usage["cost"]))
        parsed = parse_verdict(content if isinstance(content, str) else None)
        if parsed is None:
            raise InvalidVerdictError("detector reply has no keep/drop verdict")
        return parsed

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def verdict_failure(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """(fault kind, detail) of a detector record whose call failed, None for a verdict."""
    verdict = str(record.get("verdict", ""))
    return (verdict.split(":", 1)[1], str(record.get("detail") or "")) if verdict.startswith("failed:") else None


def _failure_detail(exc: BaseException) -> str:
    """A key-free word on what failed: the HTTP status, the deadline or cap, else the error type."""
    if isinstance(exc, CallError):
        return f"HTTP {exc.status}" if exc.status is not None else exc.message[:120]
    return type(exc).__name__


def _item_context(context: CallContext, index: int) -> CallContext:
    return replace(context, seq=context.seq * SEQ_STRIDE + index)


# ---------------------------------------------------------------------------------------
# Both layers together
@dataclass(frozen=True)
class Screened:
    hits: list[SearchHit]
    answer: str | None
    audit: dict[str, Any]
    cost_usd: float


async def screen(
    hits: Sequence[SearchHit],
    answer: str | None,
    cutoff: date,
    *,
    mode: str,
    detector: LeakDetector | None,
    context: CallContext,
    undated: str = "drop",
    masked: Sequence[tuple[SearchHit, str]] = (),
) -> Screened:
    """Run the layers of ``mode`` over raw results; the audit keeps raw order and length.

    For the leak audit the audit also carries what the model was *not* shown, as it would
    have read it: ``dropped_results`` (each result a layer dropped, with its raw index) and
    ``masked_results`` (``masked``: results the backend's own date mask withheld, with the
    verdict it gave them).
    """
    n_raw = len(hits)
    heuristic: list[str] | None = None
    verdicts: list[ItemVerdict | None] = [None] * n_raw
    kept_mask = [True] * n_raw
    if mode in ("heuristic", "llm"):
        heuristic = [heuristic_verdict(hit, cutoff, undated) for hit in hits]
        kept_mask = [v == KEEP for v in heuristic]
    if mode == "llm":
        if detector is None:
            raise ValueError("detector mode 'llm' needs a LeakDetector")
        passed = [(i, hits[i]) for i in range(n_raw) if kept_mask[i]]
        for (i, _), verdict in zip(passed, await detector.judge_all(passed, cutoff, context), strict=True):
            verdicts[i] = verdict
            kept_mask[i] = verdict.verdict == KEEP
    kept = [hit for hit, keep in zip(hits, kept_mask, strict=True) if keep]
    # The quick answer summarises every page, dropped ones too: it survives only a clean pass.
    answer_kept = answer if mode == "off" or (n_raw > 0 and len(kept) == n_raw) else None
    judged = [v for v in verdicts if v is not None]
    audit: dict[str, Any] = {
        "detector_mode": mode,
        "n_results_raw": n_raw,
        "n_results_kept": len(kept),
        "published_dates": [hit.published_date for hit in hits],
        "heuristic_verdicts": heuristic,
        "detector_verdicts": [v.verdict if v else None for v in verdicts] if mode == "llm" else None,
        "detector_reasons": [v.reason if v else None for v in verdicts] if mode == "llm" else None,
        "detector_latency_ms": max((v.latency_ms for v in judged), default=0) if mode == "llm" else None,
        "detector_error_kind": next((v.error_kind for v in judged if v.error_kind), None),
        "answer_cleared": answer is not None and answer_kept is None,
        "dropped_results": [{"index": i, **hit.to_payload()} for i, hit in enumerate(hits) if not kept_mask[i]],
        "masked_results": [{"verdict": verdict, **hit.to_payload()} for hit, verdict in masked],
    }
    return Screened(hits=kept, answer=answer_kept, audit=audit, cost_usd=sum(v.cost_usd for v in judged))


async def screened_outcome(
    query: str,
    cutoff: date,
    hits: Sequence[SearchHit],
    answer: str | None,
    *,
    settings: SearchSettings,
    detector: LeakDetector | None,
    context: CallContext,
    audit: Mapping[str, Any],
    cost_usd: float = 0.0,
    masked: Sequence[tuple[SearchHit, str]] = (),
) -> SearchOutcome:
    """A backend's successful search, after the leak-detection layers its settings name
    (``masked``: what the backend's date mask withheld, recorded for the leak audit)."""
    screened = await screen(
        hits, answer, cutoff, mode=settings.detector_mode, detector=detector, context=context, undated=settings.undated,
        masked=masked,
    )
    return SearchOutcome(
        query=query,
        end_date=cutoff,
        hits=screened.hits,
        answer=screened.answer,
        error=None,
        audit={**audit, **screened.audit},
        cost_usd=cost_usd + screened.cost_usd,
    )
