"""On an archive run, what the archive's hard date filter withheld is sampled as
dropped_by_date_filter, beside what the heuristic dropped and what the model read."""

import csv
import datetime as dt
import json

from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.settings import Budgets, EvalSettings, ModelSpec
from oracleproto.io import write_parquet
from oracleproto.leakaudit.sample import run_results, write_sheet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import make_questions


def test_archive_masked_documents_are_in_the_date_filter_layer(tmp_path):
    questions = make_questions(4)
    qpath = tmp_path / "questions.parquet"
    write_parquet(questions, qpath, QUESTION_SCHEMA, sort_by=("id",))
    docs = []
    for i, row in enumerate(questions.to_pylist()):
        chi = row["end_time"] - dt.timedelta(days=1)
        later = chi + dt.timedelta(days=2)
        docs += [
            {"doc_id": f"d{i}-early", "url": f"https://a.example/{i}/early", "title": f"Outlook {i}", "published_date": str(chi - dt.timedelta(days=9)),
             "content": f"Market outlook {i} before the decision."},
            {"doc_id": f"d{i}-dated", "url": f"https://a.example/{i}/dated", "title": f"Outlook {i} schedule", "published_date": str(chi - dt.timedelta(days=8)),
             "content": f"Market outlook {i}: the decision comes on {later:%B} {later.day}, {later.year}."},
            {"doc_id": f"d{i}-late", "url": f"https://a.example/{i}/late", "title": f"Outcome {i}", "published_date": str(later),
             "content": f"Market outlook {i} outcome: it rose."},
            {"doc_id": f"d{i}-undated", "url": f"https://a.example/{i}/undated", "title": f"Undated {i}", "published_date": None,
             "content": f"Market outlook {i} undated page."},
        ]  # fmt: skip
    archive = tmp_path / "archive.jsonl"
    archive.write_text("".join(json.dumps(d) + "\n" for d in docs))
    script = tmp_path / "script.json"
    search = {"tool_calls": [{"function": {"name": "web_search", "arguments": json.dumps({"query": "market outlook 0 1 2 3"})}}]}
    answers = {"q00": "Yes", "q01": "No", "q02": "Team2a", "q03": "A"}
    script.write_text(json.dumps({q_id: [search, {"content": f"\\boxed{{{box}}}"}] for q_id, box in answers.items()}))
    settings = EvalSettings(search_backend="archive", archive_path=str(archive), detector="heuristic", budgets=Budgets(trials=1, max_results=20))
    evaluate([EvalJob(ModelSpec(label="scripted", slug=f"scripted:{script}"), QuestionSet.load(qpath))], settings, tmp_path / "run")

    results = run_results(tmp_path / "run")
    masked = [r for r in results.by_layer["dropped_by_date_filter"] if r.position.startswith("m")]
    assert masked and {r.date_filter_verdict.split(":")[1] for r in masked} == {"published_after_cutoff", "undated"}
    assert all(r.heuristic_verdict == "" and r.text for r in masked)
    assert any("/undated" in r.url and r.published_date == "" for r in masked)
    heuristic = results.by_layer["dropped_by_heuristic"]
    assert heuristic and all(r.heuristic_verdict.startswith("drop:date_after_cutoff:content:") for r in heuristic)
    shown = results.by_layer["shown_to_model"]
    assert shown and all(r.published_date and r.published_date <= r.prediction_cutoff for r in shown)
    assert results.populations["dropped_by_detector"] == 0

    counts = write_sheet(tmp_path / "run", 3, 0, tmp_path / "sheet.csv")
    assert counts["dropped_by_detector"] == (0, 0) and counts["dropped_by_date_filter"][0] == 3
    rows = list(csv.DictReader((tmp_path / "sheet.csv").open(encoding="utf-8")))
    assert len(rows) == sum(sampled for sampled, _ in counts.values())
