"""``oracleproto probe``: does a model know outcomes after its *disclosed* knowledge cutoff?

Admission trusts the disclosed κ. The probe asks the model, closed-book (no tools, no
search: the loop runs with a search budget of 0), for forecasts on resolved questions whose
τ lies on both sides of κ, through the same provider path as an evaluation (API models via
``OPENAI_*``, every call in the record/replay cache). Then, by month of τ:

- accuracy (strict: the answer set equals the gold set; a parse failure is wrong; a call
  error is not counted) with its Wilson 95 % interval, against the month's chance rate —
  the mean over its questions of the exact-match probability of ``baseline:uniform``
  (1/k single-answer, 1/(2^k − 1) multi-answer); a month is *above chance* when its
  interval's lower bound is;
- the latest month above chance;
- a change point: the last month m of "knowledge", fitted by maximum likelihood with one
  accuracy (at least the chance rate) for questions resolved up to m and chance after; it is
  kept only when it beats "no knowledge at all" by a likelihood-ratio statistic above 3.84;
- the effective cutoff: the last day of the change-point month. The model is **flagged**
  when that month is after κ's and the questions resolved between κ's month and it are, taken
  together, answered significantly above chance.

With several trials per question, a question counts as its share of correct trials.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.admission import load_probe_report, parse_cutoff, probed_cutoff  # noqa: F401  (re-exported for the card)
from oracleproto.errors import ConfigError
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.plan import CACHE_FILE, TRIALS_FILE
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.settings import Budgets, EvalSettings, ModelSpec
from oracleproto.io import (
    read_parquet,
    sha256_file,
    write_bytes,
    write_json,
    write_text,
)
from oracleproto.leakaudit.sample import LeakAuditError
from oracleproto.leakaudit.stats import proportion
from oracleproto.lettersets import parse_letter_set
from oracleproto.prompts import ProtocolSwitches

RUN_DIR, REPORT_JSON, REPORT_MD, PLOT_SVG = "run", "report.json", "report.md", "accuracy_by_month.svg"
LR_THRESHOLD = 3.84  # χ² with 1 degree of freedom at 0.95
PROBABILITY_FLOOR = 1e-9
# Closed book: one answer turn and one continuation if it was not boxed; no tools offered;
# the reflection tail (which urges searching) off, the budget tail on (it says search is off).
PROBE_BUDGETS = {"max_steps": 2, "max_search_calls": 0, "lookahead": 1}
PROBE_PROTOCOLS = ProtocolSwitches(budget_awareness=True, reflection=False, belief=False)


@dataclass(frozen=True)
class Outcome:
    """One question's closed-book result: share of counted trials correct, and its chance rate."""

    q_id: str
    end_time: dt.date
    correct: float
    chance: float


def exact_match_chance(n_options: int, single: bool) -> float:
    """Probability that ``baseline:uniform`` answers exactly right."""
    return 1.0 / n_options if single else 1.0 / (2**n_options - 1)


def month_index(day: dt.date) -> int:
    return day.year * 12 + day.month - 1


def month_label(index: int) -> str:
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def month_end(index: int) -> dt.date:
    year, month = index // 12, index % 12 + 1
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def outcomes_from_trials(rows: Sequence[Mapping[str, Any]]) -> list[Outcome]:
    """Per question, from trial rows (``q_id, end_time, options, choice_type, question_type,
    answer, pred, error``); a question whose every trial errored is left out."""
    trials: dict[str, list[bool]] = defaultdict(list)
    first: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        if row["error"] is not None:
            continue
        first.setdefault(row["q_id"], row)
        predicted = parse_letter_set(row["pred"]) if row["pred"] else None
        trials[row["q_id"]].append(predicted is not None and predicted == parse_letter_set(row["answer"]))
    outcomes = []
    for q_id, results in sorted(trials.items()):
        row = first[q_id]
        single = row["choice_type"] == "single" or row["question_type"] != "multiple_choice"
        outcomes.append(Outcome(q_id, row["end_time"], sum(results) / len(results), exact_match_chance(len(row["options"]), single)))
    return outcomes


def _bernoulli_ll(correct: float, p: float) -> float:
    p = min(max(p, PROBABILITY_FLOOR), 1 - PROBABILITY_FLOOR)
    return correct * math.log(p) + (1 - correct) * math.log(1 - p)


def change_point(outcomes: Sequence[Outcome]) -> tuple[int | None, float]:
    """``(last month of knowledge, likelihood-ratio statistic)``; month None when no split beats
    "no knowledge" by :data:`LR_THRESHOLD`. Ties go to the earlier month."""
    months = sorted({month_index(o.end_time) for o in outcomes})
    baseline = sum(_bernoulli_ll(o.correct, o.chance) for o in outcomes)
    best_month, best_ll = None, baseline
    for month in months:
        before = [o for o in outcomes if month_index(o.end_time) <= month]
        after = [o for o in outcomes if month_index(o.end_time) > month]
        accuracy = max(sum(o.correct for o in before) / len(before), sum(o.chance for o in before) / len(before))
        ll = sum(_bernoulli_ll(o.correct, accuracy) for o in before) + sum(_bernoulli_ll(o.correct, o.chance) for o in after)
        if ll > best_ll + 1e-12:
            best_month, best_ll = month, ll
    statistic = 2 * (best_ll - baseline)
    return (best_month if statistic > LR_THRESHOLD else None), statistic


def pooled(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Accuracy of a group of questions with its Wilson interval, its chance rate, and whether
    the interval lies above it."""
    stats = proportion(sum(o.correct for o in outcomes), len(outcomes)).to_json()
    chance = sum(o.chance for o in outcomes) / len(outcomes) if outcomes else None
    above = stats["ci_low"] is not None and chance is not None and stats["ci_low"] > chance
    return {**stats, "chance": chance, "above_chance": above}


def probe_analysis(outcomes: Sequence[Outcome], disclosed: dt.date) -> dict[str, Any]:
    """The report's numbers from per-question outcomes (pure)."""
    kappa = month_index(disclosed)
    by_month: dict[int, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_month[month_index(outcome.end_time)].append(outcome)
    months = [{"month": month_label(m), "offset": m - kappa, **pooled(by_month[m])} for m in sorted(by_month)]
    significant = [row["month"] for row in months if row["above_chance"]]
    point, statistic = change_point(outcomes)
    after_kappa = [o for o in outcomes if point is not None and kappa < month_index(o.end_time) <= point]
    known_after = pooled(after_kappa)
    return {
        "disclosed_cutoff": disclosed.isoformat(),
        "questions": len(outcomes),
        "before_cutoff": sum(o.end_time <= disclosed for o in outcomes),
        "after_cutoff": sum(o.end_time > disclosed for o in outcomes),
        "months": months,
        "latest_month_above_chance": significant[-1] if significant else None,
        "change_point_month": month_label(point) if point is not None else None,
        "change_point_statistic": statistic,
        "effective_cutoff": month_end(point).isoformat() if point is not None else None,
        "known_after_disclosed": known_after,
        "flagged": point is not None and point > kappa and known_after["above_chance"],
    }


def probe_settings(trials: int, cache_mode: str, seed: int) -> EvalSettings:
    """Closed-book settings: no search backend, no detector, the probe's budgets and tails."""
    return EvalSettings(
        budgets=Budgets(trials=trials, **PROBE_BUDGETS),
        protocols=PROBE_PROTOCOLS,
        search_backend="none",
        detector="off",
        cache_mode=cache_mode,
        seed=seed,
    )


def run_probe(
    model: str,
    questions: str | os.PathLike[str],
    disclosed: str | dt.date,
    out_dir: str | os.PathLike[str],
    *,
    trials: int = 1,
    cache_mode: str = "record",
    cache_path: str | os.PathLike[str] | None = None,
    seed: int = 0,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Ask ``model`` every question of ``questions`` closed-book (the run in ``out_dir/run``,
    resumable, its calls recorded) and write report.json, report.md and the plot."""
    try:
        kappa = parse_cutoff(disclosed, model)
    except ConfigError as exc:
        raise LeakAuditError(str(exc)) from exc
    question_set = QuestionSet.load(questions)
    after = sum(r.end_time > kappa for r in question_set.records)
    if after == 0 or after == len(question_set.records):
        side = "after" if after == 0 else "on or before"
        raise LeakAuditError(f"{questions}: no question resolves {side} the disclosed cutoff {kappa}; the probe needs both sides")
    # every question is asked: the probe is about what admission would exclude (no cutoff on the spec)
    job = EvalJob(ModelSpec(label=model, slug=model), question_set)
    out = Path(out_dir)
    run_dir = out / RUN_DIR
    evaluate([job], probe_settings(trials, cache_mode, seed), run_dir, env=env, cache_path=cache_path or run_dir / CACHE_FILE)
    rows = read_parquet(run_dir / TRIALS_FILE).to_pylist()
    report = {
        "model": model,
        "trials": trials,
        "run": {"path": RUN_DIR, "trials_sha256": sha256_file(run_dir / TRIALS_FILE), "questions_sha256": question_set.source_hash},
        "call_errors": sum(row["error"] is not None for row in rows),
        **probe_analysis(outcomes_from_trials(rows), kappa),
    }
    write_json(report, out / REPORT_JSON)
    write_text(probe_report_markdown(report), out / REPORT_MD)
    write_bytes(accuracy_plot(report), out / PLOT_SVG)
    return report


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def probe_report_markdown(report: Mapping[str, Any]) -> str:
    """report.md: the verdict, then accuracy by month against chance."""
    verdict = (
        (
            f"**Flagged**: {report['model']} answers questions resolved after its disclosed cutoff "
            f"{report['disclosed_cutoff']} above chance; effective cutoff {report['effective_cutoff']}."
        )
        if report["flagged"]
        else f"Not flagged: no knowledge beyond the disclosed cutoff {report['disclosed_cutoff']} was detected."
    )
    lines = [
        f"# Cutoff probe: {report['model']}",
        "",
        verdict,
        "",
        (
            f"{report['questions']} questions ({report['before_cutoff']} resolved on or before the disclosed cutoff, "
            f"{report['after_cutoff']} after), {report['trials']} closed-book trial(s) each, {report['call_errors']} call error(s). "
            f"Change point: {report['change_point_month'] or 'none'} (likelihood-ratio statistic {report['change_point_statistic']:.1f}); "
            f"latest month above chance: {report['latest_month_above_chance'] or 'none'}."
        ),
        "",
        "| month of τ | months after κ | questions | accuracy | Wilson 95 % | chance | above chance |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for row in report["months"]:
        lines.append(
            f"| {row['month']} | {row['offset']} | {row['n']} | {_percent(row['rate'])} | [{_percent(row['ci_low'])}, {_percent(row['ci_high'])}] "
            f"| {_percent(row['chance'])} | {'yes' if row['above_chance'] else ''} |"
        )
    return "\n".join([*lines, ""])


def accuracy_plot(report: Mapping[str, Any]) -> bytes:
    """Accuracy by month of τ with Wilson intervals, the chance rate, κ and the effective cutoff (SVG)."""
    from oracleproto.scoring.plots import (  # the project's deterministic SVG setup
        pyplot,
        svg_bytes,
    )

    plt = pyplot()
    months = report["months"]
    figure, axes = plt.subplots(figsize=(8.0, 3.2))
    x = list(range(len(months)))
    rates = [m["rate"] for m in months]
    errors = [[m["rate"] - m["ci_low"] for m in months], [m["ci_high"] - m["rate"] for m in months]]
    axes.errorbar(x, rates, yerr=errors, fmt="o", color="tab:blue", capsize=2, label="accuracy (Wilson 95 %)")
    axes.step(x, [m["chance"] for m in months], where="mid", color="tab:gray", linestyle="--", label="chance")
    kappa = month_index(dt.date.fromisoformat(report["disclosed_cutoff"]))
    marks = [("disclosed κ", 0, "tab:red")]
    if report["effective_cutoff"] is not None:
        marks.append(("effective cutoff", month_index(dt.date.fromisoformat(report["effective_cutoff"])) - kappa, "tab:orange"))
    for name, offset, colour in marks:  # a line after the last month up to the marked one
        before = [i for i, m in enumerate(months) if m["offset"] <= offset]
        if before:
            axes.axvline(before[-1] + 0.5, color=colour, linestyle=":", label=name)
    axes.set_xticks(x, [m["month"] for m in months], rotation=90)
    axes.set_ylim(0, 1.02)
    axes.set_ylabel("accuracy")
    axes.set_title(f"Closed-book accuracy by month of resolution: {report['model']}")
    axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
    return svg_bytes(figure)


