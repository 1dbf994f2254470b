"""End-to-end evaluation against the loopback model server (search: an in-process backend)."""

import asyncio
import datetime as dt
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.admission import admissible
from oracleproto.config import Sampling, Score, parse_params
from oracleproto.errors import ConfigError, InputError, RunAborted
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.plan import eval_settings, model_spec
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.runstore import RunStore
from oracleproto.harness.settings import Budgets, EvalSettings, ModelSpec
from oracleproto.io import write_parquet
from oracleproto.letters import letters
from oracleproto.prompts import BELIEF_PROTOCOL, ProtocolSwitches, text_hash16
from oracleproto.schema import QUESTION_SCHEMA, TRIAL_SCHEMA
from oracleproto.scoring.scorer import score_file, summary
from tests.harness.fakes import FakeSearch
from tests.servers.openai_server import (
    Fault,
    FaultStorm,
    OpenAIServer,
    SearchThenAnswer,
    first_user_text,
    status_fault,
)

KEY = "sk-fake-e2e-KEY-5f1d2c3b4a596877"
SETTINGS = EvalSettings(search_backend="archive", archive_path="unused-by-fake", detector="off")
MULTI_GOLDS = ["B, D", "B, C, E", "C, D", "A, B, E", "B, E"]


def make_questions(n=30, start=dt.date(2026, 3, 12)):
    """A mix of all four strata; multi-answer golds are distinctive strings (checked absent from requests)."""
    rows = []
    for i in range(n):
        tau = start + dt.timedelta(days=i)
        kind = i % 6
        if kind in (0, 1):
            rows.append(("yes_no", "single", f"Will indicator {i} rise?", ["Yes", "No"], "AB"[i % 2]))
        elif kind == 2:
            rows.append(("binary_named", "single", f"Who wins match {i}?", [f"Team{i}a", f"Team{i}b"], "B"))
        elif kind in (3, 4):
            rows.append(("multiple_choice", "single", f"Which range for value {i}?", ["low", "mid", "high", "extreme"], "C"))
        else:
            rows.append(("multiple_choice", "multi", f"Which items pass test {i}?", ["p", "q", "r", "s", "t"], MULTI_GOLDS[i % 5]))
        rows[-1] = (f"q{i:02d}",) + rows[-1] + (tau,)
    names = ["id", "question_type", "choice_type", "event", "options", "answer", "end_time"]
    return pa.Table.from_pylist([dict(zip(names, r)) for r in rows], schema=QUESTION_SCHEMA)


@pytest.fixture
def questions_path(tmp_path) -> Path:
    path = tmp_path / "questions.parquet"
    write_parquet(make_questions(), path, QUESTION_SCHEMA, sort_by=("id",))
    return path


def env_for(server, key=KEY):
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": key}


async def no_sleep(seconds):
    await asyncio.sleep(0)


def run_api(questions_path, out, server, *, settings=SETTINGS, search=None, cutoff=dt.date(2025, 1, 31), env=None, **kwargs):
    search = search if search is not None else FakeSearch()
    job = EvalJob(ModelSpec(label="vendor/model", slug="vendor/model", cutoff=cutoff), QuestionSet.load(questions_path))
    summary = evaluate(
        [job], settings, out, env=env if env is not None else env_for(server),
        search_factory=lambda cache, s, e: search, sleep=no_sleep, **kwargs,
    )
    return summary, search


def read_trials(out) -> pa.Table:
    return pq.read_table(Path(out) / "trials.parquet")


def test_thirty_questions_three_trials_complete(questions_path, tmp_path):
    questions = {r["id"]: r for r in make_questions().to_pylist()}
    with OpenAIServer(SearchThenAnswer(searches=2)) as server:
        summary, search = run_api(questions_path, tmp_path / "run", server)
    table = read_trials(tmp_path / "run")
    assert table.num_rows == 90 and summary.rows == 90
    assert table.schema.remove_metadata().equals(TRIAL_SCHEMA.remove_metadata())
    keys = list(zip(table["q_id"].to_pylist(), table["trial"].to_pylist()))
    assert keys == sorted(keys) and len(set(keys)) == 90
    assert table["error"].null_count == 90 and table["pred"].null_count == 0
    assert set(table["tool_calls_count"].to_pylist()) == {2} and set(table["react_steps"].to_pylist()) == {3}

    # every search carried end_date = τ − δ of its own question
    assert len(search.calls) == 180
    for query, end_date, context in search.calls:
        assert end_date == questions[context.q_id]["end_time"] - dt.timedelta(days=1)

    # the model never saw χ, a gold answer or the key; the key travelled only in the header
    for request in server.requests:
        text = request.raw.decode()
        assert KEY not in text and request.headers["Authorization"] == f"Bearer {KEY}"
        assert '"answer"' not in text
        for gold in MULTI_GOLDS:
            assert gold not in text
        for tool in request.body.get("tools", []):
            assert set(tool["function"]["parameters"]["properties"]) == {"query"}
    first_prompts = {r.body["messages"][0]["content"] for r in server.requests}
    for row in questions.values():
        chi = (row["end_time"] - dt.timedelta(days=1)).isoformat()
        assert not any(row["event"] in p and chi in p for p in first_prompts)

    # traces are faithful chat transcripts
    for messages_json, tools_json in zip(table["messages"].to_pylist(), table["tools"].to_pylist()):
        messages = json.loads(messages_json)
        assert messages[0]["role"] == "user" and messages[-1]["role"] == "assistant"
        pending = set()
        for message in messages:
            if message["role"] == "assistant":
                assert not pending
                for call in message.get("tool_calls", []):
                    assert isinstance(call["function"]["arguments"], str)
                    pending.add(call["id"])
            elif message["role"] == "tool":
                pending.remove(message["tool_call_id"])
        assert json.loads(tools_json)[0]["function"]["name"] == "web_search"
    search_calls = json.loads(table["search_calls"][0].as_py())
    assert {"query", "end_date", "n_results"} <= set(search_calls[0])


def test_trials_outside_the_cutoff_are_recorded_not_run(questions_path, tmp_path):
    cutoff = dt.date(2026, 3, 30)  # admits τ with τ − 1 ≥ 2026-03-30, i.e. τ ≥ 2026-03-31
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        summary, _ = run_api(questions_path, tmp_path / "run", server, cutoff=cutoff)
    table = read_trials(tmp_path / "run").to_pylist()
    skipped = {r["q_id"] for r in table if r["error"] == "skipped_training_cutoff"}
    ran = {r["q_id"] for r in table if r["error"] is None}
    assert skipped == {f"q{i:02d}" for i in range(19)} and ran == {f"q{i:02d}" for i in range(19, 30)}
    assert summary.skipped_cutoff == 57
    prompts = " ".join(r.body["messages"][0]["content"] for r in server.requests)
    assert "Will indicator 0 rise?" not in prompts
    assert all(r["messages"] is None and r["cost_usd"] == 0.0 for r in table if r["error"])


def test_admissibility_rule():
    tau = dt.date(2026, 3, 12)
    assert admissible(dt.date(2026, 3, 11), tau, 1)
    assert not admissible(dt.date(2026, 3, 12), tau, 1)
    assert not admissible(dt.date(2026, 3, 10), tau, 3)
    assert admissible(None, tau, 1)


def test_fault_storm_is_classified_and_the_run_completes(questions_path, tmp_path):
    storm = FaultStorm(
        faults=(
            status_fault(429, retry_after="0"),
            status_fault(500),
            status_fault(503),
            Fault("malformed"),
            Fault("drop"),
            Fault("stall", stall_s=0.4),
            status_fault(400, '{"error": {"message": "flagged by content_filter"}}'),
        ),
        rate=0.35,
    )
    from oracleproto.config import Sampling

    settings = EvalSettings(search_backend="archive", archive_path="x", detector="off", sampling=Sampling(timeout_s=0.2))
    with OpenAIServer(SearchThenAnswer(searches=2), fault_plan=storm) as server:
        summary, _ = run_api(questions_path, tmp_path / "run", server, settings=settings)
    table = read_trials(tmp_path / "run").to_pylist()
    assert len(table) == 90
    served = set(server.state.faults_served)
    assert {"429", "500", "503", "malformed", "drop", "stall", "400"} <= served
    errors = {r["error"] for r in table} - {None}
    # transient faults are retried away; the content-policy refusal is final and classified
    assert errors == {"content_policy"}
    assert all(r["pred"] is None for r in table if r["error"])
    assert summary.errors == {"content_policy": sum(1 for r in table if r["error"])}
    log = (tmp_path / "run" / "logs" / "evaluate.log").read_text()
    assert "content_policy" in log


def test_calls_past_their_deadline_become_timeout_rows_the_scorer_counts(questions_path, tmp_path):
    stall = Fault("stall", stall_s=0.5)
    plan = lambda body, seen: stall if "indicator 6 " in body["messages"][0]["content"] else None  # noqa: E731
    settings = SETTINGS.model_copy(update={"sampling": Sampling(timeout_s=0.2)})
    with OpenAIServer(SearchThenAnswer(searches=1), fault_plan=plan) as server:
        summary_line, _ = run_api(questions_path, tmp_path / "run", server, settings=settings)
    errors = [(r["q_id"], r["error"]) for r in read_trials(tmp_path / "run").to_pylist() if r["error"]]
    assert errors == [("q06", "timeout")] * 3 and summary_line.errors == {"timeout": 3}
    # every attempt (1 + 5 retries, as for a network fault) of each trial's first call hit the deadline
    assert sum(1 for body in server.chat_bodies() if "indicator 6 " in body["messages"][0]["content"]) == 3 * 6
    scored = summary(score_file(tmp_path / "run" / "trials.parquet", Score(bootstrap=0)))["vendor/model"]
    assert scored["call_error_rate"] == pytest.approx(3 / 90)


def test_record_then_replay_offline_is_byte_identical(questions_path, tmp_path):
    with OpenAIServer(SearchThenAnswer(searches=2)) as server:
        run_api(questions_path, tmp_path / "rec", server)
    # network off (server stopped), no keys at all
    replay = EvalSettings(search_backend="archive", archive_path="unused-by-fake", detector="off", cache_mode="replay")
    run_api(questions_path, tmp_path / "rep", server, settings=replay, env={}, cache_path=tmp_path / "rec" / "calls.sqlite")
    assert (tmp_path / "rec" / "trials.parquet").read_bytes() == (tmp_path / "rep" / "trials.parquet").read_bytes()


def test_replay_in_place_rederives_every_trial(questions_path, tmp_path):
    with OpenAIServer(SearchThenAnswer(searches=2)) as server:
        run_api(questions_path, tmp_path / "run", server)
    recorded = (tmp_path / "run" / "trials.parquet").read_bytes()
    (tmp_path / "run" / "trials.parquet").unlink()
    replay = EvalSettings(search_backend="archive", archive_path="unused-by-fake", detector="off", cache_mode="replay")
    summary, _ = run_api(questions_path, tmp_path / "run", server, settings=replay, env={})
    assert summary.ran == 90 and summary.resumed == 0
    assert (tmp_path / "run" / "trials.parquet").read_bytes() == recorded


def test_replay_of_a_run_with_error_rows_is_byte_identical(questions_path, tmp_path):
    refuse = status_fault(400, "content_policy_violation")
    plan = lambda body, seen: refuse if "indicator 6 " in body["messages"][0]["content"] else None  # noqa: E731
    with OpenAIServer(SearchThenAnswer(searches=1), fault_plan=plan) as server:
        run_api(questions_path, tmp_path / "rec", server)
    replay = EvalSettings(search_backend="archive", archive_path="x", detector="off", cache_mode="replay")
    run_api(questions_path, tmp_path / "rep", server, settings=replay, env={}, cache_path=tmp_path / "rec" / "calls.sqlite")
    rec = (tmp_path / "rec" / "trials.parquet").read_bytes()
    assert rec == (tmp_path / "rep" / "trials.parquet").read_bytes()
    assert read_trials(tmp_path / "rec")["error"].null_count == 87


def test_replay_miss_aborts_naming_the_call(questions_path, tmp_path):
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        run_api(questions_path, tmp_path / "rec", server)
    changed = EvalSettings(search_backend="archive", archive_path="x", detector="off", cache_mode="replay",
                           budgets=Budgets(max_steps=5))
    with pytest.raises(RunAborted, match=r"replay miss: no recorded llm call for model=vendor/model q_id=q\d\d"):
        run_api(questions_path, tmp_path / "rep", server, settings=changed, env={}, cache_path=tmp_path / "rec" / "calls.sqlite")


def test_fake_keys_reach_no_artifact_and_no_log(questions_path, tmp_path):
    echo = status_fault(401, json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    with OpenAIServer(SearchThenAnswer(searches=2)) as server:
        run_api(questions_path, tmp_path / "run", server)
    with OpenAIServer(fault_plan=lambda body, seen: echo) as bad:
        with pytest.raises(RunAborted) as info:
            run_api(questions_path, tmp_path / "bad", bad)
    assert KEY not in str(info.value)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".parquet" or p.name == "trials.parquet"]
    assert any(p.name == "evaluate.log" for p in files) and any(p.name == "calls.sqlite" for p in files)
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data, path
        assert KEY[8:24].encode() not in data, path
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config_snapshot"]["keys"]["OPENAI_API_KEY"].startswith("sk-f…sha256:")


def test_auth_failure_aborts_and_cancels_in_flight(questions_path, tmp_path):
    import time

    state = {"n": 0}

    def plan(body, seen):
        state["n"] += 1
        return status_fault(401) if state["n"] == 6 else None

    with OpenAIServer(SearchThenAnswer(searches=2), latency_s=0.15, fault_plan=plan) as server:
        started = time.perf_counter()
        with pytest.raises(RunAborted, match="authentication failed"):
            run_api(questions_path, tmp_path / "run", server)
        elapsed = time.perf_counter() - started
        n_at_abort = len(server.requests)
        time.sleep(0.4)
        assert len(server.requests) == n_at_abort  # nothing more was sent after the abort
    assert elapsed < 2.0 and n_at_abort < 20
    assert not (tmp_path / "run" / "trials.parquet").exists()
    # the finished trials are kept, and a resumed run completes everything
    with OpenAIServer(SearchThenAnswer(searches=2)) as server:
        summary, _ = run_api(questions_path, tmp_path / "run", server)
    assert read_trials(tmp_path / "run").num_rows == 90 and summary.rows == 90


def test_resume_redoes_only_error_rows(questions_path, tmp_path):
    refuse = status_fault(400, "content_policy_violation")
    plan = lambda body, seen: refuse if "indicator 0 " in body["messages"][0]["content"] else None  # noqa: E731
    with OpenAIServer(SearchThenAnswer(searches=1), fault_plan=plan) as server:
        first, _ = run_api(questions_path, tmp_path / "run", server)
    assert first.errors == {"content_policy": 3}
    with RunStore(next((tmp_path / "run" / "db").glob("*.db")), "vendor/model") as store:
        before = {(r["q_id"], r["trial"]) for r in store.rows() if r["error"] is None}
    with OpenAIServer(SearchThenAnswer(searches=1)) as server:
        second, _ = run_api(questions_path, tmp_path / "run", server)
    assert second.resumed == 87 and second.ran == 3 and second.errors == {}
    prompts = {r.body["messages"][0]["content"] for r in server.requests}
    assert all("indicator 0 " in p for p in prompts)  # only q00 was asked again
    assert len(before) == 87 and read_trials(tmp_path / "run")["error"].null_count == 90


def test_resume_refuses_changed_settings(questions_path, tmp_path):
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        run_api(questions_path, tmp_path / "run", server)
        changed = EvalSettings(search_backend="archive", archive_path="unused-by-fake", detector="off",
                               budgets=Budgets(trials=4))
        with pytest.raises(InputError, match="budgets.trials"):
            run_api(questions_path, tmp_path / "run", server, settings=changed)


def test_missing_key_is_a_startup_error(questions_path, tmp_path):
    with OpenAIServer() as server:
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            run_api(questions_path, tmp_path / "run", server, env={"OPENAI_BASE_URL": server.base_url})
        with pytest.raises(ConfigError, match="placeholder"):
            run_api(questions_path, tmp_path / "run", server, env=env_for(server, key="REPLACE_ME"))
        assert server.requests == []
    assert not (tmp_path / "run").exists()


def baseline_jobs(questions_path, train_path):
    qs, train = QuestionSet.load(questions_path), QuestionSet.load(train_path)
    return [EvalJob(ModelSpec(label=f"baseline:{n}@c", slug=f"baseline:{n}"), qs, train) for n in ("uniform", "first", "no", "base_rate")]


def test_baselines_run_offline_and_deterministically(questions_path, tmp_path):
    train_path = tmp_path / "train.parquet"
    write_parquet(make_questions(12, start=dt.date(2025, 1, 1)), train_path, QUESTION_SCHEMA, sort_by=("id",))
    settings = EvalSettings(search_backend="none")
    a = evaluate(baseline_jobs(questions_path, train_path), settings, tmp_path / "a", env={})
    evaluate(baseline_jobs(questions_path, train_path), settings, tmp_path / "b", env={})
    assert a.rows == 360 and a.errors == {} and a.cost_usd == 0.0
    for name in ("trials.parquet", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    table = read_trials(tmp_path / "a").to_pylist()
    assert all(r["pred"] is not None for r in table)
    first = [r for r in table if r["model"] == "baseline:first@c"]
    assert {r["pred"] for r in first} == {"A"}
    messages = json.loads(first[0]["messages"])
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert "web_search is disabled" in messages[0]["content"]  # baselines never search
    assert not (tmp_path / "a" / "calls.sqlite").exists()


def test_base_rate_without_train_is_an_error(questions_path, tmp_path):
    job = EvalJob(ModelSpec(label="b", slug="baseline:base_rate"), QuestionSet.load(questions_path))
    with pytest.raises(InputError, match="train split"):
        evaluate([job], EvalSettings(search_backend="none"), tmp_path / "x", env={})


def test_manifest_carries_the_hash_chain(questions_path, tmp_path):
    with OpenAIServer(SearchThenAnswer(searches=1)) as server:
        run_api(questions_path, tmp_path / "run", server)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    chain = manifest["hash_chain"]
    source = chain["sources"][str(questions_path)]
    assert len(source["source_hash"]) == 64 and len(source["prompt_templates_hash"]) == 64
    assert source["templates_from_corpus"] is False
    assert len(chain["reflection_protocol_hash"]) == 16 and chain["belief_protocol_hash"] is None
    assert chain["leak_detector_prompt_hash"] is None  # detector off
    assert len(chain["config_snapshot_hash"]) == 64
    assert manifest["budgets"]["max_steps"] == 6 and manifest["trials"]["rows"] == 90
    assert manifest["models"]["vendor/model"]["counts"] == {"ok": 90}


def test_bad_question_table_is_a_clear_error(tmp_path):
    path = tmp_path / "q.parquet"
    table = make_questions(3)
    table = table.set_column(table.column_names.index("question_type"), "question_type", pa.array(["yes_no", "numeric", "yes_no"]))
    pq.write_table(table, path)
    with pytest.raises(InputError, match=r"row 1 \(id 'q01'\) column 'question_type': failed question_type_mismatch value 'numeric'"):
        QuestionSet.load(path)
    pq.write_table(make_questions(3).drop(["answer"]), path)
    with pytest.raises(InputError, match="lacks column"):
        QuestionSet.load(path)


def test_templates_from_the_corpus_are_used(tmp_path):
    from oracleproto.prompts import DEFAULT_TEMPLATES

    custom = dict(DEFAULT_TEMPLATES, agent_role="CUSTOM-ROLE-MARKER")
    path = tmp_path / "q.parquet"
    write_parquet(make_questions(2), path, QUESTION_SCHEMA, sort_by=("id",), metadata={"prompt_templates": custom})
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        run_api(path, tmp_path / "run", server)
    assert all("CUSTOM-ROLE-MARKER" in r.body["messages"][0]["content"] for r in server.requests)


def test_params_to_settings_and_specs():
    params = parse_params({
        "models": {"openai/gpt-4.1": {"cutoff": "2024-06", "price_prompt_per_mtok": 2.0}},
        "admit": {"delta_days": 2},
        "evaluate": {"trials": 2, "search": "none", "sampling": {"temperature": 0.2}, "concurrency": {"llm": 3}},
    })  # fmt: skip
    settings = eval_settings(params)
    assert settings.budgets.trials == 2 and settings.budgets.delta_days == 2 and settings.search_backend == "none"
    assert settings.sampling.temperature == 0.2 and settings.concurrency.llm == 3
    spec = model_spec("openai/gpt-4.1", params.models)
    assert spec.label == "openai/gpt-4.1" and spec.cutoff == dt.date(2024, 6, 30) and spec.price_prompt_per_mtok == 2.0
    with pytest.raises(ConfigError, match="no knowledge cutoff"):
        model_spec("x/y", params.models)
    assert model_spec("baseline:first", {}).cutoff is None

class SearchThenBelieve(SearchThenAnswer):
    """SearchThenAnswer, with a belief block (letter A favoured) before the box."""

    def __call__(self, body):
        reply = super().__call__(body)
        message = reply["choices"][0]["message"]
        if message.get("content"):
            # one key per option letter (the outcomes block; yes/no and binary have two), summing to 1
            n = len(re.findall(r"^[A-Z]\. ", first_user_text(body), flags=re.M)) or 2
            probabilities = {symbol: 0.6 if i == 0 else 0.4 / (n - 1) for i, symbol in enumerate(letters(n))}
            message["content"] = f"<belief>{json.dumps({'probabilities': probabilities})}</belief> " + message["content"]
        return reply


def test_belief_protocol_end_to_end_feeds_the_probabilistic_metrics(questions_path, tmp_path):
    settings = SETTINGS.model_copy(update={"protocols": ProtocolSwitches(belief=True), "budgets": Budgets(trials=1)})
    with OpenAIServer(SearchThenBelieve(searches=1)) as server:
        run_api(questions_path, tmp_path / "run", server, settings=settings)
        assert all(BELIEF_PROTOCOL in first_user_text(r.body) for r in server.requests)
    trials = read_trials(tmp_path / "run").to_pylist()
    assert len(trials) == 30 and all(t["pred"] is not None for t in trials)
    for t in trials:
        assert t["belief"] is not None and len(t["belief"]) == len(t["options"]) and t["belief"][0] == 0.6
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["hash_chain"]["belief_protocol_hash"] == text_hash16(BELIEF_PROTOCOL)
    result = summary(score_file(tmp_path / "run" / "trials.parquet", Score(bootstrap=0)))["vendor/model"]
    assert result["fallback_share"] == 0.0  # every vector is the model's own
    assert result["brier_index"] is not None and result["nll"] is not None


def test_nudges_and_bail_out_retry_reach_the_trial_table(questions_path, tmp_path):
    # the model answers at once, never searching: nudged up to max_nudges, then its box stands
    budgets = Budgets(trials=1, min_search_calls=1, max_nudges=2, final_answer_retry=True)
    settings = SETTINGS.model_copy(update={"budgets": budgets})
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        run_api(questions_path, tmp_path / "run", server, settings=settings)
    trials = read_trials(tmp_path / "run").to_pylist()
    assert {(t["nudges_used"], t["react_steps"], t["final_answer_retry_used"]) for t in trials} == {(2, 3, False)}
    assert all(t["pred"] is not None for t in trials)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["budgets"]["min_search_calls"] == 1 and manifest["budgets"]["final_answer_retry"] is True


class HostileUsage(SearchThenAnswer):
    """Answers like SearchThenAnswer, with one hostile usage field in every reply."""

    def __init__(self, field: str, value) -> None:
        super().__init__(searches=0)
        self.field, self.value = field, value

    def __call__(self, body):
        reply = super().__call__(body)
        reply["usage"][self.field] = self.value
        return reply


@pytest.mark.parametrize(
    ("field", "value"),
    [("prompt_tokens", 10**20), ("completion_tokens", -5), ("prompt_tokens", "many"), ("cost", float("nan")),
     ("cost", float("inf")), ("cost", -1e9)],
)
def test_hostile_usage_numbers_are_stored_as_unknown_and_the_run_scores_and_exports(questions_path, tmp_path, field, value):
    from oracleproto.config import Export
    from oracleproto.export.trajectories import ExportSettings, run_export
    from oracleproto.io import write_parquet

    settings = SETTINGS.model_copy(update={"search_backend": "none"})
    with OpenAIServer(HostileUsage(field, value)) as server:
        summary, _ = run_api(questions_path, tmp_path / "run", server, settings=settings)
    assert summary.errors == {}
    rows = read_trials(tmp_path / "run").to_pylist()
    assert all(r["invalid_usage"] == [field] for r in rows)
    if field != "cost":
        assert all(r[field] is None for r in rows)
    assert all(r["cost_usd"] >= 0 and r["cost_usd"] == r["cost_usd"] for r in rows)  # finite, never NaN
    scored = summary_of(tmp_path)
    assert scored["n_trials"] == len(rows)
    splits = tmp_path / "splits" / "cutoff-2025-01-31"
    questions = pq.read_table(questions_path)
    write_parquet(questions, splits / "test.parquet", QUESTION_SCHEMA, metadata={"delta_days": 1})
    write_parquet(questions.slice(0, 0), splits / "train.parquet", QUESTION_SCHEMA, metadata={"delta_days": 1})
    exported = run_export(tmp_path / "run" / "trials.parquet", tmp_path / "splits", tmp_path / "export",
                          ExportSettings(**Export(sft_mode="all").model_dump()))  # fmt: skip
    assert exported["sft"]["test_rows"] == len(rows)


def summary_of(tmp_path):
    return summary(score_file(tmp_path / "run" / "trials.parquet", Score(bootstrap=0)))["vendor/model"]
