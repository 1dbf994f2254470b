"""A channel that goes down stops the run after N consecutive transport failures, resumably.

Loopback servers serve a few calls, then drop every connection (or answer 503): the run
aborts with one line naming the channel and its last error, long before the retries of
every pending trial would have run out; the server recovers, the same command resumes, and
every (model, q_id, trial) ends up stored exactly once with no error.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
import time

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.config import Evaluate, parse_params
from oracleproto.errors import ConfigError, RunAborted
from oracleproto.harness import evaluate as evaluate_module
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.faults import LLM_RETRY
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.replay import CallContext
from oracleproto.harness.settings import EvalSettings, ModelSpec
from oracleproto.harness.streaks import ChannelDown, FailureStreaks
from oracleproto.io import write_parquet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import make_questions
from tests.harness.test_evaluate_stack import MODEL_KEY, researcher, stack_factory
from tests.servers.openai_server import (
    Fault,
    OpenAIServer,
    SearchThenAnswer,
    content_reply,
    status_fault,
)
from tests.servers.tavily_server import Fault as TavilyFault
from tests.servers.tavily_server import TavilyStub, result

QUESTIONS, TRIALS = 12, 3  # 36 trials


# ---------------------------------------------------------------------------------------
# The counter


def ctx(q_id: str, model: str = "m") -> CallContext:
    return CallContext(model, q_id, 1, 1)


def test_a_streak_trips_at_the_limit_and_resets_on_any_answer():
    streaks = FailureStreaks(3)
    streaks.report("llm", ctx("q1"), "network", "ConnectError")
    streaks.report("llm", ctx("q2"), "timeout", "no complete response within 1 s")
    streaks.report("llm", ctx("q3"), "rate_limit", "HTTP 429")  # the service answered: the channel is up
    streaks.report("llm", ctx("q4"), "server_5xx", "HTTP 503")
    streaks.report("llm", ctx("q5", model="other"), "network", "ConnectError")  # another model's channel
    streaks.report("search", ctx("q5"), "network", "ConnectError")  # another service
    streaks.report("llm", ctx("q6"), None)  # a success
    streaks.report("llm", ctx("q7"), "network", "ReadError")
    streaks.report("llm", ctx("q8"), "network", "ReadError")
    assert not streaks._event.is_set()
    streaks.report("llm", ctx("q9"), "server_5xx", "HTTP 502")
    with pytest.raises(ChannelDown) as down:
        asyncio.run(streaks.tripped())
    assert str(down.value) == "3 consecutive model calls to m failed (server_5xx: HTTP 502); run stopped, resume with the same command"
    # the trials of every streak still open: this channel's three, and the single failures elsewhere
    assert down.value.trials == {("m", "q7", 1), ("m", "q8", 1), ("m", "q9", 1), ("other", "q5", 1), ("m", "q5", 1)}
    # after the trip a success forgets nothing
    streaks.report("llm", ctx("q10"), None)
    assert ("m", "q7", 1) in streaks.failed_trials()


@pytest.mark.parametrize(("channel", "name"), [("search", "search calls"), ("detector", "leak detector calls")])
def test_services_are_named(channel, name):
    streaks = FailureStreaks(1)
    streaks.report(channel, ctx("q1"), "timeout", "")
    with pytest.raises(ChannelDown, match=f"^1 consecutive {name} failed \\(timeout\\); run stopped"):
        asyncio.run(streaks.tripped())


def test_the_limit_is_a_params_key_with_its_default():
    assert Evaluate().max_consecutive_failures == 10 == EvalSettings().max_consecutive_failures
    with pytest.raises(ConfigError, match="evaluate.max_consecutive_failures: must be an integer >= 1, got 0"):
        parse_params({"evaluate": {"max_consecutive_failures": 0}})


# ---------------------------------------------------------------------------------------
# A model endpoint that goes down


class Outage:
    """A fault plan: every request after the first ``healthy`` ones gets ``fault`` while down."""

    def __init__(self, healthy: int, fault: Fault) -> None:
        self.healthy, self.fault, self.served = healthy, fault, 0
        self.down = True
        self._lock = threading.Lock()

    def __call__(self, body, seen):
        with self._lock:
            self.served += 1
            return self.fault if self.down and self.served > self.healthy else None


class VirtualSleep:
    """Backoff waits recorded, not slept: the seconds a real run would have sat out."""

    def __init__(self) -> None:
        self.total = 0.0

    async def __call__(self, seconds: float) -> None:
        self.total += seconds
        await asyncio.sleep(0)


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.parquet"
    write_parquet(make_questions(QUESTIONS), path, QUESTION_SCHEMA, sort_by=("id",))
    return path


def job_for(path, label="vendor/model"):
    return EvalJob(ModelSpec(label=label, slug=label, cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))


def assert_complete(out):
    rows = pq.read_table(out / "trials.parquet").to_pylist()
    keys = [(r["model"], r["q_id"], r["trial"]) for r in rows]
    assert len(keys) == len(set(keys)) == QUESTIONS * TRIALS  # nothing lost, nothing twice
    assert {r["error"] for r in rows} == {None} and {r["search_errors"] for r in rows} == {0}
    return rows


@pytest.mark.parametrize(
    ("fault", "last"),
    [(Fault("drop"), "network: RemoteProtocolError"), (status_fault(503), "server_5xx: HTTP 503")],
    ids=["dropped-connections", "http-503"],
)
def test_a_model_endpoint_that_goes_down_stops_the_run_then_it_resumes(questions, tmp_path, fault, last):
    kind = last.split(":")[0]
    one_call_s = sum(LLM_RETRY.backoff[kind])  # the backoff one failing model call sits out (112 s, 230 s)
    settings = EvalSettings(search_backend="none")
    outage = Outage(healthy=8, fault=fault)
    sleep = VirtualSleep()
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=outage) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": MODEL_KEY}
        started = time.monotonic()
        with pytest.raises(RunAborted) as aborted:
            evaluate([job_for(questions)], settings, tmp_path / "run", env=env, sleep=sleep)
        seconds = time.monotonic() - started
        assert str(aborted.value) == (
            f"10 consecutive model calls to vendor/model failed ({last}); run stopped, resume with the same command"
        )
        # stopped at the 10th failed call (the calls in flight cancelled), not after every pending
        # trial's retries: the workers fail side by side, so with a real clock the run stops after
        # about one call's backoff (~2-4 min), where the 28 pending trials would each sit it out
        # (the backoff summed over calls: the 10 failed ones in full, the cancelled ones in part)
        assert seconds < 10 and 10 * one_call_s <= sleep.total < 20 * one_call_s < (QUESTIONS * TRIALS - 8) * one_call_s
        # requests: the 10 failed calls' attempts, plus some of the other 10 workers' in flight
        assert outage.served - 8 <= 20 * (LLM_RETRY.max_retries + 1)
        assert not (tmp_path / "run" / "trials.parquet").exists()

        outage.down = False  # the endpoint recovers: the same command resumes
        summary = evaluate([job_for(questions)], settings, tmp_path / "run", env=env, sleep=sleep)
    assert summary.errors == {} and summary.rows == QUESTIONS * TRIALS
    assert summary.resumed == 8 and summary.ran == QUESTIONS * TRIALS - 8  # the failed trials were forgotten, not kept
    assert_complete(tmp_path / "run")


def test_the_cli_stops_with_exit_4_and_one_line(questions, tmp_path, monkeypatch):
    async def no_sleep(seconds):
        await asyncio.sleep(0)

    monkeypatch.setitem(evaluate_module.evaluate_async.__kwdefaults__, "sleep", no_sleep)
    params = tmp_path / "params.yaml"
    params.write_text("evaluate:\n  trials: 3\n  search: none\n  max_consecutive_failures: 4\n")
    args = ["evaluate", "--no-progress", "--questions", str(questions), "--model", "vendor/model", "--cutoff",
            "vendor/model=2025-01-31", "--params", str(params), "--out", str(tmp_path / "run")]  # fmt: skip
    outage = Outage(healthy=5, fault=Fault("drop"))
    with OpenAIServer(SearchThenAnswer(searches=0), fault_plan=outage) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": MODEL_KEY}
        down = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
        outage.down = False
        resumed = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert down.exit_code == 4, down.output
    assert down.output.splitlines() == [
        "error: 4 consecutive model calls to vendor/model failed (network: RemoteProtocolError); "
        "run stopped, resume with the same command"
    ]
    assert resumed.exit_code == 0, resumed.output
    assert_complete(tmp_path / "run")
    log = (tmp_path / "run" / "logs" / "evaluate.log").read_text()
    assert "4 consecutive model calls" in log and MODEL_KEY not in log


# ---------------------------------------------------------------------------------------
# A search service that goes down


def test_a_search_service_that_goes_down_stops_the_run_and_its_trials_are_redone(questions, tmp_path):
    """Failed searches do not fail a trial (the model is told and answers anyway), so the
    trials that met the outage are forgotten on the abort: a resume searches them again."""
    rows = make_questions(QUESTIONS).to_pylist()
    settings = EvalSettings(search_backend="tavily", detector="llm")
    env = {"OPENAI_API_KEY": MODEL_KEY, "DETECTOR_MODEL": "det/model"}
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(judge_keep) as detector:
        for row in rows:
            for n in (1, 2):
                tavily.script(f"{row['event']} angle {n}", [result("Old news", "https://o.example", "Earlier.", "2024-01-01")])
        env["OPENAI_BASE_URL"] = model.base_url
        factory = stack_factory(tavily.url, detector.base_url)
        tavily.fail_next(*[TavilyFault(503)] * 1000)
        with pytest.raises(RunAborted, match=r"^10 consecutive search calls failed \(server_5xx: HTTP 503\); run stopped"):
            evaluate([job_for(questions, "m")], settings, tmp_path / "run", env=env, search_factory=factory)
        tavily.faults.clear()  # Tavily recovers
        summary = evaluate([job_for(questions, "m")], settings, tmp_path / "run", env=env, search_factory=factory)
    assert summary.search_errors == 0 and summary.rows == QUESTIONS * TRIALS
    table = assert_complete(tmp_path / "run")
    assert {r["tool_calls_count"] for r in table} == {2}
    assert all(not call["error"] for r in table for call in json.loads(r["search_calls"]))


def judge_keep(body):
    return content_reply(json.dumps({"verdict": "keep", "reason": "old"}), body)
