"""``oracleproto score``: every metric of a trial table, with bootstrap statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import app, fail
from oracleproto.io import SourceReadError


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto score --trials data/eval/trials.parquet --out metrics/\n\n"
        "  oracleproto score --trials run.jsonl --out m/ --weights yes_no=0.15,binary_named=0.15,mc=0.70\n\n"
        "  oracleproto score --trials run.parquet --out m/ --bootstrap 0            # no intervals, fast\n\n"
        "  oracleproto score --trials run.parquet --out m/ --fallback-belief 0.05   # Brier family from boxed answers"
    )
)
def score(
    trials: Path = typer.Option(..., help="Trial table (.parquet or .jsonl): one row per (model, q_id, trial)."),
    out: Path = typer.Option(..., help="Output directory: summary.json, buckets.csv/.md, questions.parquet, pairwise.csv, leaderboard.md, difficulty.csv, plots/."),
    weights: str = typer.Option("yes_no=0.15,binary_named=0.15,mc=0.70", help="Composite weights per bucket (Eq. 19); a bucket left out weighs 0."),
    bootstrap: int = typer.Option(5000, min=0, help="Bootstrap replicates over questions for intervals and pairwise tests; 0 disables the statistics."),
    seed: int = typer.Option(0, min=0, help="Seed of the bootstrap."),
    fallback_belief: Optional[float] = typer.Option(None, help="Build belief vectors from parsed answers (chosen letters 1-EPS, the rest share EPS) where no belief exists."),
) -> None:
    """Score TRIALS into OUT: METRICS.md metrics per model, buckets, questions, intervals, pairwise tests, leaderboard."""
    from oracleproto.scoring.scorer import score_file, write_outputs
    from oracleproto.scoring.validate import TrialTableError

    try:
        result = score_file(trials, weights=weights, fallback_belief=fallback_belief, n_bootstrap=bootstrap, seed=seed)
        write_outputs(result, out)
    except (SourceReadError, TrialTableError, ValueError) as exc:
        fail(str(exc))
        return
    for model in result.models:
        composite = result.value("composite_accuracy", model)
        shown = "null" if composite is None else f"{composite:.4f}"
        typer.echo(f"{model}: composite_accuracy {shown}, {result.value('n_questions', model)} questions, {result.value('n_trials', model)} trials")
    typer.echo(f"wrote {out}/summary.json and the tables, plots and leaderboard beside it")
