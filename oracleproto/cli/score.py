"""``oracleproto score``: every metric of a trial table, with bootstrap statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, from_params, user_errors
from oracleproto.config import load_params


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
    weights: Optional[str] = typer.Option(None, help=from_params("Composite weights per bucket (Eq. 19); a bucket left out weighs 0.", "score.weights")),
    bootstrap: Optional[int] = typer.Option(
        None, help=from_params("Bootstrap replicates over questions for intervals and pairwise tests; 0 disables the statistics.", "score.bootstrap")
    ),
    seed: Optional[int] = typer.Option(None, help=from_params("Seed of the bootstrap.", "score.seed")),
    fallback_belief: Optional[float] = typer.Option(
        None, help=from_params("Build belief vectors from parsed answers (chosen letters 1-EPS, the rest share EPS) where no belief exists.", "score.fallback_belief")
    ),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP),
) -> None:
    """Score TRIALS into OUT: METRICS.md metrics per model, buckets, questions, intervals, pairwise tests, leaderboard."""
    from oracleproto.scoring.scorer import score_file, write_outputs

    flags = {"weights": weights, "bootstrap": bootstrap, "seed": seed, "fallback_belief": fallback_belief}
    with user_errors():
        config = load_params(params).overridden({"score": flags})
        result = score_file(trials, config.score, config.audit)
        write_outputs(result, out)
    for model in result.models:
        composite = result.value("composite_accuracy", model)
        shown = "null" if composite is None else f"{composite:.4f}"
        typer.echo(f"{model}: composite_accuracy {shown}, {result.value('n_questions', model)} questions, {result.value('n_trials', model)} trials")
    typer.echo(f"wrote {out}/summary.json and the tables, plots and leaderboard beside it")
