"""One search through both layers under a fault storm, then replayed with nothing listening."""

import asyncio
import json
from datetime import date

from oracleproto.harness.detector import DetectorSettings, LeakDetector
from oracleproto.harness.keypool import KeyPool
from oracleproto.harness.replay import CallCache, CallContext
from oracleproto.harness.search import SearchSettings, make_backend
from oracleproto.harness.tavily import TavilyBackend
from tests.servers.openai_server import OpenAIServer, content_reply, status_fault
from tests.servers.tavily_server import Fault, TavilyStub, result

CHI = date(2025, 3, 1)
KEYS = ("tvly-storm-key-one", "tvly-storm-key-two")
DETECTOR_KEY = "det-storm-key-0123456789"
# What the harness knows and the detector must never see.
EVENT = "Will the Zanzibar Accord be ratified by the Quetzal Parliament before 2025-03-02?"
OPTIONS = ("Ratified by the Quetzal Parliament", "Rejected outright", "Postponed indefinitely")
GOLD = "B, C"


def title_of(body):
    return body["messages"][0]["content"].split("title: ", 1)[1].split("\n", 1)[0]


def judge(body):
    """Garbage for 'murky' pages, drop for 'LEAK' pages, keep otherwise."""
    title = title_of(body)
    if "murky" in title:
        return content_reply("Hard to say, honestly.", body)
    verdict = "drop" if "LEAK" in title else "keep"
    return content_reply(f'Verdict follows. {{"verdict": "{verdict}", "reason": "judged"}}', body)


def detector_storm(body, seen):
    """A 503 on the first sight of the 'flaky' page, a 429 with Retry-After on the 'busy' one."""
    title = title_of(body)
    if "flaky" in title and seen == 0:
        return status_fault(503)
    if "busy" in title and seen == 0:
        return status_fault(429, retry_after="1")
    return None


RESULTS = [
    result("Parliament calendar", "https://n/1", "Sessions resume in January.", "2025-01-20"),
    result("Dated after the cutoff", "https://n/2", "Vote held.", "2025-03-05"),
    result("LEAK: commentary", "https://n/3", "Observers now expect a delay.", "2025-02-20"),
    result("murky blog", "https://n/4", "Some thoughts.", "2025-02-21"),
    result("flaky wire", "https://n/5", "Committee met.", "2025-02-22"),
    result("busy portal", "https://n/6", "Schedule posted.", "2025-02-23"),
]


class Sleeps:
    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


def run(backend, detector):
    async def go():
        try:
            return await backend.search(EVENT, CHI, CallContext("m", "q-zanzibar", 2, 1, 1))
        finally:
            await backend.aclose()
            await detector.aclose()

    return asyncio.run(go())


def test_fault_storm_completes_classifies_and_drops_fail_closed_then_replays(tmp_path):
    path = tmp_path / "calls.sqlite"
    settings = SearchSettings(detector_mode="llm", max_results=6, include_answer=True, timeout_s=0.1)
    sleeps = Sleeps()
    with TavilyStub() as tavily, OpenAIServer(judge, fault_plan=detector_storm) as chat:
        tavily.script(EVENT, RESULTS, answer="A summary of all six pages.")
        tavily.fail_next(
            Fault(429, headers={"Retry-After": "30"}, key=KEYS[0]),
            Fault(503),
            Fault(200, body={"results": []}, delay_s=0.5),
            Fault(200, body=b"<html>gateway</html>"),
        )
        cache = CallCache(path, "record")
        detector = LeakDetector(
            DetectorSettings(model="det/model", base_url=chat.base_url, api_key=DETECTOR_KEY), cache, sleep=sleeps
        )
        backend = TavilyBackend(settings, cache, detector, environ={"TAVILY_BASE_URL": tavily.url}, pool=KeyPool(KEYS), sleep=sleeps)
        recorded = run(backend, detector)
        detector_bodies = [r.raw.decode() for r in chat.requests]
        tavily_requests = tavily.searches()
        cache.close()

    # Tavily faults, each classified; the search still completed.
    assert recorded.error is None
    assert recorded.audit["faults"] == ["rate_limit", "server_5xx", "timeout", "network"]
    assert all(r.body["end_date"] == "2025-03-01" for r in tavily_requests)
    # Both layers, fail-closed: the garbage-verdict page is dropped and recorded as such.
    assert recorded.audit["heuristic_verdicts"][1] == "drop:published_after_cutoff:2025-03-05"
    assert recorded.audit["detector_verdicts"] == ["keep", None, "drop", "failed:invalid_verdict", "keep", "keep"]
    assert recorded.audit["detector_error_kind"] == "invalid_verdict"
    assert [h.title for h in recorded.hits] == ["Parliament calendar", "flaky wire", "busy portal"]
    assert recorded.answer is None and recorded.audit["answer_cleared"] is True
    # tavily: 2, 5, 15 (the 429 swapped keys without waiting); garbage verdict: 2, 5, 15;
    # detector 503: 2; detector 429: its Retry-After, 1
    assert sorted(sleeps.waits) == sorted([2, 5, 15, 2, 5, 15, 2, 1])

    # The detector never received the question, its options or the gold letters.
    for body in detector_bodies:
        assert EVENT not in body and "Zanzibar" not in body
        assert all(option not in body for option in OPTIONS)
        assert GOLD not in body and '"answer"' not in body and "options" not in body
        assert DETECTOR_KEY not in body and all(key not in body for key in KEYS)

    # Replay: both servers gone, no keys in the environment, same outcome.
    replay_cache = CallCache(path, "replay")
    replay_detector = LeakDetector(DetectorSettings.from_env({"DETECTOR_MODEL": "det/model"}, require_endpoint=False), replay_cache)
    replayed = run(make_backend("tavily", settings, replay_cache, replay_detector), replay_detector)
    assert json.dumps(replayed.to_search_call(), sort_keys=True) == json.dumps(recorded.to_search_call(), sort_keys=True)
    assert replayed.to_llm_payload() == recorded.to_llm_payload()
