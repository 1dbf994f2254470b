"""The shipped labelled set: what its generator writes, built from the sample archive and
questions, labelled by its rule, with easy and hard cases of every kind the README lists."""

import datetime as dt
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SET_DIR = ROOT / "data" / "leak_audit"
SET_PATH = SET_DIR / "audit_set.jsonl"


@pytest.fixture(scope="module")
def builder():
    spec = importlib.util.spec_from_file_location("make_audit_set", SET_DIR / "make_audit_set.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pairs():
    return [json.loads(line) for line in SET_PATH.read_text(encoding="utf-8").splitlines()]


def test_the_committed_set_is_what_the_generator_writes(builder, pairs):
    assert builder.Builder().pairs() == pairs


def test_size_balance_and_composition(builder, pairs):
    assert len(pairs) >= 300
    labels = Counter(p["label"] for p in pairs)
    assert min(labels.values()) / len(pairs) > 0.4
    kinds = Counter(p["kind"] for p in pairs)
    assert set(kinds) == set(builder.KINDS)
    difficulty = Counter((p["difficulty"], p["label"]) for p in pairs)
    assert all(difficulty[d, label] >= 25 for d in ("easy", "hard") for label in ("leak", "clean"))


def test_every_label_follows_the_rule(pairs):
    for p in pairs:
        assert p["label"] == ("leak" if p["latest_event"] > p["chi"] else "clean"), p["pair_id"]
        dt.date.fromisoformat(p["chi"]), dt.date.fromisoformat(p["latest_event"])


def test_archive_pairs_are_the_archive_documents(pairs):
    archive = {json.loads(line)["url"]: json.loads(line) for line in (ROOT / "data" / "sample" / "archive.jsonl").read_text(encoding="utf-8").splitlines()}
    from_archive = [p for p in pairs if p["kind"].startswith(("archive_", "historical_"))]
    assert len(from_archive) == 299 + 122
    for p in from_archive:
        doc = archive[p["url"]]
        assert (doc["title"], doc["published_date"], doc["content"]) == (p["title"], p["published_date"], p["content"])


def test_every_pair_is_about_a_sample_question_with_a_public_source(pairs):
    sample = {json.loads(line)["id"]: json.loads(line) for line in (ROOT / "data" / "sample" / "futurex_sample.jsonl").read_text(encoding="utf-8").splitlines()}
    for p in pairs:
        assert sample[p["q_id"]]["source_url"] == p["source_url"] and p["source_url"].startswith("https://")


CALENDAR_DATE = re.compile(r"\b(\d{1,2}) (January|February|March|April|May|June|July|August|September|October|November|December) (\d{4})")


def test_hard_no_date_leaks_name_no_date_after_chi(pairs):
    """Their leak is an outcome or a schedule with no date: every calendar date they name is before χ."""
    for p in pairs:
        if p["kind"] in ("outcome_in_title_only", "update_without_date", "scheduled_relative_date"):
            named = [dt.datetime.strptime(" ".join(m), "%d %B %Y").date() for m in CALENDAR_DATE.findall(p["title"] + " " + p["content"])]
            assert p["published_date"] <= p["chi"] and all(day.isoformat() <= p["chi"] for day in named), p["pair_id"]


def test_undating_a_note_removes_its_date_or_gives_up(builder):
    assert builder.undated_note("On 26 July 2023 the FOMC raised the target range.") == "The FOMC raised the target range."
    assert builder.undated_note("The PP won 137 seats on 23 July 2023, the most of any party.") == "The PP won 137 seats, the most of any party."
    assert builder.undated_note("Karikó (medicine, 2 Oct) and Goldin (economics, 9 Oct 2023) were laureates.") is None
