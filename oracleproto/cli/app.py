"""The typer application every verb module registers its command on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="oracleproto",
    help=(
        "Leakage-controlled LLM forecasting data.\n\n"
        "Build the audited question corpus and per-cutoff splits, evaluate models in the\n"
        "time-masked ReAct loop, score, export trajectories and publish a HF dataset repo.\n\n"
        "Examples:\n\n"
        "  oracleproto build --source sample --out out/\n\n"
        "  oracleproto validate out/questions.parquet\n\n"
        "  oracleproto score --trials data/eval/trials.parquet --out metrics/"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def fail(message: str, code: int = 1) -> None:
    """Print one clear error line to stderr and exit non-zero."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
