import datetime as dt
import hashlib

import pyarrow.parquet as pq
import pytest

from oracleproto.errors import InputError
from oracleproto.harness.runstore import RunStore, export_trials, store_filename
from oracleproto.schema import CUTOFF_SKIP, TRIAL_SCHEMA


def row(q_id="q1", trial=1, model="m", error=None, pred="A", cost=0.5):
    return {
        "model": model, "q_id": q_id, "question_type": "multiple_choice", "choice_type": "single",
        "options": ["x", "y"], "answer": "A", "trial": trial, "pred": pred, "error": error, "cost_usd": cost,
        "cutoff": dt.date(2024, 6, 30), "delta_days": 1, "prediction_cutoff": dt.date(2026, 3, 11),
        "end_time": dt.date(2026, 3, 12), "raw_output": "\\boxed{A}", "messages": "[]", "tools": "[]",
        "search_calls": "[]", "react_steps": 1, "tool_calls_count": 0, "prompt_tokens": 3, "completion_tokens": 4,
        "reasoning_tokens": 0, "latency_ms": 12, "finish_reason": "stop", "response_id": "r", "system_fingerprint": None,
        "belief": None,
        "nudges_used": 0,
        "final_answer_retry_used": False,
        "invalid_usage": [],
        "search_errors": 0,
        "detector_errors": 0,
    }


def test_accounted_follows_eq_36(tmp_path):
    with RunStore(tmp_path / "m.db", "m") as store:
        store.put(row("q1", 1))
        store.put(row("q1", 2, error="rate_limit", pred=None))
        store.put(row("q2", 1, error=CUTOFF_SKIP, pred=None))
        assert store.accounted() == {("q1", 1), ("q2", 1)}
        # the error row is redone and overwritten
        store.put(row("q1", 2))
        assert store.accounted() == {("q1", 1), ("q1", 2), ("q2", 1)}
        assert store.count() == 3


def test_rows_round_trip(tmp_path):
    with RunStore(tmp_path / "m.db", "m") as store:
        store.put(row(cost=0.1 + 0.2))
        (back,) = store.rows()
    assert back == row(cost=0.1 + 0.2)


def test_row_must_be_complete_and_belong_to_the_store(tmp_path):
    with RunStore(tmp_path / "m.db", "m") as store:
        bad = row()
        del bad["messages"]
        with pytest.raises(InputError, match="messages"):
            store.put(bad)
        with pytest.raises(InputError, match="model 'other'"):
            store.put(row(model="other"))


def test_store_remembers_its_label_and_fingerprint(tmp_path):
    with RunStore(tmp_path / "db" / "m.db", "m") as store:
        store.bind_fingerprint({"budgets": {"max_steps": 6}, "seed": 0})
        store.bind_fingerprint({"seed": 0, "budgets": {"max_steps": 6}})  # same, any key order
    with RunStore(tmp_path / "db" / "m.db", "m") as store:
        with pytest.raises(InputError, match=r"budgets\.max_steps"):
            store.bind_fingerprint({"budgets": {"max_steps": 8}, "seed": 0})
    with pytest.raises(InputError, match="holds model 'm'"):
        RunStore(tmp_path / "db" / "m.db", "other")


def test_durable_without_close(tmp_path):
    store = RunStore(tmp_path / "m.db", "m")
    store.put(row())
    # a second connection (as after a crash) sees the committed row
    with RunStore(tmp_path / "m.db", "m") as again:
        assert again.accounted() == {("q1", 1)}
    store.close()


def test_export_is_canonical_sorted_and_byte_stable(tmp_path):
    rows = [row("q2", 1), row("q1", 2, model="b"), row("q1", 1, model="b"), row("q1", 3)]
    a = export_trials(rows, tmp_path / "a.parquet")
    export_trials(list(reversed(rows)), tmp_path / "b.parquet")
    assert hashlib.sha256((tmp_path / "a.parquet").read_bytes()).digest() == hashlib.sha256((tmp_path / "b.parquet").read_bytes()).digest()
    table = pq.read_table(tmp_path / "a.parquet")
    assert table.schema.remove_metadata().equals(TRIAL_SCHEMA.remove_metadata())
    assert list(zip(table["model"].to_pylist(), table["q_id"].to_pylist(), table["trial"].to_pylist())) == [
        ("b", "q1", 1), ("b", "q1", 2), ("m", "q1", 3), ("m", "q2", 1)]
    assert a.num_rows == 4


def test_store_filename_is_safe_and_unique():
    assert store_filename("openai/gpt-4o").startswith("openai__gpt-4o.")
    assert store_filename("a/b") != store_filename("a__b")
    assert store_filename("baseline:uniform@cutoff-2024-04-30").startswith("baseline_uniform_cutoff-2024-04-30.")


def test_a_damaged_store_or_cache_is_one_error_naming_the_file(tmp_path):
    from oracleproto.errors import InputError
    from oracleproto.harness.replay import CallCache

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a SQLite database, only text that looks like one\n" * 200)
    with pytest.raises(InputError, match=r"garbage\.db is not a usable run store"):
        RunStore(garbage, "m")
    with pytest.raises(InputError, match=r"garbage\.db is not a usable call cache"):
        CallCache(garbage, "replay")
