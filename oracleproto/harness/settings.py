"""Typed evaluation settings: params shape artifacts, the environment only supplies endpoints and keys.

- :class:`Budgets`, :class:`Sampling`, :class:`Concurrency`, :class:`ModelSpec` and
  :class:`EvalSettings` are frozen records checked on construction, with the paper's
  defaults (§4.1.3, Table 12): T = 6, C = 4, R = 5, n = 3, δ = 1.
- :func:`resolve_endpoint` reads a model's base URL and key from the environment; a missing
  or placeholder key is a start-up error naming the variable.
- Keys never leave :class:`Endpoint` except in an HTTP header. :func:`redact_key` reduces a
  key to prefix + sha256-12 for the config snapshot; :data:`SECRETS` scrubs every registered
  key out of any text that may reach a log, an error or an artifact.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from oracleproto.errors import OracleProtoError
from oracleproto.prompts import ProtocolSwitches

ONLINE_SUFFIX = ":online"
BASELINE_PREFIX = "baseline:"
BASELINE_NAMES = ("uniform", "first", "no", "base_rate")
DEFAULT_BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_TOKENS_PARAMS = ("max_tokens", "max_completion_tokens")
SAMPLING_FIELDS = ("temperature", "top_p")
SEARCH_BACKENDS = ("archive", "tavily", "none")
DETECTOR_MODES = ("llm", "heuristic", "off")
CACHE_MODES = ("record", "replay", "off")
# Size cap of one response body (model and detector calls): a chat completion of 12,000
# tokens is well under 1 MiB, so 8 MiB only ever stops a runaway or hostile server.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024

# Values people leave in .env files instead of a real key (compared case-insensitively).
PLACEHOLDER_KEYS = frozenset(
    {
        "replace_me",
        "replace-me",
        "changeme",
        "change_me",
        "put_your_key_here",
        "your_api_key",
        "your-api-key",
        "your_key_here",
        "<your key>",
        "sk-...",
        "xxx",
        "todo",
        "none",
        "null",
    }
)


class SettingsError(OracleProtoError, ValueError):
    """Bad evaluation settings; the message names the parameter or variable."""


# ---------------------------------------------------------------------------------------
# Secrets


def redact_key(key: str) -> str:
    """Prefix (4 characters, only for keys long enough to spare them) + sha256-12."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    prefix = key[:4] if len(key) >= 16 else ""
    return f"{prefix}…sha256:{digest}"


class SecretRegistry:
    """Every key the process holds, so any outgoing text can be scrubbed of them."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def register(self, *values: str | None) -> None:
        for value in values:
            if value and len(value) >= 4:
                self._secrets.add(value)

    def scrub(self, text: str) -> str:
        # longest first, so a key that contains another is replaced whole
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, redact_key(secret))
        return text


SECRETS = SecretRegistry()


class ScrubSecretsFilter(logging.Filter):
    """Logging filter: a record's final message never contains a registered key."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = SECRETS.scrub(message)
        if scrubbed != message or record.args:
            record.msg, record.args = scrubbed, None
        return True


def is_placeholder(value: str) -> bool:
    text = value.strip().lower()
    return text in PLACEHOLDER_KEYS or text.startswith("<") or "your" in text and "key" in text


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint; the key is excluded from repr and equality."""

    base_url: str
    api_key: str | None = field(default=None, repr=False, compare=False)
    key_env: str = DEFAULT_API_KEY_ENV


def read_key(env: Mapping[str, str], name: str, purpose: str) -> str:
    """A key from ``env[name]``; missing, empty or placeholder values are errors naming ``name``."""
    value = env.get(name)
    if value is None or not value.strip():
        raise SettingsError(f"environment variable {name} is not set (needed for {purpose})")
    if is_placeholder(value):
        raise SettingsError(f"environment variable {name} holds a placeholder, not a key (needed for {purpose})")
    SECRETS.register(value.strip())
    return value.strip()


# ---------------------------------------------------------------------------------------
# Records


def require_int(name: str, value: Any, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingsError(f"{name} must be an integer >= {minimum}, got {value!r}")


def require_positive_number(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise SettingsError(f"{name} must be a number > 0, got {value!r}")


@dataclass(frozen=True)
class Budgets:
    """Loop and sampling budgets (paper §4.1.3)."""

    max_steps: int = 6  # T
    max_search_calls: int = 4  # C
    max_results: int = 5  # R, results per search
    trials: int = 3  # n
    delta_days: int = 1  # δ, prediction cutoff χ = τ − δ
    lookahead: int = 2  # steps before the last one that get the soft warning
    drop_tools_when_spent: bool = True
    force_final: bool = True
    # Minimum-search nudges (off by default, as in the paper's runs): a reply before
    # ``min_search_calls`` searches is answered with a nudge, at most ``max_nudges`` times.
    min_search_calls: int = 0
    max_nudges: int = 2
    # Bail-out retry (off by default): one extra tool-less call when the loop ends unanswered.
    final_answer_retry: bool = False

    def __post_init__(self) -> None:
        require_int("max_steps", self.max_steps)
        require_int("max_search_calls", self.max_search_calls, 0)
        require_int("max_results", self.max_results)
        require_int("trials", self.trials)
        require_int("delta_days", self.delta_days)
        require_int("lookahead", self.lookahead)
        if self.lookahead > self.max_steps:
            raise SettingsError(f"lookahead ({self.lookahead}) must be <= max_steps ({self.max_steps})")
        require_int("min_search_calls", self.min_search_calls, 0)
        require_int("max_nudges", self.max_nudges, 0)
        if self.min_search_calls > self.max_search_calls:
            raise SettingsError(
                f"min_search_calls ({self.min_search_calls}) must be <= max_search_calls ({self.max_search_calls})"
            )
        for name in ("drop_tools_when_spent", "force_final", "final_answer_retry"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"{name} must be true or false, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class Sampling:
    """Main-LLM request parameters (Table 12)."""

    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 12000
    timeout_s: float = 240.0  # wall-clock limit of one call, connect to last byte
    reasoning_patterns: tuple[str, ...] = ("o1", "o3", "o4", "r1", "qwq")
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        require_int("max_tokens", self.max_tokens)
        require_positive_number("timeout_s", self.timeout_s)
        require_int("max_response_bytes", self.max_response_bytes)


@dataclass(frozen=True)
class Concurrency:
    """Per-channel caps (Table 20)."""

    llm: int = 5
    search: int = 5
    detector: int = 5

    def __post_init__(self) -> None:
        for name in ("llm", "search", "detector"):
            require_int(f"concurrency.{name}", getattr(self, name))


def reject_online(slug: str) -> None:
    if slug.endswith(ONLINE_SUFFIX):
        raise SettingsError(f"model {slug!r}: ':online' slugs enable provider-side browsing and break the time mask")


@dataclass(frozen=True)
class ModelSpec:
    """One evaluated model.

    ``label`` is the row value of ``model`` in the trial table (a virtual slug such as
    ``baseline:uniform@cutoff-2024-04-30`` keeps (model, q_id, trial) unique); ``slug`` is
    what is sent to the provider, or the baseline name.
    """

    label: str
    slug: str
    cutoff: dt.date | None = None
    base_url_env: str = DEFAULT_BASE_URL_ENV
    api_key_env: str = DEFAULT_API_KEY_ENV
    max_tokens_param: str = "max_tokens"
    omit_sampling: tuple[str, ...] = ()
    reasoning: bool | None = None  # None: decided by Sampling.reasoning_patterns
    price_prompt_per_mtok: float | None = None
    price_completion_per_mtok: float | None = None

    def __post_init__(self) -> None:
        for name, value in (("label", self.label), ("slug", self.slug)):
            if not value or not value.strip():
                raise SettingsError(f"model {name} must be non-empty")
            reject_online(value)
        if self.is_baseline and self.baseline_name not in BASELINE_NAMES:
            raise SettingsError(f"unknown baseline {self.slug!r}; known: {[BASELINE_PREFIX + n for n in BASELINE_NAMES]}")
        if self.max_tokens_param not in MAX_TOKENS_PARAMS:
            raise SettingsError(f"model {self.slug!r}: max_tokens_param must be one of {MAX_TOKENS_PARAMS}")
        unknown = set(self.omit_sampling) - set(SAMPLING_FIELDS)
        if unknown:
            raise SettingsError(f"model {self.slug!r}: omit_sampling may list only {SAMPLING_FIELDS}, got {sorted(unknown)}")
        for name in ("price_prompt_per_mtok", "price_completion_per_mtok"):
            price = getattr(self, name)
            if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0):
                raise SettingsError(f"model {self.slug!r}: {name} must be a number >= 0, got {price!r}")

    @property
    def is_baseline(self) -> bool:
        return self.slug.startswith(BASELINE_PREFIX)

    @property
    def baseline_name(self) -> str:
        return self.slug[len(BASELINE_PREFIX) :]

    def is_reasoning(self, patterns: Iterable[str]) -> bool:
        if self.reasoning is not None:
            return self.reasoning
        lowered = self.slug.lower()
        return any(pattern in lowered for pattern in patterns)


@dataclass(frozen=True)
class EvalSettings:
    """Everything that shapes an evaluation's artifacts (environment excluded)."""

    budgets: Budgets = Budgets()
    sampling: Sampling = Sampling()
    protocols: ProtocolSwitches = ProtocolSwitches()
    concurrency: Concurrency = Concurrency()
    search_backend: str = "archive"
    archive_path: str | None = None
    detector: str = "heuristic"
    cache_mode: str = "record"
    seed: int = 0
    # further knobs of the search side (SearchSettings: search_depth, include_raw_content, …)
    search_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.search_options, Mapping):
            raise SettingsError(f"search_options must be a mapping, got {type(self.search_options).__name__}")
        if self.search_backend not in SEARCH_BACKENDS:
            raise SettingsError(f"search backend must be one of {SEARCH_BACKENDS}, got {self.search_backend!r}")
        if self.detector not in DETECTOR_MODES:
            raise SettingsError(f"detector must be one of {DETECTOR_MODES}, got {self.detector!r}")
        if self.cache_mode not in CACHE_MODES:
            raise SettingsError(f"cache mode must be one of {CACHE_MODES}, got {self.cache_mode!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SettingsError(f"seed must be an integer, got {self.seed!r}")

    @property
    def search_enabled(self) -> bool:
        return self.search_backend != "none" and self.budgets.max_search_calls > 0

    def check_search_ready(self) -> None:
        """What searching models need (baselines never search, so only checked for them)."""
        if self.search_enabled and self.search_backend == "archive" and not self.archive_path:
            raise SettingsError("search backend 'archive' needs an archive path (--archive / evaluate.archive)")


# ---------------------------------------------------------------------------------------
# Environment


def resolve_endpoint(spec: ModelSpec, env: Mapping[str, str], *, need_key: bool = True) -> Endpoint:
    """Base URL and key of ``spec`` from the environment.

    The default pair falls back to the public OpenAI URL when ``OPENAI_BASE_URL`` is unset;
    a model naming its own ``base_url_env`` must have it set. ``need_key=False`` (replay)
    reads no key at all.
    """
    base_url = env.get(spec.base_url_env, "").strip()
    if not base_url:
        if spec.base_url_env != DEFAULT_BASE_URL_ENV:
            raise SettingsError(f"environment variable {spec.base_url_env} is not set (base URL of model {spec.slug!r})")
        base_url = DEFAULT_BASE_URL
    if not re.match(r"^https?://", base_url):
        raise SettingsError(f"environment variable {spec.base_url_env} must be an http(s) URL")
    key = read_key(env, spec.api_key_env, f"model {spec.slug!r}") if need_key else None
    return Endpoint(base_url=base_url.rstrip("/"), api_key=key, key_env=spec.api_key_env)


# ---------------------------------------------------------------------------------------
# Snapshot and fingerprint


def _plain(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def model_record(spec: ModelSpec) -> dict[str, Any]:
    return _plain(asdict(spec))


def config_snapshot(
    settings: EvalSettings,
    models: Iterable[ModelSpec],
    env: Mapping[str, str],
    key_envs: Iterable[str] = (),
    detector: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The redacted settings of a run (paper Table 22, ``config_snapshot``).

    Keys appear only as prefix + sha256-12, one value per variable: a comma-separated key
    pool is redacted as one string, so the snapshot does not reveal how many keys it holds.
    Endpoint URLs are left out (environment, not artifact). ``detector`` is the leak
    detector's own snapshot (model, prompt hash, call parameters) when it is an LLM.
    """
    specs = sorted(models, key=lambda s: s.label)
    wanted_envs = sorted({s.api_key_env for s in specs if not s.is_baseline} | set(key_envs))
    keys = {name: (redact_key(env[name].strip()) if env.get(name, "").strip() else None) for name in wanted_envs}
    return {
        "settings": _plain(asdict(settings)),
        "models": [model_record(s) for s in specs],
        "detector": dict(detector) if detector else None,
        "keys": keys,
    }


def search_key_envs(settings: EvalSettings) -> list[str]:
    """Key variables the search side reads, so the snapshot can fingerprint them (redacted)."""
    names = []
    if settings.search_enabled and settings.search_backend == "tavily":
        names.append("TAVILY_API_KEY")
    if settings.search_enabled and settings.detector == "llm":
        names.append("DETECTOR_API_KEY")
    return names


def resume_fingerprint(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a snapshot a resumed run must share: everything that shapes trials.

    Concurrency, cache mode and keys may change between a run and its resumption.
    """
    settings = {k: v for k, v in snapshot["settings"].items() if k not in ("concurrency", "cache_mode")}
    return {"settings": settings, "models": snapshot["models"], "detector": snapshot.get("detector")}
