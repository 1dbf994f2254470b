"""Leak detection: verdict parser, heuristic layer, LLM detector (loopback chat server), screening."""

import asyncio
import json
import re
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.errors import ConfigError
from oracleproto.harness.detector import (
    DETECTOR_FIELDS,
    DETECTOR_PROMPT_TEMPLATE,
    DetectorSettings,
    LeakDetector,
    detector_input,
    detector_prompt_hash,
    first_date_after,
    heuristic_verdict,
    parse_published_date,
    parse_verdict,
    published_date_verdict,
    render_detector_message,
    screen,
)
from oracleproto.harness.llm import ChannelMeter
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchHit
from tests.servers.openai_server import Fault, OpenAIServer, content_reply, status_fault

CHI = date(2025, 3, 1)
CONTEXT = CallContext("m", "q1", 1, 0, 0)
DETECTOR_KEY = "det-fake-key-0123456789"


def hit(title="Fed holds rates", content="The Fed held rates steady.", published="2025-02-10", raw=None, url="https://n/a"):
    return SearchHit(title=title, url=url, content=content, published_date=published, raw_content=raw)


# ---------------------------------------------------------------------------------------
# Verdict parser (Algorithm 4)
@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"verdict": "keep", "reason": "all before"}', ("keep", "all before")),
        ('  {"verdict": "drop", "reason": "mentions 2026"}\n', ("drop", "mentions 2026")),
        ('Here you go: {"verdict": "drop", "reason": "later"} hope it helps', ("drop", "later")),
        ('```json\n{"verdict": "keep"}\n```', ("keep", "")),
        ('{"verdict": "keep", "reason": null}', ("keep", "")),
        ('{"verdict": "drop", "reason": "a brace } inside"} tail', ("drop", "a brace } inside")),
        ('{"verdict": "keep", "reason": 42}', ("keep", "42")),
    ],
)
def test_parse_verdict_accepts_json_and_json_in_prose(text, expected):
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "   ",
        "keep",
        "I would keep this one.",
        "{not json}",
        '{"verdict": "maybe", "reason": "x"}',
        '{"verdict": "KEEP"}',
        '{"reason": "no verdict"}',
        '["keep"]',
        '{"verdict": "keep"',
        'prefix {"verdict": "unsure"} then {"verdict": "keep"}',
    ],
)
def test_parse_verdict_rejects_garbage(text):
    assert parse_verdict(text) is None


@given(st.text())
def test_parse_verdict_never_raises(text):
    result = parse_verdict(text)
    assert result is None or result[0] in ("keep", "drop")


# ---------------------------------------------------------------------------------------
# Prompt and whitelist
def test_prompt_never_uses_question_answer_or_options():
    lowered = DETECTOR_PROMPT_TEMPLATE.lower()
    assert not re.search(r"question|answer|option", lowered)


def test_prompt_hash_is_16_hex_of_the_template():
    digest = detector_prompt_hash()
    assert re.fullmatch(r"[0-9a-f]{16}", digest)
    assert digest == detector_prompt_hash()


def test_input_whitelist_is_exactly_six_fields_with_fallbacks():
    fields = detector_input(hit(published=None, raw=None), CHI)
    assert tuple(fields) == DETECTOR_FIELDS
    assert fields["published_date"] == "(unknown)" and fields["raw_content"] == "(empty)"
    assert fields["cutoff_date"] == "2025-03-01"
    message = render_detector_message(fields)
    assert "cutoff_date: 2025-03-01" in message and "The Fed held rates steady." in message
    with pytest.raises(ValueError):
        render_detector_message({**fields, "question": "x"})


# ---------------------------------------------------------------------------------------
# Heuristic layer
@pytest.mark.parametrize(
    "text, cutoff, mention",
    [
        ("results of 2025-03-02 are in", CHI, "2025-03-02"),
        ("on 2025/04/01 the bank", CHI, "2025/04/01"),
        ("March 3, 2025 was busy", CHI, "March 3, 2025"),
        ("since Mar. 3rd 2025", CHI, "Mar. 3rd 2025"),
        ("on 3 March 2025", CHI, "3 March 2025"),
        ("on the 3rd of March, 2025", CHI, "3rd of March, 2025"),
        ("the 2025-04 figures", CHI, "2025-04"),
        ("in April 2025", CHI, "April 2025"),
        ("plans for 2026", CHI, "2026"),
        ("the 2025-2026 season", date(2024, 12, 31), "2025"),
        ("first 2024-01-01 then 2027-01-01 and 2026", CHI, "2027-01-01"),
    ],
)
def test_dates_after_the_cutoff_are_found(text, cutoff, mention):
    assert first_date_after(text, cutoff) == mention


@pytest.mark.parametrize(
    "text",
    [
        "on 2025-03-01 exactly",  # the cutoff day itself is allowed
        "March 2025 so far",  # the month containing χ does not start after it
        "in 2025 overall",
        "February 30, 2025 is not a date",
        "2025-13 is not a month",
        "it cost $2026 and 1,2030 units, version 3.2030",
        "serial A20261 and 120260",
        "nothing dated here",
    ],
)
def test_no_false_date_after_cutoff(text):
    assert first_date_after(text, CHI) is None


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2025-02-10", date(2025, 2, 10)),
        ("2025-02-10T23:59:00Z", date(2025, 2, 10)),
        ("Mon, 10 Feb 2025 10:00:00 GMT", date(2025, 2, 10)),
        ("yesterday", None),
        ("2025-02-30", None),
    ],
)
def test_published_date_formats(value, expected):
    assert parse_published_date(value) == expected


def test_heuristic_verdicts():
    assert heuristic_verdict(hit(), CHI) == "keep"
    assert heuristic_verdict(hit(published="2025-03-02"), CHI) == "drop:published_after_cutoff:2025-03-02"
    assert heuristic_verdict(hit(published=None), CHI) == "drop:undated"
    assert heuristic_verdict(hit(published=None), CHI, undated="keep") == "keep"
    assert heuristic_verdict(hit(published="soon"), CHI) == "drop:unreadable_published_date"
    assert heuristic_verdict(hit(title="Outlook for 2026"), CHI) == "drop:date_after_cutoff:title:2026"
    assert heuristic_verdict(hit(raw="... on April 2, 2025 the"), CHI) == "drop:date_after_cutoff:raw_content:April 2, 2025"


dates = st.dates(min_value=date(1900, 1, 1), max_value=date(2199, 12, 31))


@settings(max_examples=300)
@given(text=st.text(), cutoff=dates)
def test_date_finder_never_crashes_and_returns_a_substring(text, cutoff):
    mention = first_date_after(text, cutoff)
    assert mention is None or mention in text


@given(
    words=st.lists(st.sampled_from(["on", "March", "3", "3rd", "of", ",", "2025", "2026-04", "Sept.", "-", "2024-12-31", "x"])),
    cutoff=dates,
    earlier=st.integers(min_value=1, max_value=5000),
)
def test_a_mention_after_a_cutoff_is_after_every_earlier_cutoff(words, cutoff, earlier):
    text = " ".join(words)
    if first_date_after(text, cutoff) is not None and cutoff - timedelta(days=earlier) >= date(1900, 1, 1):
        assert first_date_after(text, cutoff - timedelta(days=earlier)) is not None


@given(title=st.text(), content=st.text(), published=st.one_of(st.none(), st.text()), cutoff=dates)
def test_heuristic_verdict_never_crashes(title, content, published, cutoff):
    verdict = heuristic_verdict(SearchHit(title, "u", content, published_date=published), cutoff)
    assert verdict == "keep" or verdict.startswith("drop:")


# ---------------------------------------------------------------------------------------
# Settings
def test_settings_from_env_falls_back_to_openai_pair():
    s = DetectorSettings.from_env({"DETECTOR_MODEL": "qwen/qwen3.5-flash", "OPENAI_BASE_URL": "http://x", "OPENAI_API_KEY": "sk-abcdefgh12345678"})
    assert (s.base_url, s.api_key, s.model) == ("http://x", "sk-abcdefgh12345678", "qwen/qwen3.5-flash")
    s = DetectorSettings.from_env(
        {"DETECTOR_MODEL": "d", "DETECTOR_BASE_URL": "http://d", "DETECTOR_API_KEY": DETECTOR_KEY, "OPENAI_BASE_URL": "http://x"}
    )
    assert (s.base_url, s.api_key) == ("http://d", DETECTOR_KEY)
    assert DETECTOR_KEY not in repr(s)
    assert s.snapshot()["leak_detector_prompt_hash"] == detector_prompt_hash()


@pytest.mark.parametrize(
    "environ, message",
    [
        ({"DETECTOR_BASE_URL": "http://d", "DETECTOR_API_KEY": DETECTOR_KEY}, "DETECTOR_MODEL"),
        ({"DETECTOR_MODEL": "d", "DETECTOR_API_KEY": DETECTOR_KEY}, "DETECTOR_BASE_URL"),
        ({"DETECTOR_MODEL": "d", "DETECTOR_BASE_URL": "http://d"}, "OPENAI_API_KEY"),
        ({"DETECTOR_MODEL": "d", "DETECTOR_BASE_URL": "http://d", "DETECTOR_API_KEY": "REPLACE_ME"}, "DETECTOR_API_KEY"),
        ({"DETECTOR_MODEL": "openai/gpt-4o:online", "DETECTOR_BASE_URL": "http://d", "DETECTOR_API_KEY": DETECTOR_KEY}, ":online"),
    ],
)
def test_settings_startup_errors_name_the_variable(environ, message):
    with pytest.raises(ConfigError, match=message):
        DetectorSettings.from_env(environ)


def test_replay_settings_need_only_the_model():
    s = DetectorSettings.from_env({"DETECTOR_MODEL": "d"}, require_endpoint=False)
    assert s.base_url is None and s.api_key is None


@pytest.mark.parametrize("limits", [{"timeout_s": 0}, {"timeout_s": -1.0}, {"max_response_bytes": 0}, {"max_response_bytes": "1MB"}])
def test_call_limits_must_be_positive(limits):
    with pytest.raises(ConfigError, match=next(iter(limits))):
        DetectorSettings(model="d", base_url="http://d", **limits)
    assert DetectorSettings(model="d", base_url="http://d").max_response_bytes == 8 * 1024 * 1024


# ---------------------------------------------------------------------------------------
# LLM detector against the loopback chat server
def user_text(body):
    return body["messages"][0]["content"]


def judge_by_marker(body):
    """Drop documents whose title carries LEAK, keep the rest."""
    leak = "LEAK" in user_text(body).split("title: ", 1)[1].split("\n", 1)[0]
    verdict = {"verdict": "drop" if leak else "keep", "reason": "marker" if leak else "all earlier"}
    return content_reply(json.dumps(verdict), body, cost=0.0001)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def detector_for(server, cache=None, sleeps=None, timeout_s=60.0):
    settings = DetectorSettings(model="det/model", base_url=server.base_url, api_key=DETECTOR_KEY, timeout_s=timeout_s)
    return LeakDetector(settings, cache or CallCache(None, "off"), sleep=sleeps or Sleeps())


def judge(detector, hits):
    async def go():
        try:
            return await detector.judge_all(list(enumerate(hits)), CHI, CONTEXT)
        finally:
            await detector.aclose()

    return asyncio.run(go())


def test_detector_request_is_table_15_with_the_key_in_the_header_only():
    with OpenAIServer(judge_by_marker) as server:
        verdicts = judge(detector_for(server), [hit(), hit(title="LEAK: later events")])
    assert [v.verdict for v in verdicts] == ["keep", "drop"]
    assert verdicts[1].reason == "marker" and verdicts[0].cost_usd == pytest.approx(0.0001)
    request = server.requests[0]
    assert request.path == "/chat/completions"
    assert set(request.body) == {"model", "messages", "temperature", "max_tokens"}
    assert (request.body["temperature"], request.body["max_tokens"], request.body["model"]) == (0.0, 512, "det/model")
    assert len(request.body["messages"]) == 1 and request.body["messages"][0]["role"] == "user"
    assert request.headers["Authorization"] == f"Bearer {DETECTOR_KEY}"
    assert DETECTOR_KEY not in request.raw.decode()


def garbage(body):
    return content_reply("This page looks fine to me.", body)


def test_garbage_verdicts_are_retried_then_fail_closed():
    sleeps = Sleeps()
    with OpenAIServer(garbage) as server:
        (verdict,) = judge(detector_for(server, sleeps=sleeps), [hit()])
    assert verdict.verdict == "failed:invalid_verdict" and verdict.error_kind == "invalid_verdict"
    assert len(server.requests) == 4 and sleeps.waits == [2, 5, 15]


def test_5xx_then_a_verdict_is_retried_to_success():
    sleeps = Sleeps()
    plan = lambda body, seen: status_fault(503) if seen < 2 else None  # noqa: E731
    with OpenAIServer(judge_by_marker, fault_plan=plan) as server:
        (verdict,) = judge(detector_for(server, sleeps=sleeps), [hit()])
    assert verdict.verdict == "keep" and verdict.faults == ("server_5xx", "server_5xx")
    assert sleeps.waits == [2, 5]


@pytest.mark.parametrize(
    "fault, kind, attempts",
    [
        (status_fault(503), "server_5xx", 4),
        (status_fault(429, retry_after="1"), "rate_limit", 4),
        (Fault("malformed"), "network", 4),
        (status_fault(401), "auth", 1),
        (status_fault(403), "auth", 1),
        (status_fault(400, body='{"error": {"message": "bad field"}}'), "bad_request", 1),
        (status_fault(400, body='{"error": {"code": "content_policy_violation"}}'), "content_policy", 1),
        (status_fault(404), "unknown", 1),
    ],
)
def test_faults_are_classified_and_fail_closed(fault, kind, attempts):
    with OpenAIServer(judge_by_marker, fault_plan=lambda body, seen: fault) as server:
        (verdict,) = judge(detector_for(server), [hit()])
    assert verdict.verdict == f"failed:{kind}"
    assert len(server.requests) == attempts


def test_timeouts_are_retried_like_network_then_fail_closed():
    sleeps = Sleeps()
    stall = Fault("stall", stall_s=0.4)
    with OpenAIServer(judge_by_marker, fault_plan=lambda body, seen: stall) as server:
        (verdict,) = judge(detector_for(server, sleeps=sleeps, timeout_s=0.05), [hit()])
    assert verdict.verdict == "failed:timeout" and verdict.faults == ("timeout",) * 3
    assert len(server.requests) == 4 and sleeps.waits == [2, 5, 15]


def test_unreachable_detector_fails_closed():
    with OpenAIServer(judge_by_marker) as server:
        detector = detector_for(server)
    # the server is gone: every attempt is refused
    (verdict,) = judge(detector, [hit()])
    assert verdict.verdict == "failed:network"


# ---------------------------------------------------------------------------------------
# Both layers
def run_screen(hits, mode, detector=None, answer=None, undated="drop"):
    async def go():
        try:
            return await screen(hits, answer, CHI, mode=mode, detector=detector, context=CONTEXT, undated=undated)
        finally:
            if detector is not None:
                await detector.aclose()

    return asyncio.run(go())


RAW = [
    hit(title="A calm market"),
    hit(title="Dated later", published="2025-06-01"),
    hit(title="LEAK caught by the judge"),
    hit(title="Outlook for April 2025"),
]


def test_mode_off_keeps_everything_and_records_no_verdicts():
    out = run_screen(RAW, "off", answer="summary")
    assert out.hits == RAW and out.answer == "summary"
    assert out.audit["heuristic_verdicts"] is None and out.audit["detector_verdicts"] is None


def test_mode_heuristic_drops_by_date_only():
    out = run_screen(RAW, "heuristic", answer="summary")
    assert [h.title for h in out.hits] == ["A calm market", "LEAK caught by the judge"]
    assert out.audit["heuristic_verdicts"] == [
        "keep",
        "drop:published_after_cutoff:2025-06-01",
        "keep",
        "drop:date_after_cutoff:title:April 2025",
    ]
    assert out.answer is None and out.audit["answer_cleared"] is True


def test_mode_llm_judges_only_what_passed_the_heuristic_and_keeps_raw_order():
    with OpenAIServer(judge_by_marker) as server:
        out = run_screen(RAW, "llm", detector=detector_for(server))
    assert [h.title for h in out.hits] == ["A calm market"]
    assert len(server.requests) == 2
    audit = out.audit
    assert audit["detector_verdicts"] == ["keep", None, "drop", None]
    assert audit["detector_reasons"] == ["all earlier", None, "marker", None]
    assert (audit["n_results_raw"], audit["n_results_kept"]) == (4, 1)
    assert len(audit["published_dates"]) == len(audit["heuristic_verdicts"]) == 4
    assert audit["detector_error_kind"] is None and isinstance(audit["detector_latency_ms"], int)
    assert out.cost_usd == pytest.approx(0.0002)


def test_the_audit_keeps_each_dropped_result_as_the_model_would_have_read_it():
    with OpenAIServer(judge_by_marker) as server:
        out = run_screen(RAW, "llm", detector=detector_for(server))
    dropped = out.audit["dropped_results"]
    assert [d["index"] for d in dropped] == [1, 2, 3]
    assert dropped[0] == {"index": 1, **RAW[1].to_payload()}
    assert out.audit["masked_results"] == []
    # the kept result is in the tool payload, not repeated in the audit
    assert all(d["title"] != "A calm market" for d in dropped)


def test_results_a_backend_masked_are_recorded_with_their_verdict():
    masked = [(hit(title="Later page", published="2025-06-01"), "drop:published_after_cutoff:2025-06-01")]
    out = asyncio.run(screen(RAW[:1], None, CHI, mode="off", detector=None, context=CONTEXT, masked=masked))
    assert out.audit["masked_results"] == [{"verdict": "drop:published_after_cutoff:2025-06-01", **masked[0][0].to_payload()}]
    assert out.audit["dropped_results"] == [] and out.hits == RAW[:1]


def test_published_date_verdict_is_the_date_part_of_the_heuristic():
    assert published_date_verdict("2025-06-01", CHI) == "drop:published_after_cutoff:2025-06-01"
    assert published_date_verdict(None, CHI) == "drop:undated"
    assert published_date_verdict(None, CHI, undated="keep") is None
    assert published_date_verdict("someday", CHI) == "drop:unreadable_published_date"
    assert published_date_verdict(CHI.isoformat(), CHI) is None


def test_answer_survives_only_a_clean_pass():
    with OpenAIServer(judge_by_marker) as server:
        clean = run_screen(RAW[:1], "llm", detector=detector_for(server), answer="summary")
        partial = run_screen([RAW[0], RAW[2]], "llm", detector=detector_for(server), answer="summary")
        empty = run_screen([RAW[2]], "llm", detector=detector_for(server), answer="summary")
    assert clean.answer == "summary"
    assert partial.answer is None and empty.answer is None and empty.hits == []


def test_first_failure_kind_is_recorded_and_the_item_dropped():
    plan = lambda body, seen: status_fault(401) if "second" in user_text(body) else None  # noqa: E731
    with OpenAIServer(judge_by_marker, fault_plan=plan) as server:
        out = run_screen([hit(title="first"), hit(title="second")], "llm", detector=detector_for(server))
    assert out.audit["detector_verdicts"] == ["keep", "failed:auth"]
    assert out.audit["detector_error_kind"] == "auth"
    assert [h.title for h in out.hits] == ["first"]


def test_llm_mode_needs_a_detector():
    with pytest.raises(ValueError):
        run_screen(RAW, "llm")


def test_detector_record_then_replay_without_endpoint_or_key(tmp_path):
    path = tmp_path / "calls.sqlite"
    plan = lambda body, seen: status_fault(500) if seen == 0 else None  # noqa: E731
    with OpenAIServer(judge_by_marker, fault_plan=plan) as server:
        recorded = run_screen(RAW, "llm", detector=detector_for(server, cache=CallCache(path, "record")))
    replay_settings = DetectorSettings.from_env({"DETECTOR_MODEL": "det/model"}, require_endpoint=False)
    replayed = run_screen(RAW, "llm", detector=LeakDetector(replay_settings, CallCache(path, "replay")))
    assert replayed == recorded
    assert DETECTOR_KEY not in path.read_bytes().decode("latin-1")


def test_detector_calls_are_counted_in_flight_on_the_meter():
    meter, seen = ChannelMeter(), []

    def counting(body):
        seen.append(meter.in_flight.get("detector"))
        return judge_by_marker(body)

    with OpenAIServer(counting) as server:
        settings = DetectorSettings(model="det/model", base_url=server.base_url, api_key=DETECTOR_KEY)
        judge(LeakDetector(settings, CallCache(None, "off"), sleep=Sleeps(), meter=meter), [hit(), hit(), hit()])
    assert len(seen) == 3 and all(count >= 1 for count in seen)
    assert meter.in_flight == {"detector": 0}
