import datetime as dt
import json
import time

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.io import write_parquet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import make_questions
from tests.servers.openai_server import (
    BOXED_EXAMPLE,
    OpenAIServer,
    SearchThenAnswer,
    content_reply,
    first_user_text,
    status_fault,
)

runner = CliRunner()
KEY = "sk-cli-test-0123456789abcdef0123"


@pytest.fixture
def split(tmp_path):
    """A cutoff split directory: test.parquet with train.parquet beside it, and a params file."""
    directory = tmp_path / "splits" / "cutoff-2025-01-31"
    write_parquet(make_questions(6), directory / "test.parquet", QUESTION_SCHEMA, sort_by=("id",))
    write_parquet(make_questions(8, start=dt.date(2024, 6, 1)), directory / "train.parquet", QUESTION_SCHEMA, sort_by=("id",))
    params = tmp_path / "params.yaml"
    params.write_text("models:\n  vendor/model: '2025-01'\nadmit:\n  delta_days: 1\nevaluate:\n  trials: 2\n  search: none\n")
    return directory, params


def invoke(args, env=None):
    return runner.invoke(app, ["evaluate", "--no-progress", *args], env=env or {}, catch_exceptions=False)


def test_baselines_run_offline_with_the_train_split_beside(split, tmp_path):
    directory, params = split
    out = tmp_path / "out"
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "baseline:uniform", "--model",
                     "baseline:base_rate", "--out", str(out), "--params", str(params)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(f"24 rows in {out / 'trials.parquet'}")
    table = pq.read_table(out / "trials.parquet")
    assert set(table["model"].to_pylist()) == {"baseline:uniform", "baseline:base_rate"}
    assert set(table["trial"].to_pylist()) == {1, 2}  # trials from params


def test_api_model_against_a_loopback_server_then_replay_offline(split, tmp_path):
    directory, params = split
    args = ["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params)]
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY}
        result = invoke([*args, "--out", str(tmp_path / "rec"), "--trials", "3"], env)
    assert result.exit_code == 0, result.output
    assert "18 rows" in result.output and len(server.requests) == 18
    replay = invoke([*args, "--out", str(tmp_path / "rep"), "--trials", "3", "--cache", "replay",
                     "--cache-file", str(tmp_path / "rec" / "calls.sqlite")])
    assert replay.exit_code == 0, replay.output
    assert (tmp_path / "rec" / "trials.parquet").read_bytes() == (tmp_path / "rep" / "trials.parquet").read_bytes()
    manifest = json.loads((tmp_path / "rec" / "manifest.json").read_text())
    assert manifest["models"]["vendor/model"]["cutoff"] == "2025-01-31"


def test_missing_key_is_one_line_naming_the_variable(split, tmp_path):
    directory, params = split
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
                     "--out", str(tmp_path / "o")], {"OPENAI_BASE_URL": "http://127.0.0.1:9"})
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: environment variable OPENAI_API_KEY is not set (needed for model 'vendor/model')"
    ]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("vendor/model:online", "':online' slugs enable provider-side browsing"),
        ("other/model", "has no knowledge cutoff: list it under models in params or give --cutoff other/model=YYYY-MM-DD"),
        ("baseline:oracle", "unknown baseline"),
    ],
)
def test_bad_models_are_rejected_at_startup(split, tmp_path, model, message):
    directory, params = split
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", model, "--params", str(params),
                     "--out", str(tmp_path / "o")], {"OPENAI_API_KEY": KEY})
    assert result.exit_code == 1 and message in result.output


def test_cutoff_flag_and_auth_abort_exit_code(split, tmp_path):
    directory, params = split
    with OpenAIServer(fault_plan=lambda body, seen: status_fault(401, f"bad key {KEY}")) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY}
        result = invoke(["--questions", str(directory / "test.parquet"), "--model", "other/model", "--cutoff",
                         "other/model=2025-01-31", "--params", str(params), "--out", str(tmp_path / "o")], env)
    assert result.exit_code == 4
    assert "authentication failed" in result.output and KEY not in result.output


def test_help_has_examples_and_the_params_defaults():
    result = runner.invoke(app, ["evaluate", "--help"])
    assert "oracleproto evaluate --questions" in result.output
    assert "[params: evaluate.trials, default 3]" in " ".join(result.output.split())


def script_old_news(tavily, events) -> None:
    """Each of the researcher's two searches per event finds one dated, harmless result."""
    from tests.servers.tavily_server import result

    for event in events:
        for n in (1, 2):
            tavily.script(f"{event} angle {n}", [result("Old news", "https://o.example", "Earlier report.", "2024-01-01")])


def test_tavily_and_llm_detector_from_the_environment(split, tmp_path):
    from tests.harness.test_evaluate_stack import judge, researcher
    from tests.servers.tavily_server import TavilyStub

    directory, params = split
    events = [r["event"] for r in make_questions(6).to_pylist()]
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(judge) as detector:
        script_old_news(tavily, events)
        env = {
            "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": KEY,
            "TAVILY_BASE_URL": tavily.url, "TAVILY_API_KEY": "tvly-cli-key-0123456789",
            "DETECTOR_BASE_URL": detector.base_url, "DETECTOR_API_KEY": "sk-det-cli-0123456789", "DETECTOR_MODEL": "det/m",
        }
        result_ = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
                          "--search", "tavily", "--detector", "llm", "--out", str(tmp_path / "o")], env)
    assert result_.exit_code == 0, result_.output
    assert len(tavily.searches()) == 24 and len(detector.requests) == 24  # 6 questions × 2 trials × 2 searches
    table = pq.read_table(tmp_path / "o" / "trials.parquet").to_pylist()
    calls = json.loads(table[0]["search_calls"])
    assert calls[0]["detector_verdicts"] == ["keep"] and calls[0]["end_date"] == str(table[0]["prediction_cutoff"])


def test_replay_without_a_recording_is_one_line(split, tmp_path):
    directory, params = split
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
                     "--out", str(tmp_path / "o"), "--cache", "replay"])
    assert result.exit_code == 1
    assert result.output.startswith("error: replay mode: no recorded calls at ")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--trials", "0"], "evaluate.trials: must be an integer >= 1, got 0"),
        (["--search", "bing"], "evaluate.search: must be one of 'archive', 'tavily' or 'none', got 'bing'"),
        (["--delta", "0"], "admit.delta_days: must be an integer >= 1, got 0"),
        (["--max-steps", "1"], "evaluate.lookahead: must be <= max_steps (1), got 2"),
        (["--cutoff", "x/y=2025-13"], "models.x/y.cutoff: must be YYYY-MM-DD, or YYYY-MM for that month's last day, got '2025-13'"),
    ],
)
def test_flags_are_checked_as_the_params_file_is(split, tmp_path, flags, message):
    directory, params = split
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "baseline:first", "--params", str(params),
                     "--out", str(tmp_path / "o"), *flags])
    assert result.exit_code == 1 and result.output.splitlines() == [f"error: {message}"]


def test_final_answer_retry_flag(split, tmp_path):
    directory, params = split

    def boxes_only_when_told(body):
        last = body["messages"][-1]["content"] or ""
        answer = BOXED_EXAMPLE.findall(first_user_text(body))[0]  # a well-formed box for this question type
        return content_reply(f"\\boxed{{{answer}}}" if "Time to commit" in last else "still weighing it", body)

    args = ["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
            "--trials", "1", "--max-steps", "2"]
    with OpenAIServer(boxes_only_when_told) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY}
        on = invoke([*args, "--out", str(tmp_path / "on"), "--final-answer-retry"], env)
        off = invoke([*args, "--out", str(tmp_path / "off")], env)
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    retried, plain = (pq.read_table(tmp_path / d / "trials.parquet").to_pylist() for d in ("on", "off"))
    assert all(t["final_answer_retry_used"] and t["pred"] is not None and t["react_steps"] == 3 for t in retried)
    assert all(not t["final_answer_retry_used"] and t["pred"] is None and t["react_steps"] == 2 for t in plain)


def test_without_a_terminal_progress_is_logged_as_lines(split, tmp_path, monkeypatch):
    from oracleproto.cli import evaluate as cli_evaluate

    monkeypatch.setattr(cli_evaluate._ProgressLog.__init__, "__defaults__", (0.0,))  # a line at every trial
    directory, params = split
    result = CliRunner().invoke(app, ["evaluate", "--questions", str(directory / "test.parquet"), "--model", "baseline:first",
                                      "--out", str(tmp_path / "o"), "--params", str(params)], env={})  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("evaluate: ")]
    assert len(lines) >= 12 and lines[-1].startswith("evaluate: 12/12 trials · in flight idle · errors 0 · $0.0000")
    assert "ETA" in lines[0]


def test_a_closed_port_is_one_line_within_seconds_and_leaves_no_run_folder(split, tmp_path):
    directory, params = split
    started = time.monotonic()
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
                     "--out", str(tmp_path / "o")], {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": KEY})  # fmt: skip
    assert result.exit_code == 1 and time.monotonic() - started < 20
    assert result.output.strip().splitlines() == [
        "error: the endpoint of OPENAI_BASE_URL / OPENAI_API_KEY is unreachable (ConnectError); check OPENAI_BASE_URL"
    ]
    assert not (tmp_path / "o").exists()


def test_a_rejected_key_is_one_line_before_any_trial(split, tmp_path):
    directory, params = split
    with OpenAIServer(SearchThenAnswer(searches=0)) as server:
        server.state.accepted_key = KEY
        result = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
                         "--out", str(tmp_path / "o")], {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-wrong-0123456789abcdef"})  # fmt: skip
    assert result.exit_code == 1 and "rejected the key" in result.output and "check OPENAI_API_KEY" in result.output
    assert "sk-wrong" not in result.output and not (tmp_path / "o").exists()


def test_every_missing_variable_is_named_at_once(split, tmp_path):
    directory, params = split
    params.write_text(params.read_text().replace("models:\n", "models:\n  other/model: {cutoff: '2025-01', api_key_env: OTHER_KEY}\n"))
    result = invoke(["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--model", "other/model",
                     "--params", str(params), "--out", str(tmp_path / "o")], {})  # fmt: skip
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output and "OTHER_KEY" in result.output and len(result.output.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------
# Replay needs nothing: no network, no environment variable


def replay_in_subprocess(args, cwd):
    """``oracleproto evaluate`` in a process whose environment holds PATH and PYTHONPATH only."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "oracleproto", "evaluate", "--no-progress", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def recorded_stack_run(split, tmp_path):
    """A run recorded against loopback model (own URL/key variables), Tavily and LLM detector servers."""
    from tests.harness.test_evaluate_stack import judge, researcher
    from tests.servers.tavily_server import TavilyStub

    directory, params = split
    params.write_text(params.read_text().replace(
        "models:\n  vendor/model: '2025-01'\n",
        "models:\n  vendor/model: {cutoff: '2025-01', base_url_env: ROUTER_BASE_URL, api_key_env: ROUTER_API_KEY}\n",
    ))  # fmt: skip
    events = [r["event"] for r in make_questions(6).to_pylist()]
    args = ["--questions", str(directory / "test.parquet"), "--model", "vendor/model", "--params", str(params),
            "--search", "tavily", "--detector", "llm"]  # fmt: skip
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(judge) as detector:
        script_old_news(tavily, events)
        env = {
            "ROUTER_BASE_URL": model.base_url, "ROUTER_API_KEY": KEY,
            "TAVILY_BASE_URL": tavily.url, "TAVILY_API_KEY": "tvly-cli-key-0123456789",
            "DETECTOR_BASE_URL": detector.base_url, "DETECTOR_API_KEY": "sk-det-cli-0123456789", "DETECTOR_MODEL": "det/m",
        }  # fmt: skip
        recorded = invoke([*args, "--out", str(tmp_path / "rec")], env)
        servers = (model, tavily, detector)
    assert recorded.exit_code == 0, recorded.output
    return args, servers


def test_a_replay_needs_no_network_and_no_environment(recorded_stack_run, tmp_path):
    args, (model, tavily, detector) = recorded_stack_run
    seen = (len(model.requests), len(tavily.requests), len(detector.requests))
    # every server is stopped; the replay's environment has no variable of any service
    result_ = replay_in_subprocess([*args, "--cache", "replay", "--cache-file", str(tmp_path / "rec" / "calls.sqlite"),
                                    "--out", str(tmp_path / "rep")], tmp_path)  # fmt: skip
    assert result_.returncode == 0, result_.stdout + result_.stderr
    assert "Traceback" not in result_.stderr
    assert (tmp_path / "rec" / "trials.parquet").read_bytes() == (tmp_path / "rep" / "trials.parquet").read_bytes()
    assert (len(model.requests), len(tavily.requests), len(detector.requests)) == seen  # nothing reached a server
    recorded, replayed = (json.loads((tmp_path / d / "manifest.json").read_text())["config_snapshot"] for d in ("rec", "rep"))
    assert replayed["detector"] == recorded["detector"] and recorded["detector"]["leak_detector_model"] == "det/m"
    assert replayed["keys"] == recorded["keys"] and recorded["keys"]["ROUTER_API_KEY"] == "sk-c…sha256:b6a1fdb19535"
    # replaying in place (the cache and its manifest in the run folder) needs nothing either
    in_place = replay_in_subprocess([*args, "--cache", "replay", "--out", str(tmp_path / "rec")], tmp_path)
    assert in_place.returncode == 0, in_place.stdout + in_place.stderr


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda m: m["config_snapshot"].update(detector=None), "cannot replay the LLM leak detector: {manifest} names none "
         "(config_snapshot.detector.leak_detector_model); replay with the --detector the run was recorded with"),
        (lambda m: m.pop("config_snapshot"), "{manifest} has no config_snapshot: it cannot tell a replay what the run was recorded with"),
        (None, "cannot replay the LLM leak detector: there is no manifest.json beside the call cache ({manifest}) to name its "
         "model, and DETECTOR_MODEL is not set"),
    ],
    ids=["no-detector", "no-snapshot", "no-manifest"],
)
def test_a_replay_whose_manifest_lacks_something_is_one_line(recorded_stack_run, tmp_path, damage, message):
    args, _ = recorded_stack_run
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "calls.sqlite").write_bytes((tmp_path / "rec" / "calls.sqlite").read_bytes())
    manifest = copy / "manifest.json"
    if damage is not None:
        data = json.loads((tmp_path / "rec" / "manifest.json").read_text())
        damage(data)
        manifest.write_text(json.dumps(data))
    result_ = invoke([*args, "--cache", "replay", "--cache-file", str(copy / "calls.sqlite"), "--out", str(tmp_path / "rep")])
    assert result_.exit_code == 1
    assert result_.output.splitlines() == ["error: " + message.format(manifest=manifest)]
