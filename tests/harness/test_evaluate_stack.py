"""The whole stack on loopback: evaluated model, Tavily, LLM leak detector (and the archive backend).

30 questions × 3 trials; the model searches twice per trial with the question text in its
queries. Checked: every Tavily request carries end_date = τ − δ of its question; no
detector request carries the question, its options or the gold answer; no gold answer
leaves the harness; keys reach no artifact; a replay with every server gone and no keys
gives a byte-identical trials.parquet.
"""

import asyncio
import datetime as dt
import json
import re

import pyarrow.parquet as pq
import pytest

from oracleproto.config import Sampling
from oracleproto.errors import RunAborted
from oracleproto.harness.detector import DetectorSettings, LeakDetector
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.keypool import KeyPool
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.search import SearchSettings, make_backend
from oracleproto.harness.settings import EvalSettings, ModelSpec
from oracleproto.harness.tavily import TavilyBackend
from oracleproto.io import write_parquet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import MULTI_GOLDS, make_questions
from tests.servers.openai_server import Fault as ModelFault
from tests.servers.openai_server import (
    FaultStorm,
    InOrder,
    OpenAIServer,
    content_reply,
    status_fault,
    tool_call_reply,
)
from tests.servers.tavily_server import Fault, TavilyStub, result

MODEL_KEY = "sk-stack-model-KEY-0123456789abcd"
TAVILY_KEYS = ("tvly-stack-key-one-0123456789", "tvly-stack-key-two-0123456789")
DETECTOR_KEY = "sk-stack-detector-KEY-987654321"
EVENT_IN_PROMPT = re.compile(r'Event to forecast: "(.*?)" \(it resolves around')


def event_of(body):
    return EVENT_IN_PROMPT.search(body["messages"][0]["content"]).group(1)


def researcher(body):
    """Two searches with the event text in the query, then the prompt's first box example."""
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if body.get("tools") and done < 2:
        return tool_call_reply("web_search", json.dumps({"query": f"{event_of(body)} angle {done + 1}"}), body)
    example = re.search(r"\\boxed\{([^}]*)\}", body["messages"][0]["content"]).group(1)
    return content_reply(f"On balance: \\boxed{{{example}}}", body)


def judge(body):
    """The detector: garbage for 'murky' pages, drop for 'LEAK' pages, keep otherwise."""
    title = body["messages"][0]["content"].split("title: ", 1)[1].split("\n", 1)[0]
    if "murky" in title:
        return content_reply("no idea", body)
    return content_reply(json.dumps({"verdict": "drop" if "LEAK" in title else "keep", "reason": "r"}), body)


def results_for(chi: dt.date):
    before, after = (chi - dt.timedelta(days=5)).isoformat(), (chi + dt.timedelta(days=3)).isoformat()
    return [
        result("Background brief", "https://n.example/a", "Context written earlier.", before),
        result("Dated after the cutoff", "https://n.example/b", "Outcome reported.", after),
        result("LEAK: analyst update", "https://n.example/c", "Analysts now expect it.", before),
        result("murky forum post", "https://n.example/d", "Some opinions.", before),
    ]


async def no_sleep(seconds):
    await asyncio.sleep(0)


def stack_factory(tavily_url, detector_url, replay=False):
    def build(cache, settings, env):
        search_settings = SearchSettings(detector_mode="llm", max_results=settings.budgets.max_results, timeout_s=0.3)
        detector_settings = (
            DetectorSettings.from_env({"DETECTOR_MODEL": "det/model"}, require_endpoint=False)
            if replay
            else DetectorSettings(model="det/model", base_url=detector_url, api_key=DETECTOR_KEY)
        )
        detector = LeakDetector(detector_settings, cache, sleep=no_sleep)
        if replay:
            return make_backend("tavily", search_settings, cache, detector)
        return TavilyBackend(search_settings, cache, detector, environ={"TAVILY_BASE_URL": tavily_url},
                             pool=KeyPool(TAVILY_KEYS), sleep=no_sleep)

    return build


def test_full_stack_thirty_by_three_then_offline_replay(tmp_path):
    questions = make_questions()
    path = tmp_path / "questions.parquet"
    write_parquet(questions, path, QUESTION_SCHEMA, sort_by=("id",))
    rows = questions.to_pylist()
    chi_of = {r["event"]: r["end_time"] - dt.timedelta(days=1) for r in rows}
    settings = EvalSettings(search_backend="tavily", detector="llm")
    job = EvalJob(ModelSpec(label="vendor/model", slug="vendor/model", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    env = {"OPENAI_BASE_URL": "set-below", "OPENAI_API_KEY": MODEL_KEY, "TAVILY_API_KEY": ",".join(TAVILY_KEYS),
           "DETECTOR_MODEL": "det/model"}
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(judge) as detector:
        for event, chi in chi_of.items():
            for n in (1, 2):
                tavily.script(f"{event} angle {n}", results_for(chi))
        tavily.fail_next(Fault(503), Fault(429, headers={"Retry-After": "0"}, key=TAVILY_KEYS[0]))
        env["OPENAI_BASE_URL"] = model.base_url
        summary = evaluate([job], settings, tmp_path / "rec", env=env, sleep=no_sleep,
                           search_factory=stack_factory(tavily.url, detector.base_url))
        model_requests, tavily_requests, detector_requests = model.requests, tavily.searches(), detector.requests

    assert summary.rows == 90 and summary.errors == {} and summary.parsed == 90
    table = pq.read_table(tmp_path / "rec" / "trials.parquet").to_pylist()
    assert {r["tool_calls_count"] for r in table} == {2}

    # every search was masked to χ = τ − δ of the question it was made for
    assert len(tavily_requests) >= 180
    for request in tavily_requests:
        event = request.body["query"].rsplit(" angle ", 1)[0]
        assert request.body["end_date"] == chi_of[event].isoformat()
        assert "Bearer tvly-stack-key-" in request.headers["authorization"]

    # the model saw only what survived both layers; the audit says why
    calls = json.loads(table[0]["search_calls"])
    assert calls[0]["n_results_raw"] == 4 and calls[0]["n_results_kept"] == 1
    assert calls[0]["detector_verdicts"] == ["keep", None, "drop", "failed:invalid_verdict"]
    tool_payload = json.loads(next(m for m in json.loads(table[0]["messages"]) if m["role"] == "tool")["content"])
    assert [hit["title"] for hit in tool_payload["results"]] == ["Background brief"]
    assert "detector_verdicts" not in table[0]["messages"]

    # the detector never saw a question, an option or a gold answer
    options = {o for r in rows for o in r["options"] if len(o) > 3}
    for request in detector_requests:
        body = request.raw.decode()
        assert not any(event in body for event in chi_of) and not any(o in body for o in options)
        assert not any(gold in body for gold in MULTI_GOLDS) and '"answer"' not in body
    # no gold answer and no key leaves in any request body
    for request in [*model_requests, *tavily_requests, *detector_requests]:
        body = request.raw.decode()
        assert not any(gold in body for gold in MULTI_GOLDS)
        assert not any(key in body for key in (MODEL_KEY, DETECTOR_KEY, *TAVILY_KEYS))

    snapshot = json.loads((tmp_path / "rec" / "manifest.json").read_text())["config_snapshot"]
    assert snapshot["detector"]["leak_detector_model"] == "det/model"
    assert snapshot["keys"]["TAVILY_API_KEY"].startswith("tvly…sha256:")

    # keys reach no artifact, no cache, no log
    for file in (tmp_path / "rec").rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert not any(key.encode() in data for key in (MODEL_KEY, DETECTOR_KEY, *TAVILY_KEYS)), file

    # replay: all three servers gone, no keys anywhere
    replay = EvalSettings(search_backend="tavily", detector="llm", cache_mode="replay")
    evaluate([job], replay, tmp_path / "rep", env={"DETECTOR_MODEL": "det/model"}, cache_path=tmp_path / "rec" / "calls.sqlite",
             search_factory=stack_factory(None, None, replay=True))
    assert (tmp_path / "rec" / "trials.parquet").read_bytes() == (tmp_path / "rep" / "trials.parquet").read_bytes()


def test_archive_backend_with_heuristic_detector(tmp_path):
    questions = make_questions(6)
    qpath = tmp_path / "questions.parquet"
    write_parquet(questions, qpath, QUESTION_SCHEMA, sort_by=("id",))
    archive = tmp_path / "archive.jsonl"
    docs = []
    for i, row in enumerate(questions.to_pylist()):
        chi = row["end_time"] - dt.timedelta(days=1)
        for tag, day in (("early", chi - dt.timedelta(days=10)), ("late", chi + dt.timedelta(days=1))):
            docs.append({"doc_id": f"d{i}-{tag}", "url": f"https://a.example/{i}/{tag}", "title": f"{row['event']} ({tag})",
                         "published_date": day.isoformat(), "content": f"{row['event']} {tag} coverage."})
    archive.write_text("".join(json.dumps(d) + "\n" for d in docs))
    settings = EvalSettings(search_backend="archive", archive_path=str(archive), detector="heuristic")
    job = EvalJob(ModelSpec(label="vendor/model", slug="vendor/model", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(qpath))
    with OpenAIServer(researcher) as model:
        summary = evaluate([job], settings, tmp_path / "run", env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": MODEL_KEY})
    assert summary.rows == 18 and summary.errors == {}
    for row in pq.read_table(tmp_path / "run" / "trials.parquet").to_pylist():
        chi = row["prediction_cutoff"].isoformat()
        for entry in json.loads(row["search_calls"]):
            assert entry["end_date"] == chi
        # the question's own post-χ document never reaches the model, though it matches the query best
        index = int(row["q_id"][1:])
        assert f"a.example/{index}/late" not in row["messages"] and f"a.example/{index}/early" in row["messages"]


def test_a_detector_auth_failure_aborts_the_run_like_a_model_auth_failure(tmp_path):
    """A rejected detector key would drop every result (fail closed) while the run reports
    no error: it stops the run instead, resumably, with one line naming the service."""
    questions = make_questions(3)
    path = tmp_path / "questions.parquet"
    write_parquet(questions, path, QUESTION_SCHEMA, sort_by=("id",))
    chi_of = {r["event"]: r["end_time"] - dt.timedelta(days=1) for r in questions.to_pylist()}
    settings = EvalSettings(search_backend="tavily", detector="llm")
    job = EvalJob(ModelSpec(label="m", slug="m", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(judge, fault_plan=lambda b, s: status_fault(401)) as det:
        for event, chi in chi_of.items():
            for n in (1, 2):
                tavily.script(f"{event} angle {n}", results_for(chi))
        with pytest.raises(RunAborted, match="leak detector service rejected its key"):
            evaluate([job], settings, tmp_path / "run", sleep=no_sleep,
                     env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": MODEL_KEY, "DETECTOR_MODEL": "det/model"},
                     search_factory=stack_factory(tavily.url, det.base_url))  # fmt: skip


def test_a_tavily_auth_failure_aborts_the_run(tmp_path):
    questions = make_questions(2)
    path = tmp_path / "questions.parquet"
    write_parquet(questions, path, QUESTION_SCHEMA, sort_by=("id",))
    settings = EvalSettings(search_backend="tavily", detector="heuristic")
    job = EvalJob(ModelSpec(label="m", slug="m", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    with OpenAIServer(researcher) as model, TavilyStub() as tavily:
        tavily.bad_keys.update({key: 401 for key in TAVILY_KEYS})  # every key of the pool is rejected
        with pytest.raises(RunAborted, match="search service rejected its key"):
            evaluate([job], settings, tmp_path / "run", sleep=no_sleep,
                     env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": MODEL_KEY},
                     search_factory=stack_factory(tavily.url, "http://127.0.0.1:9"))  # fmt: skip


def test_fault_storm_on_every_channel(tmp_path):
    """Model: 429 + Retry-After, 5xx, timeouts, malformed JSON, dropped connections, a content-policy
    refusal; Tavily: 429, 5xx, a timeout, a malformed 200; detector: garbage verdicts and 503s.
    Every fault is classified, the run completes, fail-closed drops are recorded."""
    questions = make_questions(10)
    path = tmp_path / "questions.parquet"
    write_parquet(questions, path, QUESTION_SCHEMA, sort_by=("id",))
    chi_of = {r["event"]: r["end_time"] - dt.timedelta(days=1) for r in questions.to_pylist()}
    model_storm = InOrder([
        status_fault(429, retry_after="0"), status_fault(500), ModelFault("malformed"), status_fault(503),
        ModelFault("stall", stall_s=0.5), ModelFault("drop"), status_fault(400, '{"error": {"message": "content_filter"}}'),
    ] * 2)
    detector_storm = FaultStorm(faults=(status_fault(503), status_fault(429, retry_after="0")), rate=0.3)
    settings = EvalSettings(search_backend="tavily", detector="llm", sampling=Sampling(timeout_s=0.25))
    job = EvalJob(ModelSpec(label="m", slug="m", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    with OpenAIServer(researcher, fault_plan=model_storm) as model, TavilyStub() as tavily, \
            OpenAIServer(judge, fault_plan=detector_storm) as det:
        for event, chi in chi_of.items():
            for n in (1, 2):
                tavily.script(f"{event} angle {n}", results_for(chi))
        tavily.fail_next(
            Fault(429, headers={"Retry-After": "0"}, key=TAVILY_KEYS[0]), Fault(502),
            Fault(200, body={"results": []}, delay_s=0.5), Fault(200, body=b"<html>gateway</html>"),
        )
        summary = evaluate([job], settings, tmp_path / "run", sleep=no_sleep,
                           env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": MODEL_KEY, "DETECTOR_MODEL": "det/model"}, search_factory=stack_factory(tavily.url, det.base_url))
        served = set(model.state.faults_served) | {"det-" + f for f in det.state.faults_served}
    table = pq.read_table(tmp_path / "run" / "trials.parquet").to_pylist()
    assert summary.rows == 30 and len(table) == 30
    assert {"429", "500", "503", "malformed", "stall", "drop", "400"} <= served and {"det-503", "det-429"} & served
    # only the content-policy refusals are final; every transient fault was retried away
    assert summary.errors == {"content_policy": 2}
    search_faults = [f for r in table if r["search_calls"] for c in json.loads(r["search_calls"]) for f in c.get("faults", [])]
    assert {"rate_limit", "server_5xx", "network"} <= set(search_faults)
    verdicts = [v for r in table if r["search_calls"] for c in json.loads(r["search_calls"]) for v in c["detector_verdicts"]]
    assert "failed:invalid_verdict" in verdicts  # the garbage verdict: dropped, recorded
    kept = [c["n_results_kept"] for r in table if r["search_calls"] for c in json.loads(r["search_calls"])]
    assert set(kept) <= {0, 1}  # only the one clean, pre-cutoff page can ever pass
