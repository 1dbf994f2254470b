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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from oracleproto import prompts
from oracleproto.admission import prediction_cutoff
from oracleproto.harness.faults import AuthError, CallError
from oracleproto.harness.llm import WEB_SEARCH, ChatResult, encode_json
from oracleproto.harness.replay import CallContext
from oracleproto.harness.settings import Budgets, ModelSpec
from oracleproto.parse import parse_answer, parse_belief

WEB_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": WEB_SEARCH,
        "description": "Search the web for information relevant to the question.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for."}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


def _lock_tool_schema(tool: Mapping[str, Any]) -> None:
    """The model may set only ``query``: an argument such as ``end_date`` would let it move χ."""
    parameters = tool["function"]["parameters"]
    if set(parameters["properties"]) != {"query"} or parameters["required"] != ["query"]:
        raise AssertionError("web_search schema drifted: it must expose exactly one argument, 'query'")


_lock_tool_schema(WEB_SEARCH_TOOL)  # checked at import, and not removable by python -O


class ChatModel(Protocol):
    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        context: CallContext,
        messages_json: str | None = None,
    ) -> ChatResult: ...


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


async def run_react(
    *,
    spec: ModelSpec,
    label: str,
    question: TrialQuestion,
    trial: int,
    prompt: str,
    config: LoopConfig,
    model: ChatModel,
    search: SearchTool | None,
) -> LoopResult:
    """Run one trial. A final call error ends it with ``error`` set and the partial trace kept;
    :class:`AuthError` and replay misses propagate (they abort the run)."""
    budgets = config.budgets
    max_steps, max_searches = budgets.max_steps, config.max_search_calls
    chi = prediction_cutoff(question.end_time, budgets.delta_days)
    schema = [WEB_SEARCH_TOOL] if max_searches > 0 else []
    result = LoopResult(messages=[], tools=schema)
    result.append({"role": "user", "content": prompt})
    searches = 0
    announced_budget = False
    pending_continuation = False
    min_searches = budgets.min_search_calls if max_searches > 0 else 0

    def nudge_fits(state: prompts.LoopState) -> bool:
        """A nudge is the next turn's only injection: a later step than this, and not one
        that the penultimate warning or the last-step cutoff already claims."""
        steps_after = state.steps_left - 1
        return steps_after >= 1 and (not budgets.force_final or steps_after > budgets.lookahead)

    def parsed(text: str | None) -> str | None:
        return parse_answer(text, question.question_type, question.options, question.choice_type)

    async def call_model(step: int, tools: list[dict[str, Any]]) -> ChatResult | None:
        """The reply, or None when a call error ended the trial (recorded on ``result``)."""
        context = CallContext(model=label, q_id=question.q_id, trial=trial, step=step)
        try:
            reply = await model.complete(spec, result.messages, tools, context, result.messages_json())
        except AuthError:
            raise
        except CallError as exc:
            result.error, result.error_message = exc.kind, exc.message
            return None
        result.add_call(reply, spec)
        result.append(reply.message)
        return reply

    for step in range(1, max_steps + 1):
        state = prompts.LoopState(step, max_steps, searches, max_searches)
        spent = max_searches == 0 or searches >= max_searches
        tools_off = spent and (budgets.drop_tools_when_spent or max_searches == 0)
        injection: str | None = None
        if budgets.force_final and state.steps_left == 1:
            injection, tools_off = prompts.last_step_directive(state), True
        elif budgets.force_final and 2 <= state.steps_left <= budgets.lookahead:
            injection = prompts.penultimate_directive(state, search_available=not tools_off)
        elif budgets.drop_tools_when_spent and max_searches > 0 and spent and not announced_budget:
            injection, announced_budget = prompts.search_budget_spent_directive(state), True
        elif pending_continuation:
            injection = prompts.continuation_directive(state, search_available=not tools_off)
        pending_continuation = False
        if injection is not None:
            result.append({"role": "user", "content": injection})
        tools = [] if tools_off else schema

        reply = await call_model(step, tools)
        if reply is None:
            return result

        if not reply.tool_calls:
            # the last content turn is the answer, even one given before a nudge: if the
            # model never searches, its boxed reply still counts (the reference discards it)
            result.raw_output = reply.message["content"]
            if searches < min_searches and result.nudges_used < budgets.max_nudges and nudge_fits(state):
                result.nudges_used += 1
                next_state = prompts.LoopState(step + 1, max_steps, searches, max_searches)
                result.append({"role": "user", "content": prompts.min_search_nudge(next_state, min_searches)})
                continue
            if parsed(result.raw_output):
                break
            pending_continuation = True
            continue

        for seq, call in enumerate(reply.tool_calls, start=1):
            name = call["function"]["name"]
            reason: str | None = None
            query: str | None = None
            if name != WEB_SEARCH:
                reason = f"unknown tool: {name}"
            elif not tools or search is None:
                reason = "web_search is not available at this step"
            elif searches >= max_searches:
                reason = "search budget exceeded"
            else:
                query, reason = tool_arguments_query(call["function"]["arguments"])
            if reason is not None:
                strips_next = step + 1 >= max_steps or (budgets.drop_tools_when_spent and searches >= max_searches)
                status = prompts.LoopState(step, max_steps, searches, max_searches)
                result.append(_tool_message(call, prompts.tool_error_content(reason, status, strips_next)))
                continue
            assert query is not None and search is not None
            outcome = await search.search(query, chi, CallContext(label, question.q_id, trial, step, seq))
            searches += 1
            result.search_calls.append(outcome.to_search_call())
            result.cost_usd += float(getattr(outcome, "cost_usd", 0.0) or 0.0)
            payload = json.dumps(outcome.to_llm_payload(), ensure_ascii=False)
            result.append(_tool_message(call, payload))

    result.pred = parsed(result.raw_output)
    if result.pred is None and budgets.final_answer_retry:
        result.append({"role": "user", "content": prompts.final_answer_retry_directive(max_steps)})
        result.final_answer_retry_used = True
        reply = await call_model(max_steps + 1, [])
        if reply is None:
            return result
        if not reply.tool_calls:
            result.raw_output = reply.message["content"]
        result.pred = parsed(result.raw_output)
    if config.belief:
        result.belief = parse_belief(result.raw_output, question.options, question.choice_type)
    return result
