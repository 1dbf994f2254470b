"""Each search result of a trial lands in the layer that decided its fate, with its text."""

import json

import pytest

from oracleproto.leakaudit.layers import (
    DATE_FILTER,
    DETECTOR,
    HEURISTIC,
    SHOWN,
    RunTraceError,
    layer_columns,
    result_id,
    search_payloads,
    trial_results,
)


@pytest.mark.parametrize(
    "heuristic, detector, expected",
    [
        (None, None, (SHOWN, "", "", "")),  # detector mode off: everything shown
        ("keep", None, (SHOWN, "keep", "keep", "")),  # heuristic mode
        ("drop:published_after_cutoff:2025-03-04", None, (DATE_FILTER, "drop:published_after_cutoff:2025-03-04", "", "")),
        ("drop:undated", None, (DATE_FILTER, "drop:undated", "", "")),
        ("drop:unreadable_published_date", None, (DATE_FILTER, "drop:unreadable_published_date", "", "")),
        ("drop:date_after_cutoff:title:April 2025", None, (HEURISTIC, "keep", "drop:date_after_cutoff:title:April 2025", "")),
        ("keep", "keep", (SHOWN, "keep", "keep", "keep")),
        ("keep", "drop", (DETECTOR, "keep", "keep", "drop")),
        ("keep", "failed:auth", (DETECTOR, "keep", "keep", "failed:auth")),  # fail closed
    ],
)
def test_layer_of_each_verdict_pair(heuristic, detector, expected):
    assert layer_columns(heuristic, detector) == expected


def hit(title, **extra):
    return {"title": title, "url": f"https://n/{title}", "content": f"{title} text", **extra}


def trial_row(calls, payloads, refusal=True):
    messages = [{"role": "user", "content": "prompt"}]
    if refusal:  # a refused tool call: a tool message without results, and no search call
        messages.append({"role": "tool", "tool_call_id": "x", "content": json.dumps({"error": "search budget exceeded", "status": "s"})})
    messages += [{"role": "tool", "tool_call_id": "c", "content": json.dumps(p)} for p in payloads]
    return {"model": "m", "q_id": "q1", "trial": 2, "search_calls": json.dumps(calls), "messages": json.dumps(messages)}


ENTRY = {
    "end_date": "2025-03-01", "error": None, "n_results_raw": 4, "n_results_kept": 1,
    "heuristic_verdicts": ["keep", "drop:undated", "keep", "drop:date_after_cutoff:content:May 2025"],
    "detector_verdicts": ["keep", None, "drop", None],
    "detector_reasons": ["fine", None, "reports the outcome", None],
    "dropped_results": [{"index": 1, **hit("b")}, {"index": 2, **hit("c", raw_content="full page")}, {"index": 3, **hit("d")}],
    "masked_results": [{"verdict": "drop:published_after_cutoff:2025-04-01", **hit("m", published_date="2025-04-01")}],
}  # fmt: skip


def test_a_trial_gives_masked_dropped_and_shown_results_in_order():
    row = trial_row([ENTRY], [{"query": "q", "results": [hit("a", published_date="2025-02-01")]}])
    results = trial_results(row)
    assert [(r.position, r.layer, r.title) for r in results] == [
        ("m1", DATE_FILTER, "m"), ("r0", SHOWN, "a"), ("r1", DATE_FILTER, "b"), ("r2", DETECTOR, "c"), ("r3", HEURISTIC, "d"),
    ]  # fmt: skip
    shown, detector = results[1], results[3]
    assert (shown.published_date, shown.text, shown.detector_reason) == ("2025-02-01", "a text", "fine")
    assert detector.text == "c text\n\n[raw_content]\nfull page" and detector.detector_reason == "reports the outcome"
    assert results[0].date_filter_verdict == "drop:published_after_cutoff:2025-04-01" and results[0].heuristic_verdict == ""
    assert all(r.prediction_cutoff == "2025-03-01" and (r.model, r.q_id, r.trial, r.search) == ("m", "q1", 2, 1) for r in results)
    assert shown.result_id == result_id("m", "q1", 2, 1, "r0") and len({r.result_id for r in results}) == 5


def test_failed_searches_and_trials_without_search_have_no_results():
    failed = {"end_date": "2025-03-01", "error": "tavily_error", "n_results_raw": 0}
    row = trial_row([failed], [{"error": "tavily_error", "message": "m", "results": [], "answer": None}])
    assert trial_results(row) == []
    assert trial_results({"model": "m", "q_id": "q", "trial": 1, "search_calls": None, "messages": None}) == []


def test_a_run_that_did_not_record_its_drops_cannot_be_audited():
    old = {k: v for k, v in ENTRY.items() if k not in ("dropped_results", "masked_results")}
    with pytest.raises(RunTraceError, match="does not record the results its filters dropped"):
        trial_results(trial_row([old], [{"query": "q", "results": [hit("a")]}]))


def test_traces_that_disagree_are_errors_naming_the_trial():
    with pytest.raises(RunTraceError, match="model m, q_id q1, trial 2: 1 search call"):
        trial_results(trial_row([ENTRY], []))
    with pytest.raises(RunTraceError, match="search 1: the tool message holds more results"):
        trial_results(trial_row([ENTRY], [{"query": "q", "results": [hit("a"), hit("z")]}]))
    with pytest.raises(RunTraceError, match="result 0 is neither"):
        trial_results(trial_row([ENTRY], [{"query": "q", "results": []}]))
    short = {**ENTRY, "detector_verdicts": ["keep"]}
    with pytest.raises(RunTraceError, match="detector_verdicts does not hold one verdict per raw result"):
        trial_results(trial_row([short], [{"query": "q", "results": [hit("a")]}]))


def test_only_search_answers_count_as_search_payloads():
    messages = [
        {"role": "assistant", "content": "{\"results\": []}"},
        {"role": "tool", "content": "not json"},
        {"role": "tool", "content": json.dumps({"error": "unknown tool: x", "status": "s"})},
        {"role": "tool", "content": json.dumps({"query": "q", "results": [hit("a")]})},
    ]
    assert search_payloads(messages) == [{"query": "q", "results": [hit("a")]}]
