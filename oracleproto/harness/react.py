"""The time-masked ReAct loop of one trial (paper Algorithm 1, Table 13).

One user message (renderer R), then up to T assistant turns. At the top of every turn at
most one harness injection fires, by priority: last-step hard cutoff, penultimate warning,
search-budget notice (once), continuation after an unboxed reply. Tools are offered unless
this is the last step or the search budget is spent. A content turn with a parseable box
ends the trial, unless the run asks for a minimum number of searches and a nudge fits
(then the model is asked to search first; the reply still stands if it never does); a
tool-call turn runs each ``web_search`` (up to C) against the backend with ``end_date`` = χ,
computed here from the question and never shown to the model: the tool schema exposes only
``query`` and any other argument the model sends is ignored. With the bail-out retry on, a
loop that ends with no parseable answer gets one more tool-less call.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from oracleproto import prompts
from oracleproto.admission import prediction_cutoff
from oracleproto.harness.faults import AUTH, AuthError, CallError
from oracleproto.harness.llm import ChatResult, encode_json
from oracleproto.harness.providers import ModelProvider
from oracleproto.harness.replay import CallContext
from oracleproto.harness.settings import Budgets, ModelSpec
from oracleproto.parse import parse_answer, parse_belief
from oracleproto.tools import WEB_SEARCH, WEB_SEARCH_TOOL


class SearchTool(Protocol):
    async def search(self, query: str, end_date: dt.date, context: CallContext) -> Any: ...


@dataclass(frozen=True)
class TrialQuestion:
    """What the loop needs of a question: identity, parse inputs, τ."""

    q_id: str
    question_type: str
    choice_type: str
    options: tuple[str, ...]
    end_time: dt.date


@dataclass
class LoopResult:
    """Everything one trial produced (the trial row minus the question's own columns)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    encoded: list[str] = field(default_factory=list)  # each message's JSON, encoded once
    raw_output: str | None = None
    pred: str | None = None
    belief: list[float] | None = None
    error: str | None = None
    error_message: str | None = None
    search_calls: list[dict[str, Any]] = field(default_factory=list)
    react_steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    latency_ms: int = 0
    cost_usd: float = 0.0
    finish_reason: str | None = None
    response_id: str | None = None
    system_fingerprint: str | None = None
    nudges_used: int = 0
    final_answer_retry_used: bool = False
    invalid_usage: set[str] = field(default_factory=set)  # provider usage fields taken as unknown
    search_errors: int = 0  # searches that returned an error instead of results
    detector_errors: int = 0  # searches whose leak-detector calls failed (results dropped: fail closed)

    @property
    def tool_calls_count(self) -> int:
        return len(self.search_calls)

    def append(self, message: dict[str, Any]) -> None:
        if len(self.encoded) < len(self.messages):
            self.encoded = [encode_json(m) for m in self.messages]
        self.messages.append(message)
        self.encoded.append(encode_json(message))

    def messages_json(self) -> str:
        """The trace as compact JSON, from the per-message encodings when they are complete."""
        if len(self.encoded) != len(self.messages):
            return encode_json(self.messages)
        return "[" + ",".join(self.encoded) + "]"

    def add_call(self, result: ChatResult, spec: ModelSpec) -> None:
        self.react_steps += 1
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.reasoning_tokens += result.reasoning_tokens
        self.latency_ms += result.latency_ms
        self.cost_usd += call_cost(result, spec)
        self.invalid_usage |= set(result.invalid_usage)
        self.finish_reason = result.finish_reason
        self.response_id = result.response_id
        self.system_fingerprint = result.system_fingerprint


def call_cost(result: ChatResult, spec: ModelSpec) -> float:
    """Provider ``usage.cost`` when present, else the per-model prices (USD per 1M tokens), else 0."""
    if result.provider_cost_usd is not None:
        return result.provider_cost_usd
    prompt_price = spec.price_prompt_per_mtok or 0.0
    completion_price = spec.price_completion_per_mtok or 0.0
    return (result.prompt_tokens * prompt_price + result.completion_tokens * completion_price) / 1_000_000


def tool_arguments_query(arguments: str) -> tuple[str | None, str | None]:
    """``(query, None)`` or ``(None, reason)``; arguments other than ``query`` are ignored."""
    if arguments is None or not arguments.strip():
        parsed: Any = {}
    else:
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return None, f"invalid arguments JSON: {exc.msg}"
    if not isinstance(parsed, dict):
        return None, "arguments must be a JSON object"
    if "query" not in parsed:
        return None, "missing required argument: query"
    query = parsed["query"]
    if not isinstance(query, str) or not query.strip():
        return None, "query must be a non-empty string"
    return query.strip(), None


@dataclass(frozen=True)
class LoopConfig:
    budgets: Budgets
    search_enabled: bool
    belief: bool = False

    @property
    def max_search_calls(self) -> int:
        """C_eff: the search budget the model is told about (0 when search is off)."""
        return self.budgets.max_search_calls if self.search_enabled else 0


def _tool_message(call: Mapping[str, Any], content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


# ---------------------------------------------------------------------------------------
# Policy: what the harness says and offers at the top of a turn (pure, table-tested)


@dataclass(frozen=True)
class TurnState:
    """The loop's state at the top of a turn."""

    step: int
    max_steps: int
    searches: int
    max_searches: int
    announced_budget: bool = False  # the search-budget notice was given
    pending_continuation: bool = False  # the last reply had no parseable box

    @property
    def status(self) -> prompts.LoopState:
        return prompts.LoopState(self.step, self.max_steps, self.searches, self.max_searches)


@dataclass(frozen=True)
class Turn:
    """The policy's decision: at most one injection, and whether tools are withheld."""

    injection: str | None
    tools_off: bool
    announces_budget: bool = False


def next_injection(state: TurnState, budgets: Budgets) -> Turn:
    """At most one injection per turn, by priority: last-step hard cutoff, penultimate
    warning, search-budget notice (once), continuation after an unboxed reply. Tools are
    withheld at the last step and once the search budget is spent."""
    status = state.status
    spent = state.max_searches == 0 or state.searches >= state.max_searches
    tools_off = spent and (budgets.drop_tools_when_spent or state.max_searches == 0)
    if budgets.force_final and status.steps_left == 1:
        return Turn(prompts.last_step_directive(status), tools_off=True)
    if budgets.force_final and 2 <= status.steps_left <= budgets.lookahead:
        return Turn(prompts.penultimate_directive(status, search_available=not tools_off), tools_off)
    if budgets.drop_tools_when_spent and state.max_searches > 0 and spent and not state.announced_budget:
        return Turn(prompts.search_budget_spent_directive(status), tools_off, announces_budget=True)
    if state.pending_continuation:
        return Turn(prompts.continuation_directive(status, search_available=not tools_off), tools_off)
    return Turn(None, tools_off)


def nudge_fits(state: TurnState, budgets: Budgets) -> bool:
    """A minimum-search nudge is the next turn's only injection: a later step than this,
    and not one that the penultimate warning or the last-step cutoff already claims."""
    steps_after = state.status.steps_left - 1
    return steps_after >= 1 and (not budgets.force_final or steps_after > budgets.lookahead)


def tool_call_refusal(call: Mapping[str, Any], state: TurnState, tools_offered: bool) -> tuple[str | None, str | None]:
    """``(query, None)`` for a call the harness runs, else ``(None, reason)``."""
    name = call["function"]["name"]
    if name != WEB_SEARCH:
        return None, f"unknown tool: {name}"
    if not tools_offered:
        return None, "web_search is not available at this step"
    if state.searches >= state.max_searches:
        return None, "search budget exceeded"
    return tool_arguments_query(call["function"]["arguments"])


# ---------------------------------------------------------------------------------------
# Mechanics: one trial


@dataclass
class _Trial:
    """One trial in progress: the loop's inputs, its result and its counters."""

    spec: ModelSpec
    label: str
    question: TrialQuestion
    trial: int
    config: LoopConfig
    model: ModelProvider
    search: SearchTool | None
    result: LoopResult
    searches: int = 0

    def parsed(self, text: str | None) -> str | None:
        q = self.question
        return parse_answer(text, q.question_type, q.options, q.choice_type)

    async def call_model(self, step: int, tools: list[dict[str, Any]]) -> ChatResult | None:
        """The reply, or None when a call error ended the trial (recorded on the result)."""
        result = self.result
        context = CallContext(model=self.label, q_id=self.question.q_id, trial=self.trial, step=step)
        try:
            reply = await self.model.complete(self.spec, result.messages, tools, context, result.messages_json())
        except AuthError:
            raise
        except CallError as exc:
            result.error, result.error_message = exc.kind, exc.message
            return None
        result.add_call(reply, self.spec)
        result.append(reply.message)
        return reply

    async def run_tool_calls(self, reply: ChatResult, state: TurnState, tools_offered: bool) -> None:
        """Run each ``web_search`` (end_date = χ, never the model's); refuse the rest with a reason."""
        budgets, result = self.config.budgets, self.result
        chi = prediction_cutoff(self.question.end_time, budgets.delta_days)
        for seq, call in enumerate(reply.tool_calls, start=1):
            now = TurnState(state.step, state.max_steps, self.searches, state.max_searches)
            query, reason = tool_call_refusal(call, now, tools_offered and self.search is not None)
            if reason is not None:
                strips_next = state.step + 1 >= state.max_steps or (budgets.drop_tools_when_spent and self.searches >= state.max_searches)
                result.append(_tool_message(call, prompts.tool_error_content(reason, now.status, strips_next)))
                continue
            assert query is not None and self.search is not None
            outcome = await self.search.search(query, chi, CallContext(self.label, self.question.q_id, self.trial, state.step, seq))
            self.searches += 1
            entry = outcome.to_search_call()
            if AUTH in (entry.get("error_kind"), entry.get("detector_error_kind")):
                raise AuthError(f"the {'search' if entry.get('error_kind') == AUTH else 'leak detector'} service rejected its key")
            result.search_errors += outcome.error is not None
            result.detector_errors += entry.get("detector_error_kind") is not None
            result.search_calls.append(entry)
            result.cost_usd += float(getattr(outcome, "cost_usd", 0.0) or 0.0)
            result.append(_tool_message(call, json.dumps(outcome.to_llm_payload(), ensure_ascii=False)))

    async def final_answer_retry(self) -> None:
        """One tool-less call when the loop ended with no parseable answer (off by default)."""
        result, max_steps = self.result, self.config.budgets.max_steps
        result.append({"role": "user", "content": prompts.final_answer_retry_directive(max_steps)})
        result.final_answer_retry_used = True
        reply = await self.call_model(max_steps + 1, [])
        if reply is not None and not reply.tool_calls:
            result.raw_output = reply.message["content"]


async def run_react(
    *,
    spec: ModelSpec,
    label: str,
    question: TrialQuestion,
    trial: int,
    prompt: str,
    config: LoopConfig,
    model: ModelProvider,
    search: SearchTool | None,
) -> LoopResult:
    """Run one trial. A final call error ends it with ``error`` set and the partial trace kept;
    :class:`AuthError` and replay misses propagate (they abort the run)."""
    budgets, max_searches = config.budgets, config.max_search_calls
    schema = [WEB_SEARCH_TOOL] if max_searches > 0 else []
    run = _Trial(spec, label, question, trial, config, model, search, LoopResult(messages=[], tools=schema))
    result = run.result
    result.append({"role": "user", "content": prompt})
    min_searches = budgets.min_search_calls if max_searches > 0 else 0
    announced, continuation = False, False
    for step in range(1, budgets.max_steps + 1):
        state = TurnState(step, budgets.max_steps, run.searches, max_searches, announced, continuation)
        turn = next_injection(state, budgets)
        announced, continuation = announced or turn.announces_budget, False
        if turn.injection is not None:
            result.append({"role": "user", "content": turn.injection})
        tools = [] if turn.tools_off else schema
        reply = await run.call_model(step, tools)
        if reply is None:
            return result
        if reply.tool_calls:
            await run.run_tool_calls(reply, state, bool(tools))
            continue
        # the last content turn is the answer, even one given before a nudge: if the model
        # never searches, its boxed reply still counts (the reference discards it)
        result.raw_output = reply.message["content"]
        if run.searches < min_searches and result.nudges_used < budgets.max_nudges and nudge_fits(state, budgets):
            result.nudges_used += 1
            next_status = prompts.LoopState(step + 1, budgets.max_steps, run.searches, max_searches)
            result.append({"role": "user", "content": prompts.min_search_nudge(next_status, min_searches)})
            continue
        if run.parsed(result.raw_output):
            break
        continuation = True
    result.pred = run.parsed(result.raw_output)
    if result.pred is None and budgets.final_answer_retry:
        await run.final_answer_retry()
        if result.error:
            return result
        result.pred = run.parsed(result.raw_output)
    if config.belief:
        result.belief = parse_belief(result.raw_output, question.options, question.choice_type)
    return result
