"""Done-when of issue 15, part 3: the cutoff probe on loopback models that "know" outcomes up
to a set date (right for τ up to it, at chance after).

240 synthetic but plausible questions resolve from January 2024 to December 2025, ten a
month (rate decisions, derbies, inflation prints). Disclosed κ = 2024-12 for both models;
one knows up to 2025-06 (it must be flagged, with an effective cutoff within a month of
2025-06), the other up to 2024-12 (nothing flagged).
"""

import datetime as dt
import hashlib
import json
import random
import re

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.errors import InputError
from oracleproto.io import write_parquet
from oracleproto.leakaudit.probe import (
    Outcome,
    change_point,
    exact_match_chance,
    load_probe_report,
    outcomes_from_trials,
    probe_analysis,
    probed_cutoff,
    run_probe,
)
from oracleproto.publish.hub import probe_table
from oracleproto.schema import QUESTION_SCHEMA
from tests.servers.openai_server import OpenAIServer, content_reply

runner = CliRunner()
EVENT = re.compile(r'Event to forecast: "(.*?)" \(it resolves around (\d{4}-\d{2}-\d{2})\)')
KNOWS = {"lab/knows-2025-06": dt.date(2025, 6, 30), "lab/knows-2024-12": dt.date(2024, 12, 31)}
COUNTRIES = ("Norway", "Chile", "Poland", "Kenya", "Canada", "Thailand", "Peru", "Ghana", "Sweden", "Mexico")
CPI_BANDS = ["Below 2.0%", "2.0% to 2.9%", "3.0% to 3.9%", "4.0% or above"]


def synthetic_questions():
    """Ten questions a month over 2024-2025, three kinds, seeded answers."""
    rng = random.Random(15)
    rows = []
    for month in range(24):
        year, mon = 2024 + month // 12, month % 12 + 1
        for i in range(10):
            tau = dt.date(year, mon, 3 + 2 * i)
            country = COUNTRIES[(month + i) % len(COUNTRIES)]
            if i % 3 == 0:
                row = ("yes_no", f"Will the central bank of {country} lower its policy rate at its meeting on {tau:%d %B %Y}?", ["Yes", "No"])
            elif i % 3 == 1:
                row = ("binary_named", f"Which club will win the {country} cup final on {tau:%d %B %Y}?", [f"{country} City", f"{country} United"])
            else:
                row = ("multiple_choice", f"What will {country}'s annual CPI inflation for {tau:%B %Y} be, as first published?", CPI_BANDS)
            question_type, event, options = row
            answer = "AB"[rng.randrange(2)] if len(options) == 2 else "ABCD"[rng.randrange(4)]
            rows.append({"id": f"q{month:02d}{i}", "question_type": question_type, "choice_type": "single", "event": event,
                         "options": options, "answer": answer, "end_time": tau})  # fmt: skip
    return rows


QUESTIONS = synthetic_questions()
BY_EVENT = {row["event"]: row for row in QUESTIONS}


def boxed(row, index):
    if row["question_type"] == "yes_no":
        return "\\boxed{" + ("Yes" if index == 0 else "No") + "}"
    if row["question_type"] == "binary_named":
        return "\\boxed{" + row["options"][index] + "}"
    return "\\boxed{" + "ABCD"[index] + "}"


def knowing_brain(body):
    """Right when τ is within the model's knowledge, else a fixed pseudo-random option (chance)."""
    assert not body.get("tools"), "the probe is closed-book"
    event, tau = EVENT.search(body["messages"][0]["content"]).groups()
    row = BY_EVENT[event]
    if dt.date.fromisoformat(tau) <= KNOWS[body["model"]]:
        index = ord(row["answer"]) - ord("A")
    else:
        index = int(hashlib.sha256(f"{body['model']}|{event}".encode()).hexdigest(), 16) % len(row["options"])
    return content_reply(f"From memory: {boxed(row, index)}", body)


@pytest.fixture(scope="module")
def questions_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "questions.parquet"
    write_parquet(pa.Table.from_pylist(QUESTIONS, schema=QUESTION_SCHEMA), path, QUESTION_SCHEMA, sort_by=("id",))
    return path


@pytest.fixture(scope="module")
def probes(tmp_path_factory, questions_path):
    out = tmp_path_factory.mktemp("probes")
    with OpenAIServer(knowing_brain) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-probe-test-0123456789abcdef"}
        reports = {model: run_probe(model, questions_path, "2024-12", out / model.split("/")[1], env=env) for model in KNOWS}
        requests = server.requests
    return out, reports, requests


def test_a_model_knowing_past_its_disclosed_cutoff_is_flagged(probes):
    _, reports, _ = probes
    report = reports["lab/knows-2025-06"]
    assert report["flagged"] is True and report["questions"] == 240 and report["call_errors"] == 0
    effective = dt.date.fromisoformat(report["effective_cutoff"])
    assert abs((effective - dt.date(2025, 6, 30)).days) <= 31
    assert report["known_after_disclosed"]["above_chance"] and report["known_after_disclosed"]["n"] == 60
    months = {row["month"]: row for row in report["months"]}
    assert months["2025-03"]["above_chance"] and months["2025-03"]["rate"] == 1.0 and months["2025-03"]["offset"] == 3
    assert not months["2025-09"]["above_chance"] and months["2025-09"]["chance"] == pytest.approx((0.5 * 7 + 0.25 * 3) / 10)


def test_a_model_without_knowledge_past_its_cutoff_is_not_flagged(probes):
    _, reports, _ = probes
    report = reports["lab/knows-2024-12"]
    assert report["flagged"] is False and report["change_point_month"] == "2024-12"
    assert report["effective_cutoff"] == "2024-12-31" and report["known_after_disclosed"]["n"] == 0


def test_probe_is_closed_book_and_writes_report_plot_and_run(probes):
    out, _, requests = probes
    assert len(requests) == 480 and all("tools" not in r.body for r in requests)
    folder = out / "knows-2025-06"
    svg = (folder / "accuracy_by_month.svg").read_bytes()
    assert svg.startswith(b"<?xml") and b"<dc:date>" not in svg
    assert "**Flagged**" in (folder / "report.md").read_text() and "| 2025-03 | 3 | 10 | 100 % |" in (folder / "report.md").read_text()
    assert (folder / "run" / "trials.parquet").exists() and (folder / "run" / "calls.sqlite").exists()
    assert probed_cutoff(folder) == dt.date(2025, 6, 30) and probed_cutoff(out / "knows-2024-12", "lab/knows-2024-12") == dt.date(2024, 12, 31)
    table = probe_table([load_probe_report(folder), load_probe_report(out / "knows-2024-12" / "report.json")])
    assert "| lab/knows-2025-06 | 2024-12-31 | 2025-06-30 | yes |" in table and "| lab/knows-2024-12 | 2024-12-31 | 2024-12-31 | no |" in table


def test_replay_through_the_cli_gives_the_same_report_offline(probes, questions_path):
    out, _, _ = probes
    folder = out / "knows-2025-06"
    done = runner.invoke(
        app, ["probe", "--model", "lab/knows-2025-06", "--questions", str(questions_path), "--cutoff", "2024-12", "--out", str(out / "replay"),
              "--cache", "replay", "--cache-file", str(folder / "run" / "calls.sqlite")],
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "FLAGGED" in done.output and "effective cutoff 2025-06-30" in done.output
    assert (out / "replay" / "report.json").read_text() == (folder / "report.json").read_text()
    assert (out / "replay" / "accuracy_by_month.svg").read_bytes() == (folder / "accuracy_by_month.svg").read_bytes()


def test_a_chance_forecaster_is_not_flagged(tmp_path, questions_path):
    report = run_probe("baseline:uniform", questions_path, "2024-12", tmp_path / "chance")
    assert report["flagged"] is False


def test_questions_on_one_side_only_or_no_cutoff_are_one_error_line(tmp_path, questions_path):
    done = runner.invoke(app, ["probe", "--model", "baseline:first", "--questions", str(questions_path), "--cutoff", "2026-06", "--out", str(tmp_path / "x")])
    assert done.exit_code == 1 and done.output.startswith("error:") and "no question resolves after the disclosed cutoff" in done.output
    done = runner.invoke(app, ["probe", "--model", "lab/unknown", "--questions", str(questions_path), "--out", str(tmp_path / "y"), "--params", str(tmp_path / "none.yaml")])
    assert done.exit_code == 1 and "error:" in done.output


def outcome(day, correct, chance=0.5):
    return Outcome(f"q{day}", dt.date.fromisoformat(day), correct, chance)


def test_change_point_by_hand():
    known = [outcome(f"2025-0{m}-10", 1.0) for m in (1, 2, 3) for _ in range(6)]
    unknown = [outcome(f"2025-0{m}-10", c) for m in (4, 5, 6) for c in (1.0, 0.0, 1.0, 0.0, 1.0, 0.0)]
    month, statistic = change_point(known + unknown)
    assert month == 2025 * 12 + 2 and statistic > 20  # March 2025
    assert change_point(unknown)[0] is None  # at chance throughout: no knowledge found


def test_outcomes_count_shares_of_trials_and_skip_call_errors():
    base = {"end_time": dt.date(2025, 1, 5), "options": ["a", "b", "c"], "choice_type": "multi", "question_type": "multiple_choice", "answer": "A, C"}
    rows = [
        {**base, "q_id": "q1", "pred": "A, C", "error": None},
        {**base, "q_id": "q1", "pred": None, "error": None},  # parse failure: wrong
        {**base, "q_id": "q1", "pred": None, "error": "network"},  # call error: not counted
        {**base, "q_id": "q2", "pred": None, "error": "rate_limit"},
    ]
    assert outcomes_from_trials(rows) == [Outcome("q1", dt.date(2025, 1, 5), 0.5, 1 / 7)]
    assert exact_match_chance(4, True) == 0.25 and exact_match_chance(3, False) == 1 / 7


def test_a_report_about_another_model_or_no_report_is_refused(tmp_path):
    report = probe_analysis([outcome("2024-12-01", 1.0), outcome("2025-02-01", 0.0)], dt.date(2024, 12, 31))
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"model": "a/b", **report}))
    with pytest.raises(InputError, match="about 'a/b', not 'c/d'"):
        probed_cutoff(path, "c/d")
    assert probed_cutoff(path) == dt.date(2024, 12, 31)  # not flagged: the disclosed cutoff stands
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(InputError, match="not a probe report"):
        load_probe_report(tmp_path / "other.json")
