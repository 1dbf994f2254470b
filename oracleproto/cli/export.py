"""``oracleproto export``: SFT trajectories and RL prompts from an evaluation run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, fail, from_params
from oracleproto.config import load_params
from oracleproto.errors import OracleProtoError


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto export --trials data/eval/trials.parquet --splits data/splits --out data/export\n\n"
        "  oracleproto export --trials run/trials.parquet --splits out/splits --out sft/ --mode best_of_n"
    )
)
def export(
    trials: Path = typer.Option(..., help="Trial table written by the evaluation (trials.parquet)."),
    splits: Path = typer.Option(..., help="Split sets of the admit stage: a folder of cutoff-YYYY-MM-DD/{train,test}.parquet."),
    out: Path = typer.Option(..., help="Output folder: sft.parquet, sft_openai.jsonl, rl.parquet, summary.json."),
    mode: Optional[str] = typer.Option(None, help=from_params("SFT trial selection: correct | all | best_of_n.", "export.sft_mode")),
    rl_split: Optional[str] = typer.Option(None, help=from_params("Split whose questions become RL prompts: train | test.", "export.rl_split")),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP + " Its evaluate section gives the budgets the prompts state."),
) -> None:
    """Export SFT traces (TRL conversational parquet + OpenAI fine-tuning JSONL, trials that
    parsed and scored 1 by default) and RL prompts (verl / TRL GRPO parquet, one row per
    admissible train question per cutoff, prompts rendered exactly as the evaluator renders them)."""
    from oracleproto.export.trajectories import export_settings, run_export  # heavy: only when exporting

    try:
        config = load_params(params).overridden({"export": {"sft_mode": mode, "rl_split": rl_split}})
        summary = run_export(trials, splits, out, export_settings(config))
    except OracleProtoError as exc:
        fail(str(exc))
        return
    sft, rl = summary["sft"], summary["rl"]
    skipped = ", ".join(f"{n} {reason}" for reason, n in sft["skipped"].items()) or "none"
    typer.echo(
        f"sft ({sft['mode']}): {sft['rows']} rows from {sft['trials']} trials "
        f"({sft['parsed_with_trace']} parsed with a trace; skipped: {skipped})"
    )
    typer.echo(f"rl ({rl['split']}): {rl['rows']} rows over {len(rl['rows_by_cutoff'])} cutoffs")
    typer.echo(f"wrote {out}/sft.parquet, sft_openai.jsonl, rl.parquet, summary.json")
