"""Score a trial table: validate → reduce → every metric → statistics → report tables.

``score_table`` is what the CLI, the DVC stage and notebooks call; ``write_outputs`` writes
the artifacts of DESIGN.md §3.3 with the canonical writers of :mod:`oracleproto.io`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from oracleproto.config import EndTimeRange, Score
from oracleproto.errors import InputError
from oracleproto.io import (
    read_table,
    round_float_columns,
    write_bytes,
    write_csv,
    write_json,
    write_parquet,
    write_text,
)
from oracleproto.lettersets import format_letter_set
from oracleproto.schema import TRIAL_CORE_SCHEMA
from oracleproto.scoring.plots import CHARTS
from oracleproto.scoring.prepare import SLICES, prepare
from oracleproto.scoring.probabilistic import (
    RELIABILITY_BINS,
    belief_stats,
    reliability_bins,
)
from oracleproto.scoring.registry import (
    METRICS,
    ScoreContext,
    compute_all,
    model_mean,
    safe_ratio,
)
from oracleproto.scoring.statistics import (
    HEADLINES,
    SIGNIFICANCE,
    Statistics,
    bootstrap,
)
from oracleproto.scoring.validate import validate_trials

TERTILES = ("easy", "medium", "hard")
DEFAULTS = Score()


@dataclass(frozen=True)
class ScoreResult:
    context: ScoreContext
    values: dict[str, np.ndarray]  # metric -> one value per model (NaN = null)
    statistics: Statistics

    @property
    def models(self) -> tuple[str, ...]:
        return self.context.models

    def value(self, metric: str, model: str) -> float | int | None:
        raw = self.values[metric][self.models.index(model)]
        if not np.isfinite(raw):
            return None
        return int(raw) if METRICS[metric].is_count else float(raw)


def score_table(
    table: pa.Table,
    weights: str | Mapping[str, float] | None = None,
    fallback_belief: float | None = DEFAULTS.fallback_belief,
    n_bootstrap: int = DEFAULTS.bootstrap,
    seed: int = DEFAULTS.seed,
    end_times: EndTimeRange | None = None,
) -> ScoreResult:
    """Every metric (and, when ``n_bootstrap`` > 0, intervals and pairwise tests) of ``table``.

    The options are checked by the rules of the ``score`` params section; ``weights`` may be
    the CLI's ``"yes_no=0.15,binary_named=0.15,mc=0.70"`` (a bucket left out weighs 0; None:
    the params default). ``end_times`` bounds an end_time column (the ``audit`` params
    section's plausible range; None: its defaults).
    """
    options = Score(
        weights=DEFAULTS.weights if weights is None else weights, fallback_belief=fallback_belief, bootstrap=n_bootstrap, seed=seed
    )
    table = validate_trials(table, end_times)
    data = prepare(table)
    context = ScoreContext(data, belief_stats(data, table, options.fallback_belief), options.weights)
    return ScoreResult(context, compute_all(context), bootstrap(context, options.bootstrap, options.seed))


def read_trials(path: str | os.PathLike[str]) -> pa.Table:
    """A trial table from .parquet (only the columns the scorer uses) or .jsonl."""
    if Path(path).suffix.lower() != ".parquet":
        return read_table(path)
    try:
        available = set(pq.read_schema(path).names)
        wanted = [name for name in (*TRIAL_CORE_SCHEMA.names, "belief", "end_time") if name in available]
        return pq.read_table(path, columns=wanted)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read parquet {path}: {exc}") from exc


def score_file(path: str | os.PathLike[str], score: Score = DEFAULTS, end_times: EndTimeRange | None = None) -> ScoreResult:
    """Score the trial table at ``path`` with the ``score`` params section (and the
    ``audit`` section's end_time range)."""
    options = {"weights": score.weights, "fallback_belief": score.fallback_belief, "n_bootstrap": score.bootstrap, "seed": score.seed}
    return score_table(read_trials(path), **options, end_times=end_times)


# ---------------------------------------------------------------------------------------
# Report pieces (pure: result -> rows / text)


def _json_value(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def summary(result: ScoreResult) -> dict[str, dict[str, Any]]:
    """{model: {metric: value-or-null}} with `<headline>_ci_low/_ci_high` for every headline."""
    out: dict[str, dict[str, Any]] = {}
    for model in result.models:
        entry: dict[str, Any] = {name: result.value(name, model) for name in METRICS}
        intervals = result.statistics.intervals.get(model, {})
        for headline in HEADLINES:
            interval = intervals.get(headline.name)
            entry[f"{headline.name}_ci_low"] = _json_value(interval.low) if interval else None
            entry[f"{headline.name}_ci_high"] = _json_value(interval.high) if interval else None
        out[model] = entry
    return out


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(value) else float(value)  # write_csv fixes the precision
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return value


def _fixed(value: float | None, digits: int = 4) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


BUCKET_HEADER = ("model", "bucket", "questions", "trials", "exam_mean", "pass1_avg")


def bucket_rows(result: ScoreResult) -> list[tuple]:
    ctx = result.context
    cells, questions = ctx.data.cells, ctx.data.questions
    rows = []
    for name in SLICES:
        where = cells.has_counted & questions.slice_mask(name)[cells.question]
        n_q = np.bincount(cells.model[where], minlength=ctx.n_models)
        n_t = np.bincount(cells.model[where], weights=cells.n_counted[where], minlength=ctx.n_models)
        exam = model_mean(ctx, cells.exam_mean, where)
        pass1 = model_mean(ctx, cells.pass1, where)
        for m, model in enumerate(ctx.models):
            rows.append((model, name, int(n_q[m]), int(n_t[m]), exam[m], pass1[m]))
    return sorted(rows, key=lambda r: (r[0], SLICES.index(r[1])))


def _markdown_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def buckets_markdown(rows: list[tuple]) -> str:
    """Markdown of :func:`bucket_rows`."""
    rows = [(m, b, str(q), str(t), _fixed(e), _fixed(p)) for m, b, q, t, e, p in rows]
    return "# Exam mean and pass@1 by bucket\n\n" + _markdown_table(BUCKET_HEADER, rows)


def question_difficulty(ctx: ScoreContext) -> np.ndarray:
    """1 − mean over models of the per-question exam mean (NaN when no model has a counted trial)."""
    cells = ctx.data.cells
    n_q = len(ctx.data.questions.ids)
    counted = cells.has_counted
    total = np.bincount(cells.question[counted], weights=cells.exam_mean[counted], minlength=n_q)
    models = np.bincount(cells.question[counted], minlength=n_q)
    return 1.0 - safe_ratio(total, models)


def difficulty_tertile(difficulty: np.ndarray) -> np.ndarray:
    """0/1/2 (easy/medium/hard) by sorted difficulty (ties by q_id); -1 when undefined.
    The first n mod 3 tertiles take one extra question."""
    defined = np.flatnonzero(np.isfinite(difficulty))
    ordered = defined[np.lexsort((defined, difficulty[defined]))]
    base, extra = divmod(len(ordered), 3)
    sizes = [base + (1 if t < extra else 0) for t in range(3)]
    tertile = np.full(len(difficulty), -1, dtype=np.int64)
    tertile[ordered] = np.repeat(np.arange(3), sizes)
    return tertile


DIFFICULTY_HEADER = ("model", "tertile", "questions", "difficulty_low", "difficulty_high", "exam_mean", "pass1_avg")


def difficulty_rows(result: ScoreResult) -> list[tuple]:
    ctx = result.context
    cells = ctx.data.cells
    difficulty = question_difficulty(ctx)
    tertile = difficulty_tertile(difficulty)
    rows = []
    for t, label in enumerate(TERTILES):
        members = tertile == t
        low = float(difficulty[members].min()) if members.any() else None
        high = float(difficulty[members].max()) if members.any() else None
        where = cells.has_counted & members[cells.question]
        n_q = np.bincount(cells.model[where], minlength=ctx.n_models)
        exam = model_mean(ctx, cells.exam_mean, where)
        pass1 = model_mean(ctx, cells.pass1, where)
        for m, model in enumerate(ctx.models):
            rows.append((model, label, int(n_q[m]), low, high, exam[m], pass1[m]))
    return sorted(rows, key=lambda r: (r[0], TERTILES.index(r[1])))


QUESTION_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("q_id", pa.string(), nullable=False),
        pa.field("bucket", pa.string(), nullable=False),
        pa.field("counted_trials", pa.int64(), nullable=False),
        pa.field("parsed_trials", pa.int64(), nullable=False),
        pa.field("exam_mean", pa.float64()),
        pa.field("pass1", pa.float64()),
        pa.field("pass_any", pa.bool_()),
        pa.field("pass_all", pa.bool_()),
        pa.field("modal_set", pa.string()),
        pa.field("entropy", pa.float64()),
        pa.field("vci", pa.float64()),
        pa.field("difficulty", pa.float64()),
    ]
)


def question_table(result: ScoreResult) -> pa.Table:
    """Per model × question (sorted by model, q_id, as the cells already are)."""
    ctx = result.context
    cells, questions = ctx.data.cells, ctx.data.questions
    slice_names = np.array(["yes_no", "binary_named", "mc_single", "mc_multi"], dtype=object)
    slice_code = np.where(questions.bucket < 2, questions.bucket, np.where(questions.single, 2, 3))
    counted = cells.has_counted
    distinct, inverse = np.unique(cells.modal_set, return_inverse=True)
    modal_text = np.array([format_letter_set(int(mask)) for mask in distinct], dtype=object)[inverse.ravel()]
    has_modal = cells.modal_unique & (cells.modal_count > 0)
    rated = cells.n_parsed >= 2
    columns = {
        "model": pa.array(np.asarray(ctx.models, dtype=object)[cells.model], pa.string()),
        "q_id": pa.array(questions.ids[cells.question], pa.string()),
        "bucket": pa.array(slice_names[slice_code[cells.question]], pa.string()),
        "counted_trials": pa.array(cells.n_counted, pa.int64()),
        "parsed_trials": pa.array(cells.n_parsed, pa.int64()),
        "exam_mean": pa.array(cells.exam_mean, pa.float64(), from_pandas=True),
        "pass1": pa.array(cells.pass1, pa.float64(), from_pandas=True),
        "pass_any": pa.array(cells.n_correct >= 1, pa.bool_(), mask=~counted),
        "pass_all": pa.array(cells.n_correct == cells.n_counted, pa.bool_(), mask=~counted),
        "modal_set": pa.array(modal_text, pa.string(), mask=~has_modal),
        "entropy": pa.array(cells.entropy, pa.float64(), from_pandas=True),
        "vci": pa.array(safe_ratio(cells.modal_count, cells.n_parsed), pa.float64(), mask=~rated),
        "difficulty": pa.array(question_difficulty(ctx)[cells.question], pa.float64(), from_pandas=True),
    }
    return pa.table(columns, schema=QUESTION_SCHEMA)


PAIRWISE_HEADER = (
    "metric", "model_a", "model_b", "n_questions", "delta", "ci_low", "ci_high", "p_value", "p_holm", "significant", "prob_a_better",
)


def pairwise_rows(result: ScoreResult) -> list[tuple]:
    order = {h.name: i for i, h in enumerate(HEADLINES)}
    rows = [
        (p.metric, p.model_a, p.model_b, p.n_questions, p.delta, p.ci_low, p.ci_high, p.p_value, p.p_holm, p.significant, p.prob_a_better)
        for p in result.statistics.pairs
    ]
    return sorted(rows, key=lambda r: (order[r[0]], r[1], r[2]))


def _comparison_with(result: ScoreResult, metric: str, model: str, other: str):
    for pair in result.statistics.pairs:
        if pair.metric == metric and {pair.model_a, pair.model_b} == {model, other}:
            return pair
    return None


def question_sets(result: ScoreResult) -> list[tuple[str, list[int], int]]:
    """Models grouped by the exact set of questions they were evaluated on: ``(title, model
    indices, n_questions)`` per group, the largest set first. Only models in one group were
    asked the same questions, so only they are ranked against each other."""
    cells = result.context.data.cells
    members: dict[frozenset[int], list[int]] = {}
    for m in range(len(result.models)):
        members.setdefault(frozenset(cells.question[cells.model == m].tolist()), []).append(m)
    groups = []
    for questions, models in sorted(members.items(), key=lambda kv: (-len(kv[0]), result.models[kv[1][0]])):
        configs = sorted({result.models[m].rpartition("@")[2] for m in models if "@" in result.models[m]})
        title = " / ".join(f"`{c}`" for c in configs) if configs else "models without a configuration label"
        groups.append((title, models, len(questions)))
    return groups


def _leaderboard_row(result: ScoreResult, rank: int, m: int, leader: str | None) -> tuple[str, ...]:
    model, with_stats = result.models[m], result.statistics.n_replicates > 0
    marker = ""
    if with_stats and leader is not None and model != leader:
        pair = _comparison_with(result, "composite_accuracy", model, leader)
        if pair is not None and pair.significant is False:
            marker = " †"
    interval = result.statistics.intervals.get(model, {}).get("composite_accuracy")
    span = f" [{_fixed(interval.low)}, {_fixed(interval.high)}]" if with_stats and interval and interval.low is not None else ""
    cost = result.value("per_correct_cost_usd", model)
    return (
        str(rank),
        f"{model}{marker}",
        f"{_fixed(result.value('composite_accuracy', model))}{span}",
        _fixed(result.value("pass1_avg", model)),
        _fixed(result.value("fss", model)),
        _fixed(result.value("cohen_kappa", model)),
        "—" if cost is None else f"{cost:.4f}",
        str(result.value("n_questions", model)),
        str(result.value("n_trials", model)),
    )


LEADERBOARD_HEADER = ("rank", "model", "composite accuracy [95 % CI]", "pass@1", "FSS", "Cohen κ", "cost / correct (USD)", "questions", "trials")


def leaderboard_markdown(result: ScoreResult) -> str:
    """One ranked table per question set (models evaluated on exactly the same questions):
    composite accuracy (95 % bootstrap interval), pass@1, FSS, Cohen κ, cost per correct
    answer, questions and trials; † marks models whose composite does not differ
    significantly from the table's leader (Holm-adjusted paired bootstrap, α = 0.05)."""
    composite = result.values["composite_accuracy"]
    parts = ["# Leaderboard\n\nModels are ranked only against models evaluated on the same questions: one table per question set.\n"]
    for title, models, n_questions in question_sets(result):
        order = sorted(models, key=lambda m: (not np.isfinite(composite[m]), -np.nan_to_num(composite[m]), result.models[m]))
        leader = result.models[order[0]] if np.isfinite(composite[order[0]]) else None
        rows = [_leaderboard_row(result, rank, m, leader) for rank, m in enumerate(order, start=1)]
        parts.append(f"## {title}: {n_questions} question(s), {len(models)} model(s)\n\n" + _markdown_table(LEADERBOARD_HEADER, rows))
    if result.statistics.n_replicates > 0:
        note = (
            f"Intervals: percentile bootstrap over questions, B = {result.statistics.n_replicates}, seed {result.statistics.seed}. "
            f"† not significantly different from its table's leader (paired bootstrap on the shared questions, "
            f"Holm-adjusted p ≥ {SIGNIFICANCE})."
        )
    else:
        note = "Bootstrap disabled (B = 0): no intervals or significance markers."
    return "\n".join(parts) + "\n" + note + "\n"


def pareto_frontier(cost: np.ndarray, accuracy: np.ndarray) -> np.ndarray:
    """True for models no other model beats on both (cost ≤, accuracy ≥, one strictly)."""
    n = len(cost)
    on_frontier = np.zeros(n, dtype=bool)
    for i in range(n):  # over models, not trials
        if not (np.isfinite(cost[i]) and np.isfinite(accuracy[i])):
            continue
        dominated = (cost <= cost[i]) & (accuracy >= accuracy[i]) & ((cost < cost[i]) | (accuracy > accuracy[i]))
        on_frontier[i] = not dominated.any()
    return on_frontier


def plot_tables(result: ScoreResult, buckets: list[tuple]) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """DVC plot data files: name -> (header, rows); ``buckets`` are the :func:`bucket_rows`."""
    ctx = result.context
    exam = [(model, bucket, exam) for model, bucket, _, _, exam, _ in buckets if np.isfinite(exam)]
    cost, accuracy = result.values["total_cost_usd"], result.values["composite_accuracy"]
    frontier = pareto_frontier(cost, accuracy)
    cost_rows = [
        (model, cost[m], result.values["per_correct_cost_usd"][m], accuracy[m], bool(frontier[m]))
        for m, model in enumerate(ctx.models)
        if np.isfinite(accuracy[m])
    ]
    reliability: list[tuple] = []
    if ctx.beliefs is not None:
        count, predicted, observed = reliability_bins(ctx.beliefs, ctx.data.cells.model, ctx.n_models)
        for m, model in enumerate(ctx.models):
            for b in range(RELIABILITY_BINS):
                if count[m, b]:
                    reliability.append(
                        (model, b, b / RELIABILITY_BINS, (b + 1) / RELIABILITY_BINS, int(count[m, b]), predicted[m, b] / count[m, b], observed[m, b] / count[m, b])
                    )
    significance = []
    for pair in result.statistics.pairs:
        if pair.metric != "composite_accuracy":
            continue
        flipped = None if pair.delta is None else 0.0 - pair.delta
        significance.append((pair.model_a, pair.model_b, pair.delta, pair.p_holm, pair.significant))
        significance.append((pair.model_b, pair.model_a, flipped, pair.p_holm, pair.significant))
    return {
        "exam_by_bucket.csv": (("model", "bucket", "exam_mean"), exam),
        "cost_accuracy.csv": (("model", "total_cost_usd", "per_correct_cost_usd", "composite_accuracy", "pareto_frontier"), cost_rows),
        "reliability.csv": (("model", "bin", "bin_low", "bin_high", "count", "mean_prediction", "observed_frequency"), reliability),
        "significance.csv": (("model_a", "model_b", "delta", "p_holm", "significant"), sorted(significance, key=lambda r: (r[0], r[1]))),
    }


def write_outputs(result: ScoreResult, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write every scoring artifact under ``out_dir``; returns the paths written."""
    out = Path(out_dir)

    def csv(header: tuple[str, ...], rows: list[tuple], path: Path) -> Path:
        return write_csv(header, ([_cell(v) for v in row] for row in rows), path)

    buckets = bucket_rows(result)
    written = [
        write_json(summary(result), out / "summary.json"),
        csv(BUCKET_HEADER, buckets, out / "buckets.csv"),
        write_text(buckets_markdown(buckets), out / "buckets.md"),
        write_parquet(round_float_columns(question_table(result)), out / "questions.parquet", QUESTION_SCHEMA),
        csv(PAIRWISE_HEADER, pairwise_rows(result), out / "pairwise.csv"),
        write_text(leaderboard_markdown(result), out / "leaderboard.md"),
        csv(DIFFICULTY_HEADER, difficulty_rows(result), out / "difficulty.csv"),
    ]
    tables = plot_tables(result, buckets)
    for name, (header, rows) in tables.items():
        written.append(csv(header, rows, out / "plots" / name))
    for name, (table, draw) in CHARTS.items():
        written.append(write_bytes(draw(tables[table][1]), out / "plots" / name))
    written += write_headlines(summary(result), out / HEADLINE_DIR)
    return written


HEADLINE_DIR = "headline"
# `dvc metrics show` prints one row per metrics file: one small file per model, short keys.
HEADLINE_KEYS = {
    "acc": "composite_accuracy",
    "p1": "pass1_avg",
    "p1_lo": "pass1_avg_ci_low",
    "p1_hi": "pass1_avg_ci_high",
    "valid": "validity_rate",
    "fss": "fss",
    "kappa": "cohen_kappa",
    "usd_ok": "per_correct_cost_usd",
    "n": "n_questions",
}
HEADLINE_DIGITS = 3


def headline_file_names(models: Sequence[str]) -> dict[str, str]:
    """A short file name per model label (``baseline:first@cutoff-2024-06-30`` →
    ``first@2024-06-30.json``); where two labels would shorten alike, both keep their
    whole (sanitised) label."""

    def safe(text: str) -> str:
        return "".join(ch if ch.isalnum() or ch in "._@-" else "-" for ch in text) + ".json"

    short = {m: safe(m.removeprefix("baseline:").replace("@cutoff-", "@")) for m in models}
    clashes = {name for name in short.values() if list(short.values()).count(name) > 1}
    return {m: safe(m) if short[m] in clashes else short[m] for m in models}


def write_headlines(full: Mapping[str, Mapping[str, Any]], out: Path) -> list[Path]:
    """``out/<model>.json``: the headline numbers at 3 decimals (the full summary stays in
    summary.json; README names the keys)."""
    if out.exists():
        for stale in out.glob("*.json"):
            stale.unlink()
    written = []
    names = headline_file_names(sorted(full))
    for model, values in sorted(full.items()):
        row = {key: values.get(name) for key, name in HEADLINE_KEYS.items()}
        row = {key: round(v, HEADLINE_DIGITS) + 0.0 if isinstance(v, float) else v for key, v in row.items()}
        written.append(write_json(row, out / names[model]))
    return written
