"""Done-when of issue 15, part 1: a run against a loopback search that plants dated leaks at
known rates; ``leak-audit sample`` + a labelling script that labels by the planted truth +
``leak-audit report`` recover each layer's planted rate inside its Wilson interval.

Every search returns ten results: two published after χ (the date filter's), two dated
before χ whose text names a date after it (the heuristic's), two flagged for the loopback
detector (the detector's) and four it keeps (shown). Within each layer the planted share of
leaks is exact over the run: 75 %, 80 %, 90 % and 5 %.
"""

import csv
import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.settings import Budgets, EvalSettings, ModelSpec
from oracleproto.io import write_parquet
from oracleproto.leakaudit.layers import LAYERS
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import MULTI_GOLDS, make_questions
from tests.harness.test_evaluate_stack import (
    MODEL_KEY,
    no_sleep,
    researcher,
    stack_factory,
)
from tests.servers.openai_server import OpenAIServer, content_reply
from tests.servers.tavily_server import TavilyStub, result

runner = CliRunner()
PLANTED = {"dropped_by_date_filter": 0.75, "dropped_by_heuristic": 0.80, "dropped_by_detector": 0.90, "shown_to_model": 0.05}
PER_SEARCH = {"dropped_by_date_filter": 2, "dropped_by_heuristic": 2, "dropped_by_detector": 2, "shown_to_model": 4}


def flagging_judge(body):
    """The loopback detector: drop what is flagged ALERT, keep the rest (so it misses unflagged leaks)."""
    title = body["messages"][0]["content"].split("title: ", 1)[1].split("\n", 1)[0]
    return content_reply(json.dumps({"verdict": "drop" if "ALERT" in title else "keep", "reason": "r"}), body)


class Planter:
    """Results for each search, the truth of each url, and exact planted rates per layer."""

    def __init__(self):
        self.truth: dict[str, str] = {}
        self.seen = dict.fromkeys(LAYERS, 0)

    def _is_leak(self, layer):
        # the k-th result of a layer leaks iff k mod 20 falls below its planted share of 20
        k = self.seen[layer]
        self.seen[layer] += 1
        return k % 20 < round(PLANTED[layer] * 20)

    def _one(self, layer, chi, tag):
        leak = self._is_leak(layer)
        url = f"https://plant.example/{tag}/{layer}/{self.seen[layer]}"
        self.truth[url] = "leak" if leak else "clean"
        before, after = (chi - dt.timedelta(days=5)).isoformat(), (chi + dt.timedelta(days=3)).isoformat()
        outcome = "The final result is in: the home side won." if leak else "Preparations continue before the decision."
        if layer == "dropped_by_date_filter":
            return result(f"Report {tag}", url, outcome if leak else "A republished explainer of the background.", after)
        if layer == "dropped_by_heuristic":
            day = chi + dt.timedelta(days=2)
            text = f"{outcome} Posted {day:%B} {day.day}, {day.year}." if leak else f"A bond maturing in {chi.year + 5} is discussed."
            return result(f"Brief {tag}", url, text, before)
        title = f"ALERT analysis {tag}" if layer == "dropped_by_detector" else f"Analysis {tag}"
        return result(title, url, outcome, before)

    def results(self, chi, tag):
        return [self._one(layer, chi, f"{tag}-{layer[:4]}{i}") for layer in LAYERS for i in range(PER_SEARCH[layer])]


def label_by_truth(sheet, truth):
    """The labelling script: every row gets the planted truth of its url."""
    with open(sheet, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    for row in rows:
        row["label"] = truth[row["url"]]
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return rows


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("planted")
    questions = make_questions(15)
    path = tmp / "questions.parquet"
    write_parquet(questions, path, QUESTION_SCHEMA, sort_by=("id",))
    planter = Planter()
    settings = EvalSettings(search_backend="tavily", detector="llm", budgets=Budgets(max_results=10, trials=1))
    job = EvalJob(ModelSpec(label="vendor/model", slug="vendor/model", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(path))
    with OpenAIServer(researcher) as model, TavilyStub() as tavily, OpenAIServer(flagging_judge) as detector:
        for row in questions.to_pylist():
            chi = row["end_time"] - dt.timedelta(days=1)
            for n in (1, 2):
                tavily.script(f"{row['event']} angle {n}", planter.results(chi, f"{row['id']}s{n}"))
        env = {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": MODEL_KEY, "DETECTOR_MODEL": "det/model"}
        evaluate([job], settings, tmp / "run", env=env, sleep=no_sleep, search_factory=stack_factory(tavily.url, detector.base_url))
    return tmp, planter


def test_sample_label_report_recovers_the_planted_rates(planted_run):
    tmp, planter = planted_run
    sheet = tmp / "sheet.csv"
    drawn = runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "40", "--seed", "3", "--out", str(sheet)])
    assert drawn.exit_code == 0, drawn.output
    assert "shown_to_model: 40 of 120" in drawn.output and "dropped_by_detector: 40 of 60" in drawn.output
    rows = label_by_truth(sheet, planter.truth)
    assert {row["layer"] for row in rows} == set(LAYERS) and len(rows) == 160

    done = runner.invoke(app, ["leak-audit", "report", "--sheet", str(sheet), "--run", str(tmp / "run"), "--out", str(tmp / "report")])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp / "report" / "report.json").read_text())
    for layer, rate in PLANTED.items():
        measured = report["layers"][layer]["leak_rate"]
        assert measured["ci_low"] <= rate <= measured["ci_high"], (layer, measured)
    residual = report["residual_leak_rate"]
    assert residual["n"] == 40 and residual == report["layers"]["shown_to_model"]["leak_rate"]
    assert "Residual leak rate" in done.output and "of 40 labelled" in done.output
    # the detector's recall: leaks it dropped over leaks reaching it (60·0.9 vs 120·0.05 planted)
    recall = report["filters"]["detector"]["recall"]
    assert recall["ci_low"] <= 54 / 60 <= recall["ci_high"]
    assert "| shown_to_model | 120 | 40 | 40 |" in (tmp / "report" / "report.md").read_text()


def test_the_sheet_shows_what_each_layer_did_and_never_the_answer(planted_run):
    tmp, _ = planted_run
    sheet = tmp / "sheet-verdicts.csv"
    runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "5", "--out", str(sheet)])
    text = sheet.read_text(encoding="utf-8")
    assert not any(gold in text for gold in MULTI_GOLDS) and "answer" not in next(iter(text.splitlines()))
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    by_layer = {row["layer"]: row for row in rows}
    assert by_layer["dropped_by_date_filter"]["date_filter_verdict"].startswith("drop:published_after_cutoff:")
    assert by_layer["dropped_by_heuristic"]["heuristic_verdict"].startswith("drop:date_after_cutoff:")
    assert by_layer["dropped_by_detector"]["detector_verdict"] == "drop" and by_layer["dropped_by_detector"]["heuristic_verdict"] == "keep"
    shown = by_layer["shown_to_model"]
    assert (shown["date_filter_verdict"], shown["heuristic_verdict"], shown["detector_verdict"]) == ("keep", "keep", "keep")
    assert all(row["label"] == "" and row["prediction_cutoff"] for row in rows)
    again = tmp / "again.csv"
    runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "5", "--out", str(again)])
    assert again.read_bytes() == sheet.read_bytes()


def test_a_sheet_that_lost_a_row_is_refused(planted_run):
    tmp, _ = planted_run
    sheet = tmp / "short.csv"
    runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "10", "--out", str(sheet)])
    lines = sheet.read_text(encoding="utf-8").splitlines(keepends=True)
    sheet.write_text("".join(lines[:-1]), encoding="utf-8")
    done = runner.invoke(app, ["leak-audit", "report", "--sheet", str(sheet), "--out", str(tmp / "short")])
    assert done.exit_code == 1 and done.output.count("error:") == 1
    assert "do not match the sample drawn from run" in done.output


def test_a_sheet_checked_against_another_draw_is_refused(planted_run):
    tmp, _ = planted_run
    sheet = tmp / "seed1.csv"
    runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "10", "--seed", "1", "--out", str(sheet)])
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    for row in rows:
        row["seed"] = "2"  # claims another draw: the hash no longer matches
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    done = runner.invoke(app, ["leak-audit", "report", "--sheet", str(sheet), "--run", str(tmp / "run"), "--out", str(tmp / "x")])
    assert done.exit_code == 1 and "error:" in done.output


def test_a_sheet_checked_against_a_different_run_is_refused(planted_run, tmp_path):
    tmp, _ = planted_run
    sheet = tmp_path / "sheet.csv"
    runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp / "run"), "--per-layer", "5", "--out", str(sheet)])
    other = tmp_path / "other-run"
    other.mkdir()
    table = pq.read_table(tmp / "run" / "trials.parquet")
    pq.write_table(table.slice(1), other / "trials.parquet")
    done = runner.invoke(app, ["leak-audit", "report", "--sheet", str(sheet), "--run", str(other), "--out", str(tmp_path / "r")])
    assert done.exit_code == 1 and "is not the run this sheet was drawn from" in done.output


def test_bad_runs_are_one_error_line(tmp_path):
    missing = runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp_path), "--per-layer", "5", "--out", str(tmp_path / "s.csv")])
    assert missing.exit_code == 1 and missing.output == f"error: {tmp_path}: no trials.parquet (give the folder `oracleproto evaluate --out` wrote)\n"
    rows = [{"model": "baseline:first", "q_id": "q1", "trial": 1, "search_calls": None, "messages": "[]"}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "trials.parquet")
    nothing = runner.invoke(app, ["leak-audit", "sample", "--run", str(tmp_path), "--per-layer", "5", "--out", str(tmp_path / "s.csv")])
    assert nothing.exit_code == 1 and "no trial of this run searched" in nothing.output
    no_sheet = runner.invoke(app, ["leak-audit", "report", "--sheet", str(tmp_path / "none.csv"), "--out", str(tmp_path)])
    assert no_sheet.exit_code == 1 and no_sheet.output.startswith("error: cannot read sheet")
