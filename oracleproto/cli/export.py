"""``oracleproto export``: SFT trajectories and RL prompts from an evaluation run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, from_params, user_errors
from oracleproto.config import load_params


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
    out: Path = typer.Option(..., help="Output folder: sft/ and rl/ ({train,test}.parquet, and sft/*_openai.jsonl), summary.json."),
    mode: Optional[str] = typer.Option(None, help=from_params("SFT trial selection: correct | all | best_of_n.", "export.sft_mode")),
    violations: Optional[str] = typer.Option(
        None, help=from_params("Trials whose tool calls broke the schema: flag (export, canonical arguments) | drop.", "export.sft_violations")
    ),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP + " Its evaluate section gives the budgets the prompts state."),
) -> None:
    """Export SFT traces (TRL conversational parquet + OpenAI fine-tuning JSONL, trials that
    parsed and scored 1 by default) and RL prompts (verl / TRL GRPO parquet, one row per
    admitted question per cutoff, prompts rendered exactly as the evaluator renders them), each
    with the corpus' train and test splits."""
    from oracleproto.export.trajectories import (  # heavy: only when exporting
        export_settings,
        run_export,
    )

    with user_errors():
        config = load_params(params).overridden({"export": {"sft_mode": mode, "sft_violations": violations}})
        summary = run_export(trials, splits, out, export_settings(config))
    sft, rl = summary["sft"], summary["rl"]
    skipped = ", ".join(f"{n} {reason}" for reason, n in sft["skipped"].items()) or "none"
    typer.echo(
        f"sft ({sft['mode']}): {sft['train_rows']} train + {sft['test_rows']} test rows from {sft['trials']} trials "
        f"({sft['parsed_with_trace']} parsed with a trace; {sft['flagged']} flagged; skipped: {skipped})"
    )
    cutoffs = len({c for part in rl["rows_by_cutoff"].values() for c in part})
    tools = "with the web_search tool" if rl["tools"] else "closed-book"
    typer.echo(f"rl ({tools}): {rl['train_rows']} train + {rl['test_rows']} test rows over {cutoffs} cutoffs")
    typer.echo(f"wrote {out}/sft/ and {out}/rl/ (train and test splits) and {out}/summary.json")
