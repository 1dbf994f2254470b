import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.config import Params, parse_params
from oracleproto.export import trajectories as ex
from oracleproto.io import write_parquet
from oracleproto.prompts import (
    DEFAULT_TEMPLATES,
    PromptQuestion,
    ProtocolSwitches,
    render_user_prompt,
)
from oracleproto.schema import QUESTION_SCHEMA, RL_SCHEMA, SFT_SCHEMA, TRIAL_SCHEMA
from oracleproto.tools import WEB_SEARCH_TOOL

TAU = dt.date(2026, 3, 12)
KAPPA = dt.date(2025, 9, 29)
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
DOC = {"title": "Report", "url": "https://news.example/a", "content": "Before the cutoff.", "published_date": "2026-03-01"}


def trace(final: str, arguments: str = '{"query": "status"}') -> list[dict]:
    """A one-search ReAct trace in the evaluator's canonical form (tool name left out on
    the tool result, as the OpenAI wire format does)."""
    return [
        {"role": "user", "content": "Will it happen?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "web_search", "arguments": arguments}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"results": [DOC]})},
        {"role": "assistant", "content": f"Evidence points one way. \\boxed{{{final}}}"},
    ]


def trial(model: str, q_id: str, number: int, pred: str | None, **overrides) -> dict:
    question = {
        "q1": ("yes_no", "single", ["Yes", "No"], "A"),
        "q2": ("multiple_choice", "multi", ["Red", "Green", "Blue"], "A, C"),
    }[q_id]
    qtype, ctype, options, answer = question
    final = {"A": "Yes", "B": "No"}.get(pred, pred) if qtype == "yes_no" else pred
    row = {name: None for name in TRIAL_SCHEMA.names}
    row.update(
        model=model, q_id=q_id, question_type=qtype, choice_type=ctype, options=options, answer=answer,
        trial=number, pred=pred, error=None, cost_usd=0.0, cutoff=KAPPA, delta_days=1,
        prediction_cutoff=TAU - dt.timedelta(days=1), end_time=TAU,
        messages=json.dumps(trace(final or "?")), tools=json.dumps([SEARCH_TOOL]),
        search_calls=json.dumps([{"query": "status", "n_results": 1, "detector_verdicts": ["keep", "drop"]}]),
    )  # fmt: skip
    row.update(overrides)
    return row


def trials_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=TRIAL_SCHEMA)


@pytest.fixture
def trials() -> pa.Table:
    return trials_table(
        [
            trial("m1", "q1", 1, "A"),  # correct
            trial("m1", "q1", 2, "B"),  # wrong
            trial("m1", "q1", 3, None),  # parse failure
            trial("m1", "q2", 1, "A"),  # partial credit 0.5
            trial("m1", "q2", 2, "A, C"),  # correct
            trial("m1", "q2", 3, None, error="rate_limit", messages=None),
            trial("m2", "q1", 1, None, error="skipped_training_cutoff", messages=None),
            trial("m2", "q2", 1, "B"),  # wrong
            trial("m2", "q2", 2, "A"),  # partial
            trial("m2", "q2", 3, "C"),  # partial, same score: the lower trial number wins best_of_n
        ]
    )


def keys(table: pa.Table) -> list[tuple]:
    return [(r["model"], r["q_id"], r["trial"]) for r in table.select(["model", "q_id", "trial"]).to_pylist()]


# ---------------------------------------------------------------------------------------- selection


def test_correct_mode_keeps_trials_with_exam_score_one(trials):
    selection = ex.select_sft_trials(trials, "correct")
    assert keys(selection.trials) == [("m1", "q1", 1), ("m1", "q2", 2)]
    assert selection.trials["exam_score"].to_pylist() == [1.0, 1.0]
    assert selection.counts == {"trials": 10, "trials_of_models": 10, "parsed_with_trace": 7, "selected": 2}


def test_all_mode_keeps_every_parsed_trial_with_its_score(trials):
    selection = ex.select_sft_trials(trials, "all")
    assert keys(selection.trials) == [
        ("m1", "q1", 1), ("m1", "q1", 2), ("m1", "q2", 1), ("m1", "q2", 2), ("m2", "q2", 1), ("m2", "q2", 2), ("m2", "q2", 3),
    ]  # fmt: skip
    assert selection.trials["exam_score"].to_pylist() == [1.0, 0.0, 0.5, 1.0, 0.0, 0.5, 0.5]


def test_best_of_n_keeps_one_best_positive_trial_per_model_and_question(trials):
    selection = ex.select_sft_trials(trials, "best_of_n")
    assert keys(selection.trials) == [("m1", "q1", 1), ("m1", "q2", 2), ("m2", "q2", 2)]


def test_models_filter_and_unknown_mode(trials):
    assert keys(ex.select_sft_trials(trials, "correct", models=["m2"]).trials) == []
    with pytest.raises(ex.InputError, match="sft mode 'best' is not one of correct, all, best_of_n"):
        ex.select_sft_trials(trials, "best")


def test_baselines_are_left_out_unless_named(trials):
    guess = trials_table([trial("baseline:first@cutoff-2025-09-29", "q1", 1, "A")])
    assert ex.select_sft_trials(guess, "correct").trials.num_rows == 0
    named = ex.select_sft_trials(guess, "correct", models=["baseline:first@cutoff-2025-09-29"])
    assert keys(named.trials) == [("baseline:first@cutoff-2025-09-29", "q1", 1)]


def test_missing_trial_columns_are_named(trials):
    with pytest.raises(ex.InputError, match="lacks column\\(s\\) messages, tools"):
        ex.select_sft_trials(trials.drop_columns(["messages", "tools"]), "all")


# ---------------------------------------------------------------------------------------- traces


def test_sft_rows_carry_typed_messages_and_provenance(trials):
    sft, skipped = ex.sft_table(ex.select_sft_trials(trials, "correct").trials, {(KAPPA, "q1"): "test"})
    assert skipped == {}
    row = sft.to_pylist()[0]
    assert [m["role"] for m in row["messages"]] == ["user", "assistant", "tool", "assistant"]
    call = row["messages"][1]["tool_calls"][0]
    assert call["function"] == {"name": "web_search", "arguments": '{"query": "status"}'}
    assert row["messages"][2]["name"] == "web_search"  # filled from the call it answers
    assert row["messages"][2]["tool_call_id"] == "call_1"
    assert json.loads(row["tools"][0]) == SEARCH_TOOL
    assert (row["model"], row["q_id"], row["trial"], row["pred"], row["exam_score"]) == ("m1", "q1", 1, "A", 1.0)
    assert (row["cutoff"], row["prediction_cutoff"], row["end_time"]) == (KAPPA, dt.date(2026, 3, 11), TAU)
    assert row["split"] == "test"  # the question's split in its cutoff's config
    assert sft.to_pylist()[1]["split"] is None  # q2 is in no split set here
    assert row["detector_verdicts"] == [["keep", "drop"]]
    doc_hash = hashlib.sha256(ex.json_canonical(DOC).encode()).hexdigest()
    assert row["retrieved_docs"] == [{"url": DOC["url"], "sha256": doc_hash}]
    assert sft.schema == SFT_SCHEMA


def refused(trace_rows: list[dict], reason: str) -> list[dict]:
    """The trace as the harness leaves it when it refuses the search call."""
    rows = [dict(m) for m in trace_rows]
    rows[2]["content"] = json.dumps({"error": reason, "status": "step 2/6 (5 remaining)"})
    return rows


def test_calls_with_no_allowed_form_and_unfinished_traces_are_skipped_and_counted(trials):
    bad_arguments = trial("m1", "q1", 1, "A", search_calls="[]",
                          messages=json.dumps(refused(trace("Yes", arguments="query=status"), "invalid arguments JSON")))  # fmt: skip
    unknown_tool = trial("m1", "q1", 2, "A", search_calls="[]", messages=json.dumps(
        refused([{**m, "tool_calls": [{**m["tool_calls"][0], "function": {"name": "browse", "arguments": "{}"}}]} if m.get("tool_calls") else m
                 for m in trace("Yes")], "unknown tool: browse")))  # fmt: skip
    unfinished = trial("m1", "q2", 2, "A, C", messages=json.dumps(trace("A, C")[:3]))
    selected = ex.select_sft_trials(trials_table([bad_arguments, unknown_tool, unfinished]), "correct").trials
    sft, skipped = ex.sft_table(selected, {})
    assert sft.num_rows == 0
    assert skipped == {"bad_tool_arguments": 1, "no_final_answer": 1, "unknown_tool": 1}


def test_exported_tool_calls_carry_exactly_the_query_the_harness_ran(trials):
    # the model tried to move the search window; the harness ignored it and ran "status"
    moved = trial("m1", "q1", 1, "A", messages=json.dumps(trace("Yes", arguments='{"query": " status ", "end_date": "2099-12-31"}')))
    selected = ex.select_sft_trials(trials_table([moved]), "correct").trials
    sft, skipped = ex.sft_table(selected, {})
    (row,) = sft.to_pylist()
    (call,) = row["messages"][1]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"query": "status"}
    assert row["raw_tool_arguments"] == ['{"query": " status ", "end_date": "2099-12-31"}']
    assert row["schema_violations"] == ["call_1: argument 'end_date' is not in the schema"]
    dropped, skipped = ex.sft_table(selected, {}, violations="drop")
    assert dropped.num_rows == 0 and skipped == {"schema_violation": 1}


def test_a_refused_call_with_a_query_is_exported_canonical_and_flagged(trials):
    over_budget = trial("m1", "q1", 1, "A", search_calls="[]", messages=json.dumps(refused(trace("Yes"), "search budget exceeded")))
    (row,) = ex.sft_table(ex.select_sft_trials(trials_table([over_budget]), "correct").trials, {})[0].to_pylist()
    assert json.loads(row["messages"][1]["tool_calls"][0]["function"]["arguments"]) == {"query": "status"}
    assert row["schema_violations"] == ["call_1: refused by the harness: search budget exceeded"]


def test_every_exported_call_validates_against_the_offered_schema(trials):
    sft, _ = ex.sft_table(ex.select_sft_trials(trials, "all").trials, {})
    assert sft.num_rows
    schema = SEARCH_TOOL["function"]["parameters"]
    for row in sft.to_pylist():
        for message in row["messages"]:
            for call in message["tool_calls"] or []:
                arguments = json.loads(call["function"]["arguments"])
                assert set(arguments) == set(schema["required"]) == set(schema["properties"])
                assert isinstance(arguments["query"], str) and call["function"]["name"] == SEARCH_TOOL["function"]["name"]


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ("not json", "messages is not JSON"),
        (json.dumps([]), "messages is not a non-empty JSON list"),
        (json.dumps([{"role": "robot", "content": "x"}]), "message 0: role must be one of"),
        (json.dumps([{"role": "user", "content": ["part"]}]), "message 0: content must be a string or null"),
        (json.dumps([{"role": "tool", "tool_call_id": "nope", "content": "x"}]), "answers no earlier tool call"),
    ],
)
def test_broken_traces_are_errors_naming_the_trial_and_rule(messages, rule):
    selected = ex.select_sft_trials(trials_table([trial("m1", "q1", 1, "A", messages=messages)]), "all").trials
    with pytest.raises(ex.InputError, match=rule) as info:
        ex.sft_table(selected, {})
    assert "model=m1, q_id=q1, trial=1" in str(info.value)


# ---------------------------------------------------------------------------------------- OpenAI shape


def validate_openai_record(record: dict) -> None:
    """The OpenAI chat fine-tuning line shape (with tools): raises AssertionError naming the defect."""
    assert set(record) <= {"messages", "tools", "parallel_tool_calls"}, f"unknown top-level keys {set(record)}"
    messages = record["messages"]
    assert isinstance(messages, list) and messages, "messages must be a non-empty list"
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        assert role in ("system", "user", "assistant", "tool"), f"message {i}: bad role {role!r}"
        if role in ("system", "user"):
            assert set(m) <= {"role", "content", "name"} and isinstance(m.get("content"), str), f"message {i}"
        elif role == "tool":
            assert set(m) == {"role", "tool_call_id", "content"}, f"message {i}: tool keys {set(m)}"
            assert m["tool_call_id"] in open_calls, f"message {i}: tool_call_id answers no call"
            assert isinstance(m["content"], str)
        else:
            assert set(m) <= {"role", "content", "tool_calls", "weight", "name"}, f"message {i}: keys {set(m)}"
            assert "content" in m or "tool_calls" in m, f"message {i}: assistant needs content or tool_calls"
            assert m.get("content") is None or isinstance(m["content"], str)
            assert m.get("weight", 1) in (0, 1)
            for call in m.get("tool_calls", []):
                assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                assert set(call["function"]) == {"name", "arguments"}
                assert isinstance(call["function"]["arguments"], str), "arguments must be a JSON string"
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                open_calls.add(call["id"])
    assert messages[-1]["role"] == "assistant" and "tool_calls" not in messages[-1], "must end with an answer"
    for tool in record.get("tools", []):
        assert tool["type"] == "function" and isinstance(tool["function"]["name"], str)
        assert tool["function"].get("parameters", {}).get("type", "object") == "object"


def test_openai_validator_rejects_what_openai_rejects():
    good = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
    validate_openai_record(good)
    with pytest.raises(AssertionError, match="must end with an answer"):
        validate_openai_record({"messages": good["messages"][:1]})
    with pytest.raises(AssertionError, match="answers no call"):
        validate_openai_record({"messages": [{"role": "tool", "tool_call_id": "x", "content": "r"}]})
    dict_arguments = {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]}
    with pytest.raises(AssertionError, match="JSON string"):
        validate_openai_record({"messages": [{"role": "user", "content": "q"}, dict_arguments]})


def test_openai_records_are_the_same_rows_in_the_openai_shape(trials):
    sft, _ = ex.sft_table(ex.select_sft_trials(trials, "all").trials, {})
    records = ex.openai_records(sft)
    assert len(records) == sft.num_rows
    for record in records:
        validate_openai_record(record)
    first = records[0]
    assert first["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"query": "status"}'
    assert first["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"results": [DOC]})}
    assert first["tools"] == [SEARCH_TOOL]
    lines = ex.jsonl_text(records).splitlines()
    assert [json.loads(line) for line in lines] == records


# ---------------------------------------------------------------------------------------- RL


def questions_table() -> pa.Table:
    rows = [
        {"id": "q2", "choice_type": "multi", "question_type": "multiple_choice", "event": "Which colours?",
         "options": ["Red", "Green", "Blue"], "answer": "A, C", "end_time": TAU},
        {"id": "q1", "choice_type": "single", "question_type": "yes_no", "event": "Will it rain?",
         "options": ["Yes", "No"], "answer": "A", "end_time": dt.date(2026, 3, 20)},
    ]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA)


def render_default(question):
    q = PromptQuestion(question["id"], question["question_type"], question["choice_type"], question["event"],
                       tuple(question["options"]), question["end_time"])  # fmt: skip
    return render_user_prompt(q, DEFAULT_TEMPLATES, max_steps=6, max_search_calls=4)


def test_rl_rows_follow_the_verl_schema_with_evaluation_prompts():
    renderer = ex.user_prompt_renderer(DEFAULT_TEMPLATES, max_steps=6, max_search_calls=4, protocols=ProtocolSwitches())
    rows = ex.rl_rows(questions_table(), KAPPA, "train", 2, renderer)
    table = ex.rl_table(rows)
    assert table.schema == RL_SCHEMA
    first, second = table.to_pylist()
    assert first["q_id"] == "q1" and second["q_id"] == "q2"
    assert first["data_source"] == "oracleproto/cutoff-2025-09-29"
    assert first["ability"] == "forecasting"
    assert first["reward_model"] == {"style": "rule", "ground_truth": "A"}
    assert first["prompt"] == [{"role": "user", "content": render_default(questions_table().to_pylist()[1])}]
    assert first["extra_info"] == {
        "split": "train", "index": 0, "q_id": "q1", "question_type": "yes_no", "choice_type": "single",
        "options": ["Yes", "No"], "end_time": "2026-03-20", "prediction_cutoff": "2026-03-18", "cutoff": "2025-09-29",
        "tools_kwargs": {"web_search": {"create_kwargs": {"end_date": "2026-03-18"}}},
    }  # fmt: skip
    assert "web_search" in first["prompt"][0]["content"]
    assert [json.loads(tool) for tool in first["tools"]] == [WEB_SEARCH_TOOL]  # the prompt's tool ships with it
    assert second["extra_info"]["index"] == 1
    assert (second["answer"], second["options"], second["cutoff"]) == ("A, C", ["Red", "Green", "Blue"], KAPPA)


def test_closed_book_rl_rows_neither_mention_nor_ship_a_tool(tmp_path, trials):
    pq.write_table(trials, tmp_path / "trials.parquet")
    splits = write_splits(tmp_path, {"cutoff-2025-09-29": questions_table()})
    ex.run_export(tmp_path / "trials.parquet", splits, tmp_path / "out", ex.ExportSettings(rl_tools=False))
    rows = pq.read_table(tmp_path / "out" / "rl" / "train.parquet").to_pylist()
    assert rows and all(row["tools"] == [] and row["extra_info"]["tools_kwargs"] is None for row in rows)
    assert not any("web_search" in m["content"] for row in rows for m in row["prompt"])


def test_a_rendered_prompt_must_be_role_and_content():
    with pytest.raises(ex.InputError, match="question q2: rendered prompt message 0 is not {role, content}"):
        ex.rl_rows(questions_table(), KAPPA, "train", 1, lambda q: [{"role": "user"}])


# ---------------------------------------------------------------------------------------- files


def write_splits(root: Path, cutoffs: dict[str, pa.Table]) -> Path:
    splits = root / "splits"
    for name, table in cutoffs.items():
        for split, part in (("train", table), ("test", table.slice(0, 0))):
            write_parquet(part, splits / name / f"{split}.parquet", QUESTION_SCHEMA, sort_by=("id",), metadata={"delta_days": 1})
    return splits


def test_run_export_writes_all_files_deterministically(tmp_path, trials):
    pq.write_table(trials, tmp_path / "trials.parquet")
    splits = write_splits(tmp_path, {"cutoff-2025-09-29": questions_table(), "cutoff-2026-01-27": questions_table().slice(0, 1)})
    settings = ex.ExportSettings(sft_mode="all")
    summary = ex.run_export(tmp_path / "trials.parquet", splits, tmp_path / "a", settings)
    ex.run_export(tmp_path / "trials.parquet", splits, tmp_path / "b", settings)
    names = sorted(str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert names == ["rl/test.parquet", "rl/train.parquet", "sft/test.parquet", "sft/test_openai.jsonl",
                     "sft/train.parquet", "sft/train_openai.jsonl", "summary.json"]  # fmt: skip
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert (summary["sft"]["train_rows"], summary["sft"]["test_rows"]) == (7, 0)
    assert summary["sft"]["rows_by_model"] == {"m1": 4, "m2": 3}
    assert (summary["rl"]["train_rows"], summary["rl"]["test_rows"]) == (3, 0)
    assert summary["rl"]["rows_by_cutoff"] == {"train": {"2025-09-29": 2, "2026-01-27": 1}, "test": {}}
    assert len((tmp_path / "a" / "sft" / "train_openai.jsonl").read_text().splitlines()) == 7


def test_sft_rows_land_in_the_split_of_their_question(tmp_path, trials):
    pq.write_table(trials, tmp_path / "trials.parquet")
    splits = tmp_path / "splits"
    table = questions_table()
    for split, part in (("train", table.filter(pa.compute.equal(table["id"], "q1"))), ("test", table.filter(pa.compute.equal(table["id"], "q2")))):
        write_parquet(part, splits / "cutoff-2025-09-29" / f"{split}.parquet", QUESTION_SCHEMA, metadata={"delta_days": 1})
    ex.run_export(tmp_path / "trials.parquet", splits, tmp_path / "out", ex.ExportSettings(sft_mode="all"))
    train = pq.read_table(tmp_path / "out" / "sft" / "train.parquet")
    test = pq.read_table(tmp_path / "out" / "sft" / "test.parquet")
    assert set(train["q_id"].to_pylist()) == {"q1"} and set(test["q_id"].to_pylist()) == {"q2"}
    assert set(train["split"].to_pylist()) == {"train"} and set(test["split"].to_pylist()) == {"test"}


def test_export_settings_read_the_evaluation_budgets_as_the_evaluator_does():
    defaults = ex.export_settings(Params())
    assert (defaults.sft_mode, defaults.max_steps, defaults.max_search_calls, defaults.protocols) == ("correct", 6, 4, ProtocolSwitches())
    evaluate = {"max_steps": 8, "max_search_calls": 2, "search": "archive", "archive": "a.jsonl", "protocols": {"reflection": False}}
    settings = ex.export_settings(parse_params({"export": {"sft_mode": "all", "sft_models": ["m1"]}, "evaluate": evaluate}))
    assert (settings.sft_mode, settings.sft_models, settings.max_steps, settings.max_search_calls) == ("all", ("m1",), 8, 2)
    assert settings.protocols == ProtocolSwitches(reflection=False)
    no_search = ex.export_settings(parse_params({"evaluate": {**evaluate, "search": "none"}}))
    assert no_search.max_search_calls == 0  # the model is told search is disabled


# ---------------------------------------------------------------------------------------- loading


LOAD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import datasets
    out = {}
    for name in ("sft", "rl"):
        ds = datasets.load_dataset("parquet", data_files=sys.argv[1] + f"/{name}/train.parquet", split="train")
        out[name] = ds.to_list()
    print(json.dumps(out, default=str))
    """
)


def test_exports_load_with_datasets_in_trl_shape(tmp_path, trials):
    pq.write_table(trials, tmp_path / "trials.parquet")
    splits = write_splits(tmp_path, {"cutoff-2025-09-29": questions_table()})
    ex.run_export(tmp_path / "trials.parquet", splits, tmp_path / "out", ex.ExportSettings())
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, str(tmp_path / "out")], capture_output=True, text=True, env=env, check=True
    )
    loaded = json.loads(result.stdout)
    sft = loaded["sft"]
    assert len(sft) == 2
    messages = sft[0]["messages"]
    # TRL conversational: role/content messages; tool-call arguments come back as a dict
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"query": "status"}
    assert messages[2]["role"] == "tool" and messages[2]["name"] == "web_search"
    assert sft[0]["tools"] == [SEARCH_TOOL]
    rl = loaded["rl"]
    assert [row["q_id"] for row in rl] == ["q1", "q2"]
    assert rl[0]["prompt"][0]["role"] == "user"
    assert rl[0]["reward_model"] == {"style": "rule", "ground_truth": "A"}
    assert rl[0]["tools"] == [WEB_SEARCH_TOOL] and rl[0]["extra_info"]["tools_kwargs"]["web_search"]["create_kwargs"]["end_date"]


# ---------------------------------------------------------------------------------------- against the evaluator


def test_on_a_real_evaluation_rl_prompts_equal_the_evaluation_prompts_and_rewards_equal_exam_scores(tmp_path):
    """Run the evaluator (loopback model, in-process search) on a train split, then export:
    every RL prompt is byte-identical to the first message the model saw, and on every
    trial the verl reward of the raw output equals the scorer's exam score of the trial."""
    from oracleproto.exam import exam_scores
    from oracleproto.export.rewards import compute_score
    from oracleproto.harness.evaluate import evaluate
    from oracleproto.harness.plan import eval_settings
    from oracleproto.harness.questions import EvalJob, QuestionSet
    from oracleproto.harness.settings import ModelSpec
    from tests.harness.fakes import FakeSearch
    from tests.servers.openai_server import OpenAIServer, SearchThenAnswer

    evaluate_params = {"search": "archive", "archive": "unused", "detector": "off", "trials": 2, "max_steps": 4}
    params = parse_params({"evaluate": evaluate_params, "admit": {"delta_days": 1}, "export": {"sft_mode": "all"}})
    splits = write_splits(tmp_path, {"cutoff-2025-09-29": questions_table()})
    train = splits / "cutoff-2025-09-29" / "train.parquet"
    job = EvalJob(ModelSpec(label="vendor/model", slug="vendor/model", cutoff=KAPPA), QuestionSet.load(train))
    with OpenAIServer(SearchThenAnswer(searches=1)) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-0123456789abcdef"}
        evaluate([job], eval_settings(params), tmp_path / "run", env=env, search_factory=lambda c, s, e: FakeSearch())
    trials = pq.read_table(tmp_path / "run" / "trials.parquet")
    ex.run_export(tmp_path / "run" / "trials.parquet", splits, tmp_path / "out", ex.export_settings(params))

    first_messages = {
        row["q_id"]: json.loads(row["messages"])[0] for row in trials.select(["q_id", "messages"]).to_pylist()
    }
    rl = pq.read_table(tmp_path / "out" / "rl" / "train.parquet").to_pylist()
    assert len(rl) == 2
    for row in rl:
        assert row["prompt"] == [first_messages[row["q_id"]]]

    rows = trials.to_pylist()
    rewards = [
        compute_score("oracleproto/cutoff-2025-09-29", r["raw_output"], r["answer"],
                      {"question_type": r["question_type"], "options": r["options"], "choice_type": r["choice_type"]})
        for r in rows
    ]  # fmt: skip
    assert rewards == exam_scores(trials["pred"], trials["answer"]).tolist()

    sft = pq.read_table(tmp_path / "out" / "sft" / "train.parquet")
    assert sft.num_rows == 4 and set(sft["split"].to_pylist()) == {"train"}
    for record in map(json.loads, (tmp_path / "out" / "sft" / "train_openai.jsonl").read_text().splitlines()):
        validate_openai_record(record)
