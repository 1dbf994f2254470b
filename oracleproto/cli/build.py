"""``oracleproto build`` and ``oracleproto validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, fail, from_params, user_errors
from oracleproto.config import load_params
from oracleproto.io import read_table


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto build --source sample --out out/\n\n"
        "  oracleproto build --source sqlite:../shared/data/forecast_eval_set_80.db --out out80/\n\n"
        "  oracleproto build --source hf:futurex-ai/Futurex-Past --out fx/ --params params.yaml\n\n"
        "  oracleproto build --source parquet:my_questions.parquet --out mine/"
    )
)
def build(
    source: Optional[str] = typer.Option(
        None, help=from_params("Source URI: sample | hf:REPO_OR_DIR | sqlite:PATH | jsonl:PATH | parquet:PATH | csv:PATH.", "ingest.source")
    ),
    out: Path = typer.Option(..., help="Output directory: questions.parquet, audit/, splits/ (and raw/) are written under it."),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP),
) -> None:
    """Ingest → audit → admit into OUT, the same layout the DVC stages write under data/."""
    from oracleproto.corpus.build import build as run_build

    with user_errors():
        config = load_params(params).overridden({"ingest": {"source": source}})
        result = run_build(config, out)
    uri = config.ingest.source
    report = result["audit"]
    typer.echo(
        f"{uri}: {report['rows_in']} rows in → {report['rows_out']} questions, "
        f"{report['rows_quarantined']} quarantined, {report['duplicates_collapsed']} duplicates collapsed"
    )
    typer.echo("counts_by_type: " + json.dumps(report["counts_by_type"], sort_keys=True))
    boundary = result["admission"]["test_boundary"]
    typer.echo(f"test boundary: the newest {boundary['test_questions']} questions (from {boundary['first_test_end_time']}) are test everywhere")
    for model, info in result["admission"]["models"].items():
        typer.echo(
            f"  {model}: cutoff {info['cutoff']} → {info['admitted']} admitted ({info['train']} train, {info['test']} test), "
            f"{info['excluded_by_cutoff']} excluded_by_cutoff"
        )


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto validate data/questions.parquet\n\n"
        "  oracleproto validate data/splits/cutoff-2024-04-30/test.parquet\n\n"
        "  oracleproto validate my_questions.jsonl\n\n"
        "  oracleproto validate old_questions.parquet --params params.yaml   # its end_time range"
    )
)
def validate(
    path: Path = typer.Argument(..., help="A question table (.parquet or .jsonl) in the seven-column shape."),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP + " Its audit.end_time_min/end_time_max bound end_time."),
) -> None:
    """Check a question table against the question contract; print the failures grouped by check (count and first rows)."""
    from oracleproto.validation import check_failures, failure_count, report_lines

    with user_errors():
        end_times = load_params(params).audit
        table = read_table(path)
    groups = check_failures(table, end_times)
    if groups:
        for line in report_lines(groups):
            typer.echo(line)
        fail(f"{path}: {failure_count(groups)} failure(s) in {table.num_rows} rows")
    typer.echo(f"{path}: {table.num_rows} rows valid")
