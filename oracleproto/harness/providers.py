"""Model providers: everything the ReAct loop can ask for a reply, behind one protocol.

An evaluated model is named by a slug. A slug whose prefix names a registered offline
provider (``baseline:first``, ``scripted:replies.json``) is answered in-process; any other
slug is an API model, answered by :class:`~oracleproto.harness.llm.ChatClient` over an
OpenAI-compatible endpoint. The loop sees no difference: one path for every model.

- ``baseline:NAME`` — the forecasters of :mod:`oracleproto.harness.baselines`: one boxed
  reply, no search, no tokens, no cost.
- ``scripted:PATH`` — replies read from a JSON file, replayed per trial in order: a list of
  assistant messages for every question, or ``{q_id or "*": [messages]}``. A message is
  ``{"content": …}`` or ``{"tool_calls": [{"function": {"name": "web_search",
  "arguments": "{\\"query\\": …}"}}]}``. It drives the whole loop, search included, with no
  endpoint and no key (a dry run of a configuration, or a test of the harness).
"""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from oracleproto.errors import ConfigError
from oracleproto.harness import baselines
from oracleproto.harness.llm import ChatResult, canonical_assistant_message
from oracleproto.harness.replay import CallContext
from oracleproto.harness.settings import ModelSpec


class ModelProvider(Protocol):
    """What the loop calls for each assistant turn."""

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult: ...


@dataclass(frozen=True)
class OfflineQuestion:
    """What an offline provider may know of a question (never its gold answer)."""

    question_type: str
    choice_type: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class ProviderInputs:
    """What building an offline provider may use: the run's seed, the job's questions and,
    for ``baseline:base_rate``, the train split's (question_type, choice_type, answer) rows."""

    seed: int
    questions: Mapping[str, OfflineQuestion]
    train_rows: Sequence[tuple[str, str, str]] | None = None


def offline_reply(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, step: int = 1) -> ChatResult:
    """An assistant turn produced in-process: no tokens, no latency, no provider fields."""
    raw: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        raw["tool_calls"] = tool_calls
    message = canonical_assistant_message(raw, step)
    return ChatResult(
        message=message,
        finish_reason=None,
        response_id=None,
        system_fingerprint=None,
        prompt_tokens=0,
        completion_tokens=0,
        reasoning_tokens=0,
        provider_cost_usd=None,
        latency_ms=0,
    )


@dataclass
class BaselineProvider:
    """A baseline forecaster as a model: one boxed reply per trial."""

    name: str
    inputs: ProviderInputs
    uses_tools = False

    def __post_init__(self) -> None:
        self._base_rates = (
            baselines.BaseRates.from_rows(self.inputs.train_rows) if self.inputs.train_rows is not None else None
        )

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult:
        question = self.inputs.questions[context.q_id]
        indices = baselines.baseline_indices(
            self.name,
            q_id=context.q_id,
            trial=context.trial,
            question_type=question.question_type,
            choice_type=question.choice_type,
            options=question.options,
            seed=self.inputs.seed,
            base_rates=self._base_rates,
        )
        return offline_reply(baselines.baseline_reply(self.name, question.question_type, question.options, indices), step=context.step)


@dataclass(frozen=True)
class ProviderCall:
    """One call a scripted provider was given (for inspection after a run)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    context: CallContext


@dataclass
class ScriptedProvider:
    """Replies from a script; records every call it was given in ``seen``.

    A list script is consumed in call order across all trials (a unit test drives one loop
    at a time); a mapping script is replayed per (q_id, trial), ``"*"`` for any question, so
    concurrent trials each get their own copy. A reply that is an exception is raised.
    """

    script: list[Any] | Mapping[str, Sequence[Any]]
    cost: float | None = None
    seen: list[ProviderCall] = field(default_factory=list)
    uses_tools = True

    def __post_init__(self) -> None:
        self._cursor: collections.Counter[tuple[str, int]] = collections.Counter()

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        try:
            script = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"scripted model {path}: cannot read the script: {exc}") from exc
        replies = script.values() if isinstance(script, dict) else [script]
        if not all(isinstance(r, list) and all(isinstance(m, dict) for m in r) for r in replies):
            raise ConfigError(f"scripted model {path}: expected a list of messages or {{q_id: [messages]}}")
        return cls(script)

    def _next(self, context: CallContext) -> Any:
        if isinstance(self.script, list):
            if not self.script:
                raise ConfigError(f"scripted model: script exhausted at {context.describe()}")
            return self.script.pop(0)
        replies = self.script.get(context.q_id, self.script.get("*"))
        position = self._cursor[(context.q_id, context.trial)]
        if not replies or position >= len(replies):
            raise ConfigError(f"scripted model: no reply {position + 1} for {context.describe()}")
        self._cursor[(context.q_id, context.trial)] += 1
        return replies[position]

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult:
        self.seen.append(ProviderCall(json.loads(json.dumps(list(messages))), list(tools), context))
        reply = self._next(context)
        if isinstance(reply, BaseException):
            raise reply
        message = canonical_assistant_message({"role": "assistant", **reply}, context.step)
        return ChatResult(
            message=message,
            finish_reason="tool_calls" if message.get("tool_calls") else "stop",
            response_id=f"scripted-{context.step}",
            system_fingerprint="scripted",
            prompt_tokens=100,
            completion_tokens=10,
            reasoning_tokens=2,
            provider_cost_usd=self.cost,
            latency_ms=7,
        )


OfflineFactory = Callable[[str, ProviderInputs], Any]
OFFLINE_PROVIDERS: dict[str, OfflineFactory] = {}


def register_provider(prefix: str, factory: OfflineFactory) -> None:
    """Make ``PREFIX:ARG`` slugs answered by ``factory(ARG, inputs)``."""
    OFFLINE_PROVIDERS[prefix] = factory


register_provider("baseline", BaselineProvider)
register_provider("scripted", lambda path, inputs: ScriptedProvider.from_file(path))


def offline_prefix(slug: str) -> str | None:
    """The registered offline provider of ``slug``, or None for an API model."""
    prefix, sep, _ = slug.partition(":")
    return prefix if sep and prefix in OFFLINE_PROVIDERS else None


def offline_provider(slug: str, inputs: ProviderInputs) -> Any:
    prefix = offline_prefix(slug)
    if prefix is None:
        raise ConfigError(f"{slug!r} is not an offline model (known prefixes: {sorted(OFFLINE_PROVIDERS)})")
    return OFFLINE_PROVIDERS[prefix](slug.partition(":")[2], inputs)
