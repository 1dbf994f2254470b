"""Typed evaluation settings: params shape artifacts, the environment only supplies endpoints and keys.

- :class:`Budgets`, :class:`ModelSpec` and :class:`EvalSettings` are frozen records checked
  on construction; they extend the params models of :mod:`oracleproto.config`, which hold
  every default (the paper's, §4.1.3 and Table 12: T = 6, C = 4, R = 5, n = 3, δ = 1).
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
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError, field_validator

# ONLINE_SUFFIX, BASELINE_PREFIX, Sampling and Concurrency are imported from here too.
from oracleproto.config import (
    BASELINE_PREFIX,
    DEFAULT_API_KEY_ENV,
    DEFAULT_BASE_URL_ENV,
    Delta,
    LoopBudgets,
    ModelOptions,
    RunKnobs,
    Text,
    check_slug,
    config_error,
    search_offered,
)
from oracleproto.errors import ConfigError

# Params name → the harness's baseline name. Params spell `no` always_no (no YAML dialect reads
# that as false); the harness keeps `no`, so the label baseline:no@cutoff-… of earlier runs'
# artifacts stays valid.
BASELINES = {"uniform": "uniform", "first": "first", "always_no": "no", "base_rate": "base_rate"}
BASELINE_NAMES = tuple(BASELINES.values())
DEFAULT_BASE_URL = "https://api.openai.com/v1"

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
        raise ConfigError(f"environment variable {name} is not set (needed for {purpose})")
    if is_placeholder(value):
        raise ConfigError(f"environment variable {name} holds a placeholder, not a key (needed for {purpose})")
    SECRETS.register(value.strip())
    return value.strip()


# ---------------------------------------------------------------------------------------
# Records


class Budgets(LoopBudgets, Delta):
    """The loop's budgets (``evaluate``) and δ (``admit.delta_days``)."""


class ModelSpec(ModelOptions):
    """One evaluated model.

    ``label`` is the row value of ``model`` in the trial table (a virtual slug such as
    ``baseline:uniform@cutoff-2024-04-30`` keeps (model, q_id, trial) unique); ``slug`` is
    what is sent to the provider, or the baseline name.
    """

    label: Text
    slug: Text
    cutoff: dt.date | None = None

    def __init__(self, /, **data: Any) -> None:
        # Specs are built from what users type (--model, models:), so a bad one is one line.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(str(config_error(exc, ModelSpec))) from None

    @field_validator("label", "slug")
    @classmethod
    def _no_browsing_variant(cls, value: str) -> str:
        return check_slug(value)

    @field_validator("slug")
    @classmethod
    def _known_baseline(cls, slug: str) -> str:
        if slug.startswith(BASELINE_PREFIX) and slug[len(BASELINE_PREFIX) :] not in BASELINE_NAMES:
            raise ValueError(f"unknown baseline {slug!r}; known: {', '.join(BASELINE_PREFIX + n for n in BASELINE_NAMES)}")
        return slug

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


class EvalSettings(RunKnobs):
    """Everything that shapes an evaluation's artifacts (environment excluded)."""

    budgets: Budgets = Budgets()

    @property
    def search_enabled(self) -> bool:
        return search_offered(self.search_backend, self.budgets.max_search_calls)

    def check_search_ready(self) -> None:
        """What searching models need (baselines never search, so only checked for them)."""
        if self.search_enabled and self.search_backend == "archive" and not self.archive_path:
            raise ConfigError("search backend 'archive' needs an archive path (--archive / evaluate.archive)")


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
            raise ConfigError(f"environment variable {spec.base_url_env} is not set (base URL of model {spec.slug!r})")
        base_url = DEFAULT_BASE_URL
    if not re.match(r"^https?://", base_url):
        raise ConfigError(f"environment variable {spec.base_url_env} must be an http(s) URL")
    key = read_key(env, spec.api_key_env, f"model {spec.slug!r}") if need_key else None
    return Endpoint(base_url=base_url.rstrip("/"), api_key=key, key_env=spec.api_key_env)


# A replay calls no endpoint: its model clients get this address and no key.
REPLAY_BASE_URL = "http://replay.invalid"


def replay_endpoint(spec: ModelSpec) -> Endpoint:
    """The endpoint of ``spec`` in a replay: nothing read from the environment, no key."""
    return Endpoint(base_url=REPLAY_BASE_URL, api_key=None, key_env=spec.api_key_env)


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
    return _plain(spec.model_dump())


def settings_record(settings: EvalSettings) -> dict[str, Any]:
    """The settings as the snapshot holds them: search options as given (the defaults they
    leave out are the code's), so run keys and manifests of earlier runs stay valid."""
    record = settings.model_dump(exclude={"search_options"})
    return _plain({**record, "search_options": settings.search_options.model_dump(exclude_unset=True)})


def config_snapshot(
    settings: EvalSettings,
    models: Iterable[ModelSpec],
    env: Mapping[str, str],
    key_envs: Iterable[str] = (),
    detector: Mapping[str, Any] | None = None,
    recorded_keys: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The redacted settings of a run (paper Table 22, ``config_snapshot``).

    Keys appear only as prefix + sha256-12, one value per variable: a comma-separated key
    pool is redacted as one string, so the snapshot does not reveal how many keys it holds.
    Endpoint URLs are left out (environment, not artifact). ``detector`` is the leak
    detector's own snapshot (model, prompt hash, call parameters) when it is an LLM.
    ``recorded_keys`` (a replay) are the redacted keys of the run that made the calls.
    """
    specs = sorted(models, key=lambda s: s.label)
    wanted_envs = sorted({s.api_key_env for s in specs if not s.is_baseline} | set(key_envs))
    if recorded_keys is not None:
        keys = {name: recorded_keys.get(name) for name in wanted_envs}
    else:
        keys = {name: (redact_key(env[name].strip()) if env.get(name, "").strip() else None) for name in wanted_envs}
    return {
        "settings": settings_record(settings),
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

    Concurrency, cache mode, the failure-streak limit and keys may change between a run
    and its resumption.
    """
    volatile = ("concurrency", "cache_mode", "max_consecutive_failures")
    settings = {k: v for k, v in snapshot["settings"].items() if k not in volatile}
    return {"settings": settings, "models": snapshot["models"], "detector": snapshot.get("detector")}
