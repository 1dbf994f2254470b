"""The typer application every verb module registers its command on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer

from oracleproto.config import default_of
from oracleproto.errors import OracleProtoError

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


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """The one place a verb's known failures become ``error: …`` and the error's exit code."""
    try:
        yield
    except OracleProtoError as exc:
        fail(str(exc), exc.exit_code)


PARAMS_HELP = "Params file (default: ./params.yaml if present, else the defaults of oracleproto/config.py)."


def from_params(text: str, key: str) -> str:
    """Help of a flag that overrides the params key ``key``: its default is the params value."""
    return f"{text} [params: {key}, default {_flag_text(default_of(key))}]"


def _flag_text(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{name}={weight}" for name, weight in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
