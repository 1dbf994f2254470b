"""Invariants of the embedded sample corpus (data/sample/futurex_sample.jsonl) and its search archive."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from oracleproto.letters import split_answer
from oracleproto.sources.futurex import parse_futurex

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "sample"
SAMPLE_PATH = SAMPLE_DIR / "futurex_sample.jsonl"
FUTUREX_KEYS = ["id", "prompt", "ground_truth", "end_time", "level", "title", "source_url", "resolution_note"]
POST_RESOLUTION_WORDING = re.compile(
    r"\b(the result was|was won by|turned out|has been announced|were announced|has won|have won)\b", re.I
)


def _load_module(name: str):
    spec = importlib.util.spec_from_file_location(name, SAMPLE_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_PATH.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def parsed(rows) -> list[dict]:
    """The rows as the ingest stage reads them (FutureX prompt → event, options, answer)."""
    table = parse_futurex(pa.Table.from_pylist(rows))
    return table.select(["id", "event", "options", "answer", "end_time", "parse_error"]).to_pylist()


def _strata(options: list[str], answer: str) -> tuple[str, str]:
    if options == ["Yes", "No"]:
        question_type = "yes_no"
    elif len(options) == 2:
        question_type = "binary_named"
    else:
        question_type = "multiple_choice"
    return question_type, "single" if len(split_answer(answer)) == 1 else "multi"


def test_rows_have_futurex_keys_in_order(rows):
    assert len(rows) >= 60
    for row in rows:
        assert list(row) == FUTUREX_KEYS, row["id"]


def test_ids_are_unique_24_hex(rows):
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{24}", qid) for qid in ids)


def test_rows_are_sorted_by_end_time_then_id(rows):
    keys = [(row["end_time"], row["id"]) for row in rows]
    assert keys == sorted(keys)


def test_resolution_dates_span_2023_to_2026(rows):
    years = Counter(dt.date.fromisoformat(row["end_time"]).year for row in rows)
    assert set(years) <= {2023, 2024, 2025, 2026}
    # several model cutoffs (2023-10 … 2026-03) split the sample, so every year must be populated
    assert all(years[year] >= 5 for year in (2023, 2024, 2025, 2026)), years


def test_every_row_has_a_source_and_a_note(rows):
    for row in rows:
        assert row["source_url"].startswith("https://"), row["id"]
        assert row["resolution_note"].strip(), row["id"]


def test_prompts_parse_back_to_the_title(parsed, rows):
    for row, back in zip(rows, parsed):
        assert back["parse_error"] is None, (row["id"], back["parse_error"])
        assert back["event"] == row["title"]
        assert back["end_time"] == row["end_time"]


def test_strata_counts(parsed):
    counts = Counter(_strata(row["options"], row["answer"]) for row in parsed)
    assert counts[("yes_no", "single")] >= 5
    assert counts[("binary_named", "single")] >= 2
    assert counts[("multiple_choice", "single")] >= 5
    assert counts[("multiple_choice", "multi")] >= 5
    assert sum(counts.values()) == len(parsed)


def test_levels_follow_question_type(parsed, rows):
    for row, back in zip(rows, parsed):
        question_type, _ = _strata(back["options"], back["answer"])
        assert row["level"] == (2 if question_type == "multiple_choice" else 1), row["id"]


def test_options_are_well_formed(parsed):
    for row in parsed:
        options = row["options"]
        folded = [label.strip().casefold() for label in options]
        assert len(set(folded)) == len(folded), row["id"]
        assert len(options) == 2 or len(options) >= 3
        assert not any("winner" in label for label in folded), row["id"]
        assert all(0 <= ord(letter) - ord("A") < len(options) for letter in split_answer(row["answer"]))


def test_events_are_phrased_before_resolution(rows):
    for row in rows:
        assert not POST_RESOLUTION_WORDING.search(row["title"]), row["title"]
        assert re.match(r"(Will|Which|Who|What|At which)\b", row["title"]), row["title"]


def test_committed_jsonl_is_what_the_generator_writes(rows):
    make_sample = _load_module("make_sample")
    assert make_sample.sample_rows() == rows
    assert len({item["slug"] for item in make_sample.QUESTIONS}) == len(make_sample.QUESTIONS)
