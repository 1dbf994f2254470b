import asyncio
import copy
import datetime as dt
import json
import re

import pytest

from oracleproto import tools
from oracleproto.errors import ConfigError
from oracleproto.harness import react
from oracleproto.harness.faults import AuthError
from oracleproto.harness.react import (
    WEB_SEARCH_TOOL,
    LoopConfig,
    TrialQuestion,
    run_react,
)
from oracleproto.harness.settings import Budgets, ModelSpec
from tests.harness.fakes import (
    FakeSearch,
    ScriptedModel,
    call_error,
    calls,
    say,
    search_call,
)

TAU = dt.date(2026, 3, 12)
CHI = dt.date(2026, 3, 11)
SPEC = ModelSpec(label="m", slug="vendor/model")
MC = TrialQuestion("q1", "multiple_choice", "single", ("a", "b", "c"), TAU)


def run(model, search=None, *, budgets=Budgets(), search_enabled=True, question=MC, belief=False):
    config = LoopConfig(budgets, search_enabled and search is not None, belief)
    return asyncio.run(
        run_react(spec=SPEC, label="m", question=question, trial=2, prompt="PROMPT", config=config, model=model, search=search)
    )


def user_texts(seen):
    return [m["content"] for m in seen.messages if m["role"] == "user"]


def test_boxed_answer_ends_the_trial():
    model = ScriptedModel([say("I think \\boxed{B}")])
    result = run(model, FakeSearch())
    assert result.pred == "B" and result.error is None
    assert result.react_steps == 1 and result.tool_calls_count == 0
    assert result.messages == [{"role": "user", "content": "PROMPT"}, {"role": "assistant", "content": "I think \\boxed{B}"}]
    assert model.seen[0].tools == [WEB_SEARCH_TOOL]
    assert (result.prompt_tokens, result.completion_tokens, result.reasoning_tokens, result.latency_ms) == (100, 10, 2, 7)
    assert result.finish_reason == "stop" and result.response_id == "scripted-1"


def test_searches_use_the_prediction_cutoff_and_feed_results_back():
    search = FakeSearch()
    model = ScriptedModel([calls(search_call("first")), calls(search_call("second", call_id="c2")), say("\\boxed{A}")])
    result = run(model, search)
    assert [(q, d) for q, d, _ in search.calls] == [("first", CHI), ("second", CHI)]
    assert [(c.step, c.seq, c.trial, c.q_id) for _, _, c in search.calls] == [(1, 1, 2, "q1"), (2, 1, 2, "q1")]
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2"]
    payload = json.loads(tool_messages[0]["content"])
    assert payload["query"] == "first" and len(payload["results"]) == 2
    assert "end_date" not in tool_messages[0]["content"] and CHI.isoformat() not in tool_messages[0]["content"]
    assert result.tool_calls_count == 2 and result.pred == "A"
    assert [entry["end_date"] for entry in result.search_calls] == [CHI.isoformat()] * 2


def test_a_date_in_the_tool_arguments_is_ignored():
    search = FakeSearch()
    sneaky = search_call(arguments=json.dumps({"query": "x", "end_date": "2030-01-01", "days": 9999}))
    run(ScriptedModel([calls(sneaky), say("\\boxed{A}")]), search)
    assert search.calls[0][:2] == ("x", CHI)


def test_delta_moves_the_cutoff():
    search = FakeSearch()
    run(ScriptedModel([calls(search_call("x")), say("\\boxed{A}")]), search, budgets=Budgets(delta_days=7))
    assert search.calls[0][1] == TAU - dt.timedelta(days=7)


def test_search_budget_is_enforced_per_call_and_tools_are_revoked():
    search = FakeSearch()
    budgets = Budgets(max_search_calls=1)
    model = ScriptedModel([calls(search_call("a"), search_call("b", call_id="c2")), say("\\boxed{C}")])
    result = run(model, search, budgets=budgets)
    assert len(search.calls) == 1
    rejected = json.loads(result.messages[3]["content"])
    assert rejected["error"] == "search budget exceeded"
    assert rejected["status"].startswith("step 1/6 (6 remaining) · web_search 1/1 used (0 left).")
    second = model.seen[1]
    assert second.tools == []
    assert user_texts(second)[-1].startswith("[Harness status] step 2/6 (5 remaining) · web_search 1/1 used (0 left).\nYou have used all 1")


def test_budget_notice_fires_once():
    budgets = Budgets(max_search_calls=1)
    model = ScriptedModel([calls(search_call("a")), say("thinking"), say("still thinking"), say("\\boxed{A}")])
    run(model, FakeSearch(), budgets=budgets)
    notices = [t for t in user_texts(model.seen[-1]) if "You have used all" in t]
    assert len(notices) == 1


def test_no_user_message_between_a_tool_call_and_its_reply():
    model = ScriptedModel([calls(search_call("a"), search_call("b", call_id="c2")), say("\\boxed{A}")])
    result = run(model, FakeSearch(), budgets=Budgets(max_search_calls=1))
    roles = [m["role"] for m in result.messages]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]


def test_last_step_removes_tools_and_forces_the_box():
    model = ScriptedModel([say("hmm"), say("hmm again")])
    result = run(model, FakeSearch(), budgets=Budgets(max_steps=2, lookahead=1))
    last = model.seen[1]
    assert last.tools == []
    assert user_texts(last)[-1].startswith("[Harness status] step 2/2 (1 remaining)")
    assert "final step" in user_texts(last)[-1]
    assert result.pred is None and result.error is None and result.raw_output == "hmm again"
    assert result.react_steps == 2


def test_penultimate_warning_keeps_tools_while_budget_remains():
    model = ScriptedModel([say("a"), say("b"), say("\\boxed{A}")])
    run(model, FakeSearch(), budgets=Budgets(max_steps=3, lookahead=2))
    second = model.seen[1]
    assert second.tools == [WEB_SEARCH_TOOL]
    assert "ONE more web_search" in user_texts(second)[-1]
    # the penultimate warning outranks the unboxed-content continuation
    assert not any("no parseable" in t for t in user_texts(second))


def test_unboxed_reply_gets_a_continuation():
    model = ScriptedModel([say("no box yet"), say("\\boxed{A}")])
    result = run(model, FakeSearch())
    assert "Your last reply had no parseable" in user_texts(model.seen[1])[-1]
    assert result.pred == "A"


def test_content_beside_tool_calls_is_not_the_answer():
    model = ScriptedModel([calls(search_call("a"), content="\\boxed{B}"), say("\\boxed{C}")])
    assert run(model, FakeSearch()).pred == "C"


def test_final_answer_is_the_last_content_turn():
    # the box arrives in a content turn that does not parse; later turns are tool calls only
    model = ScriptedModel([say("\\boxed{Z}"), calls(search_call("a")), say("\\boxed{B}")])
    assert run(model, FakeSearch()).pred == "B"


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (search_call(name="browse"), "unknown tool: browse"),
        (search_call(arguments="{not json"), "invalid arguments JSON"),
        (search_call(arguments="[1]"), "arguments must be a JSON object"),
        (search_call(arguments=""), "missing required argument: query"),
        (search_call(arguments='{"query": "  "}'), "query must be a non-empty string"),
        (search_call(arguments='{"query": 3}'), "query must be a non-empty string"),
    ],
)
def test_bad_tool_calls_get_tool_errors_and_cost_no_search(call, reason):
    search = FakeSearch()
    result = run(ScriptedModel([calls(call), say("\\boxed{A}")]), search)
    assert search.calls == []
    assert json.loads(result.messages[2]["content"])["error"].startswith(reason)
    assert result.tool_calls_count == 0


def test_tool_call_when_tools_are_off_is_rejected():
    search = FakeSearch()
    budgets = Budgets(max_steps=1, lookahead=1)
    result = run(ScriptedModel([calls(search_call("a"))]), search, budgets=budgets)
    assert search.calls == []
    assert json.loads(result.messages[-1]["content"])["error"] == "web_search is not available at this step"


def test_search_disabled_offers_no_tools_and_no_budget_notice():
    model = ScriptedModel([say("x"), say("\\boxed{A}")])
    result = run(model, None)
    assert all(seen.tools == [] for seen in model.seen)
    assert result.tools == []
    assert not any("You have used all" in t for t in user_texts(model.seen[1]))
    assert "web_search disabled" in user_texts(model.seen[1])[-1]


def test_call_error_ends_the_trial_with_partial_trace():
    model = ScriptedModel([calls(search_call("a")), call_error("rate_limit")])
    result = run(model, FakeSearch())
    assert result.error == "rate_limit" and result.pred is None
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool"]
    assert result.react_steps == 1


def test_auth_error_propagates():
    with pytest.raises(AuthError):
        run(ScriptedModel([AuthError("bad key")]), FakeSearch())


def test_cost_from_provider_or_prices():
    provider = run(ScriptedModel([say("\\boxed{A}")], cost=0.25), FakeSearch(cost_usd=0.01))
    assert provider.cost_usd == 0.25
    priced_spec = ModelSpec(label="m", slug="x", price_prompt_per_mtok=2.0, price_completion_per_mtok=10.0)
    config = LoopConfig(Budgets(), True)
    search = FakeSearch(cost_usd=0.01)
    priced = asyncio.run(
        run_react(spec=priced_spec, label="m", question=MC, trial=1, prompt="P", config=config,
                  model=ScriptedModel([calls(search_call("a")), say("\\boxed{A}")]), search=search)
    )
    # 2 calls x (100 prompt x 2 + 10 completion x 10) / 1e6, plus the search's own cost
    assert priced.cost_usd == pytest.approx(2 * 300 / 1e6 + 0.01)


def test_belief_is_parsed_when_on():
    text = '<belief>{"probabilities": {"A": 0.2, "B": 0.5, "C": 0.3}}</belief> \\boxed{B}'
    assert run(ScriptedModel([say(text)]), FakeSearch(), belief=True).belief == [0.2, 0.5, 0.3]
    assert run(ScriptedModel([say(text)]), FakeSearch()).belief is None


def test_model_sees_messages_as_sent_not_mutated_later():
    model = ScriptedModel([calls(search_call("a")), say("\\boxed{A}")])
    run(model, FakeSearch())
    assert [m["role"] for m in model.seen[0].messages] == ["user"]
    assert [m["role"] for m in model.seen[1].messages] == ["user", "assistant", "tool"]


def test_web_search_schema_is_locked():
    parameters = WEB_SEARCH_TOOL["function"]["parameters"]
    assert set(parameters["properties"]) == {"query"} and parameters["required"] == ["query"]
    drifted = copy.deepcopy(WEB_SEARCH_TOOL)
    drifted["function"]["parameters"]["properties"]["end_date"] = {"type": "string"}
    with pytest.raises(AssertionError, match="exactly one argument"):
        tools._lock_tool_schema(drifted)


def test_prediction_cutoff():
    assert react.prediction_cutoff(TAU, 1) == CHI


def test_min_search_nudge_asks_for_searches_before_the_answer():
    search = FakeSearch()
    model = ScriptedModel([say("\\boxed{A}"), calls(search_call("a")), say("\\boxed{B}")])
    result = run(model, search, budgets=Budgets(min_search_calls=1))
    nudge = user_texts(model.seen[1])[-1]
    assert nudge.startswith("[Harness status] step 2/6 (5 remaining) · web_search 0/4 used (4 left).")
    assert "at least 1 source(s)" in nudge
    assert model.seen[1].tools == [WEB_SEARCH_TOOL]
    assert (result.nudges_used, result.pred, result.tool_calls_count, result.react_steps) == (1, "B", 1, 3)


def test_nudges_are_capped_and_the_unsearched_answer_still_stands():
    model = ScriptedModel([say("\\boxed{A}"), say("\\boxed{B}"), say("\\boxed{C}")])
    result = run(model, FakeSearch(), budgets=Budgets(min_search_calls=2, max_nudges=2))
    assert result.nudges_used == 2 and result.pred == "C" and result.react_steps == 3


def test_no_nudge_where_the_penultimate_warning_or_the_last_step_speaks():
    # T = 3, lookahead 2: step 2 gets the penultimate warning, so a nudge never fits
    model = ScriptedModel([say("\\boxed{A}")])
    result = run(model, FakeSearch(), budgets=Budgets(max_steps=3, min_search_calls=1))
    assert result.nudges_used == 0 and result.pred == "A" and result.react_steps == 1


def test_no_nudge_without_search():
    model = ScriptedModel([say("\\boxed{A}")])
    result = run(model, FakeSearch(), budgets=Budgets(min_search_calls=1), search_enabled=False)
    assert result.nudges_used == 0 and result.pred == "A"


def test_bail_out_retry_makes_one_tool_less_call_when_unanswered():
    model = ScriptedModel([say("thinking"), say("still thinking"), say("\\boxed{C}")])
    result = run(model, FakeSearch(), budgets=Budgets(max_steps=2, lookahead=1, final_answer_retry=True))
    retry = model.seen[2]
    assert retry.tools == [] and "Time to commit" in user_texts(retry)[-1]
    assert result.final_answer_retry_used and result.pred == "C" and result.react_steps == 3


def test_bail_out_retry_is_off_by_default_and_idle_after_an_answer():
    unanswered = run(ScriptedModel([say("a"), say("b")]), FakeSearch(), budgets=Budgets(max_steps=2, lookahead=1))
    assert unanswered.pred is None and not unanswered.final_answer_retry_used and unanswered.react_steps == 2
    answered = run(ScriptedModel([say("\\boxed{A}")]), FakeSearch(), budgets=Budgets(final_answer_retry=True))
    assert answered.pred == "A" and not answered.final_answer_retry_used and answered.react_steps == 1


def test_bail_out_retry_call_error_ends_the_trial_with_error():
    model = ScriptedModel([say("a"), call_error("server_5xx")])
    result = run(model, FakeSearch(), budgets=Budgets(max_steps=1, lookahead=1, final_answer_retry=True))
    assert result.error == "server_5xx" and result.final_answer_retry_used


@pytest.mark.parametrize(
    "kwargs, message",
    [({"min_search_calls": 5}, "min_search_calls: must be <= max_search_calls (4), got 5"),
     ({"max_nudges": -1}, "max_nudges: must be an integer >= 0, got -1"),
     ({"final_answer_retry": "yes"}, "final_answer_retry: must be true or false, got 'yes'")],
)
def test_nudge_and_retry_settings_are_checked(kwargs, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Budgets.checked(**kwargs)
