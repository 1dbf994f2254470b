"""``forecastbench:DIR``: each resolved (question, resolution date) pair is one yes/no question;
unresolved market rows and combination questions are rows with a reason; the licence travels."""

import json

import pytest

from oracleproto.corpus.build import RAW_SOURCE, build
from oracleproto.corpus.sources.forecastbench import stable_id
from oracleproto.errors import InputError
from oracleproto.io import read_parquet
from tests.corpus.sources.helpers import read_raw, reasons

DATASET_Q = {
    "id": "abc123", "source": "acled",
    "question": "Will X rise between {forecast_due_date} and {resolution_date}?",
    "background": "Series since {forecast_due_date}; see {n(1+o(1))}.", "resolution_criteria": "Resolves on {resolution_date}.",
    "freeze_datetime_value": "12.0", "resolution_dates": ["2025-02-01", "2025-03-01"],
}
MARKET_Q = {
    "id": "mkt1", "source": "manifold", "question": "Will Y happen?", "background": "", "resolution_criteria": "Per the market.",
    "freeze_datetime_value": "0.25", "resolution_dates": "N/A",
}


def _resolution(qid, source, date, resolved_to, resolved=True, direction=None):
    return {"id": qid, "source": source, "direction": direction, "resolution_date": date, "resolved_to": resolved_to, "resolved": resolved}


@pytest.fixture
def sets_dir(tmp_path):
    (tmp_path / "question_sets").mkdir()
    (tmp_path / "resolution_sets").mkdir()
    questions = {"forecast_due_date": "2025-01-05", "question_set": "2025-01-05-llm.json", "questions": [DATASET_Q, MARKET_Q]}
    (tmp_path / "question_sets" / "2025-01-05-llm.json").write_text(json.dumps(questions))
    resolutions = {"forecast_due_date": "2025-01-05", "question_set": "2025-01-05-llm.json", "resolutions": [
        _resolution("abc123", "acled", "2025-02-01", 1.0),
        _resolution("abc123", "acled", "2025-03-01", 0.0),
        _resolution("mkt1", "manifold", "2025-04-01", 0.0),
        _resolution("mkt1", "manifold", "2025-09-01", 0.42, resolved=False),
        _resolution(["abc123", "mkt1"], "acled", "2025-02-01", 1.0, direction=[1, -1]),
        _resolution("mkt1", "manifold", "2025-05-01", 0.5),
        _resolution("gone", "manifold", "2025-05-01", 1.0),
        "not an entry",
    ]}
    (tmp_path / "resolution_sets" / "2025-01-05_resolution_set.json").write_text(json.dumps(resolutions))
    return tmp_path


def test_resolved_pairs_become_yes_no_questions(sets_dir):
    table, data = read_raw(f"forecastbench:{sets_dir}")
    rows = table.to_pylist()
    first, second, market = rows[:3]
    assert first["event"] == "Will X rise between 2025-01-05 and 2025-02-01?"
    assert second["event"] == "Will X rise between 2025-01-05 and 2025-03-01?"
    assert (first["options"], first["answer"], second["answer"], market["answer"]) == (["Yes", "No"], "A", "B", "B")
    assert (first["question_type"], first["choice_type"], first["end_time"]) == ("yes_no", "single", "2025-02-01")
    assert first["background"] == "Series since 2025-01-05; see {n(1+o(1))}."  # only the two placeholders
    assert first["resolution_criteria"] == "Resolves on 2025-02-01."
    assert (first["crowd_probability"], market["crowd_probability"]) == (None, 0.25)  # 12.0 is a series value
    assert first["id"] == stable_id("acled", "abc123", "2025-02-01") != second["id"]
    assert len(first["id"]) == 24 and first["original"]["resolved_to"] == 1.0
    assert data.metadata["counts"] == {
        "resolution_rows": 8, "resolved_yes_no": 3, "distinct_resolved_yes_no": 3,
        "unresolved": 1, "combination": 1, "other_problems": 3,
    }


def test_other_entries_carry_their_reason(sets_dir):
    table, _ = read_raw(f"forecastbench:{sets_dir}")
    assert reasons(table)[3:] == [
        "not resolved: resolved_to 0.42 is the market's probability, not an outcome",
        "combination question of 2 questions (direction [1, -1]): not a single yes/no question",
        "resolved_to 0.5 is not an outcome of 0 or 1",
        "question manifold/gone is not in its question set",
        "a resolution entry of 2025-01-05_resolution_set.json is not an object",
    ]
    assert table.column("answer").to_pylist()[3:] == [None] * 5


def test_a_resolution_set_without_its_question_set(sets_dir):
    (sets_dir / "question_sets" / "2025-01-05-llm.json").unlink()
    with pytest.raises(InputError, match="resolves 2025-01-05-llm.json, which is not in"):
        read_raw(f"forecastbench:{sets_dir}")


def test_unreadable_set_file(sets_dir):
    (sets_dir / "resolution_sets" / "2025-01-05_resolution_set.json").write_text("{broken")
    with pytest.raises(InputError, match="2025-01-05_resolution_set.json is not readable JSON"):
        read_raw(f"forecastbench:{sets_dir}")


def test_the_real_sets(forecastbench_dir, tmp_path, project_root):
    from oracleproto.config import load_params

    result = build(load_params(project_root / "params.yaml").overridden({"ingest": {"source": f"forecastbench:{forecastbench_dir}"}}), tmp_path)
    source = json.loads((tmp_path / RAW_SOURCE).read_text())
    counts = source["metadata"]["counts"]
    # 1,089 + 1,018 resolved pairs in the two sets; 6 repeat in both (same question and date).
    assert counts == {
        "resolution_rows": 2388, "resolved_yes_no": 2107, "distinct_resolved_yes_no": 2101,
        "unresolved": 281, "combination": 0, "other_problems": 0,
    }
    assert source["metadata"]["license"] == "cc-by-sa-4.0" and "ForecastBench" in source["metadata"]["attribution"]
    report = result["audit"]
    assert (report["rows_out"], report["duplicates_collapsed"], report["by_rule"]) == (2101, 6, {"unparseable": 281})
    questions = read_parquet(tmp_path / "questions.parquet")
    assert set(questions.column("question_type").to_pylist()) == {"yes_no"}
    assert not any("{resolution_date}" in e or "{forecast_due_date}" in e for e in questions.column("event").to_pylist())


def test_lone_surrogates_and_non_text_sources_are_rows_with_reasons(tmp_path):
    """JSON may escape a lone surrogate ("\\ud800"), which UTF-8 cannot hold; a source may be
    an object. Each is its row's problem, never the read's."""
    (tmp_path / "question_sets").mkdir()
    (tmp_path / "resolution_sets").mkdir()
    bad_text = {**MARKET_Q, "id": "sur", "question": "Will \ud800 happen?"}
    questions = {"forecast_due_date": "2025-01-05", "question_set": "q.json", "questions": [MARKET_Q, bad_text]}
    (tmp_path / "question_sets" / "q.json").write_text(json.dumps(questions))
    resolutions = {"forecast_due_date": "2025-01-05", "question_set": "q.json", "resolutions": [
        _resolution("mkt1", "manifold", "2025-04-01", 1.0),
        _resolution("sur", "manifold", "2025-04-01", 1.0),
        _resolution("mkt1", "manifold", "2025-04-\udc00", 1.0),
        _resolution("gone\ud800", "manifold", "2025-04-01", 1.0),
        _resolution("mkt1", {"source": "manifold"}, "2025-04-01", 1.0),
    ]}
    (tmp_path / "resolution_sets" / "r.json").write_text(json.dumps(resolutions))
    table, _ = read_raw(f"forecastbench:{tmp_path}")
    not_unicode = "question text, background, resolution criteria or resolution date is not valid Unicode text"
    assert reasons(table) == [
        None,
        not_unicode,
        not_unicode,
        "question manifold/gone\\ud800 is not in its question set",
        "question {'source': 'manifold'}/mkt1 is not in its question set",
    ]
    assert len(set(table.column("id").to_pylist())) == 5
