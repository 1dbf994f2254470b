"""``oracleproto leak-audit sample|report|bench`` and ``oracleproto probe``: leakage measured."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import app, fail, user_errors

leak_audit = typer.Typer(
    name="leak-audit",
    help=(
        "Measure how much leakage gets through: sample a run's search results by layer into a\n"
        "label sheet, report leak rates with Wilson intervals from the labelled sheet, and\n"
        "bench a detector layer on the shipped labelled set.\n\n"
        "Examples:\n\n"
        "  oracleproto leak-audit sample --run runs/gpt41 --per-layer 40 --seed 0 --out audit/sheet.csv\n\n"
        "  oracleproto leak-audit report --sheet audit/sheet.csv --out audit/\n\n"
        "  oracleproto leak-audit bench --set data/leak_audit/audit_set.jsonl --detector heuristic"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(leak_audit, name="leak-audit")


@leak_audit.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto leak-audit sample --run runs/gpt41 --per-layer 40 --seed 0 --out audit/sheet.csv\n\n"
        "  oracleproto leak-audit sample --run data/eval --per-layer 100 --seed 7 --out sheet.csv   # bigger sample, other draw\n\n"
        "Layers: dropped_by_date_filter (published after χ, undated, or masked by the archive), dropped_by_heuristic "
        "(a date after χ in the text), dropped_by_detector (the LLM detector said drop or failed), shown_to_model. "
        "Fill the label column with leak, clean or unsure (a document leaks iff it states or implies an outcome or "
        "event after χ, scheduled and speculated ones included); the gold answer is never in the sheet."
    )
)
def sample(
    run: Path = typer.Option(..., help="Run folder written by `oracleproto evaluate --out` (its trials.parquet)."),
    per_layer: int = typer.Option(..., min=1, help="Results drawn per layer (all of a layer when it has fewer)."),
    seed: int = typer.Option(0, help="Seed of the draw: the same run, seed and size give the same sheet."),
    out: Path = typer.Option(..., help="Label sheet to write (.csv)."),
) -> None:
    """Draw a seeded sample of RUN's search results, stratified by layer, into a label sheet."""
    from oracleproto.leakaudit.sample import write_sheet

    with user_errors():
        counts = write_sheet(run, per_layer, seed, out)
    for layer, (sampled, population) in counts.items():
        typer.echo(f"{layer}: {sampled} of {population}")
    typer.echo(f"wrote {sum(s for s, _ in counts.values())} rows to {out}; fill the label column (leak | clean | unsure)")


@leak_audit.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto leak-audit report --sheet audit/sheet.csv --out audit/\n\n"
        "  oracleproto leak-audit report --sheet audit/sheet.csv --run runs/gpt41 --out audit/   # also re-draw from the run and compare\n\n"
        "A sheet whose rows no longer hash to its audit_hash column (rows added, removed or moved between layers) is refused."
    )
)
def report(
    sheet: Path = typer.Option(..., help="Label sheet written by `leak-audit sample`, with its label column filled."),
    out: Path = typer.Option(..., help="Folder for report.json and report.md."),
    run: Optional[Path] = typer.Option(None, help="The run the sheet was drawn from: check the sheet is exactly its sample."),
) -> None:
    """Leak rate per layer, residual leak rate on shown_to_model, each filter's precision and recall."""
    from oracleproto.leakaudit.report import (
        build_report,
        leak_audit_text,
        write_report,
    )

    with user_errors():
        result = build_report(sheet, run)
        write_report(result, out)
    typer.echo(leak_audit_text(result).replace("**", ""))
    typer.echo(f"wrote {out}/report.json and {out}/report.md")


@leak_audit.command(
    name="bench",
    epilog=(
        "Examples:\n\n"
        "  oracleproto leak-audit bench --set data/leak_audit/audit_set.jsonl --detector heuristic\n\n"
        "  DETECTOR_BASE_URL=https://openrouter.ai/api/v1 DETECTOR_API_KEY=... DETECTOR_MODEL=qwen/qwen3.5-flash \\\n"
        "    oracleproto leak-audit bench --set data/leak_audit/audit_set.jsonl --detector llm --cache bench/detector-calls.sqlite\n\n"
        "  oracleproto leak-audit bench --set data/leak_audit/audit_set.jsonl --detector llm --cache bench/detector-calls.sqlite "
        "--cache-mode replay --detector-model qwen/qwen3.5-flash   # offline, no key: the recorded figure again\n\n"
        "  oracleproto leak-audit bench --set data/leak_audit/audit_set.jsonl --detector heuristic+llm --cache c.sqlite --out bench/   # the pipeline of detector mode llm"
    ),
)
def bench_command(
    set_path: Path = typer.Option(..., "--set", help="Labelled set of (document, χ) pairs (.jsonl), e.g. data/leak_audit/audit_set.jsonl."),
    detector: str = typer.Option(..., help="Layer to score: heuristic | llm | heuristic+llm."),
    cache: Optional[Path] = typer.Option(None, help="Call cache of the LLM detector's verdicts (needed for llm layers)."),
    cache_mode: str = typer.Option("record", help="record (call what is not cached) | replay (offline, no key) | off."),
    detector_model: Optional[str] = typer.Option(None, help="Detector model (default: DETECTOR_MODEL)."),
    undated: str = typer.Option("drop", help="What the heuristic does with an undated page: drop | keep."),
    out: Optional[Path] = typer.Option(None, help="Folder for bench.json and bench.md."),
) -> None:
    """Precision, recall and residual leak rate (Wilson 95 %) of a detector layer on a labelled set."""
    from oracleproto.errors import OracleProtoError
    from oracleproto.io import write_json, write_text
    from oracleproto.leakaudit.bench import bench, bench_lines, bench_markdown

    try:
        result = bench(set_path, detector, undated=undated, cache_path=cache, cache_mode=cache_mode, detector_model=detector_model)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            write_json(result, out / "bench.json")
            write_text(bench_markdown(result), out / "bench.md")
    except (OracleProtoError, ValueError) as exc:
        fail(str(exc))
        return
    typer.echo("\n".join(bench_lines(result)))


@app.command(
    epilog=(
        "Examples:\n\n"
        "  OPENAI_BASE_URL=https://openrouter.ai/api/v1 OPENAI_API_KEY=... oracleproto probe --model openai/gpt-4.1 "
        "--questions data/questions.parquet --cutoff 2024-06 --out probes/gpt41\n\n"
        "  oracleproto probe --model openai/gpt-4.1 --questions data/questions.parquet --out probes/gpt41 "
        "--cache replay            # offline, no key: the recorded answers again\n\n"
        "  oracleproto probe --model baseline:uniform --questions data/questions.parquet --cutoff 2024-12 --out probes/chance"
        "   # a chance forecaster: not flagged\n\n"
        "The disclosed cutoff comes from --cutoff, else from params admit.models. Writes OUT/report.json, OUT/report.md, "
        "OUT/accuracy_by_month.svg and the closed-book run in OUT/run (resumable; calls in OUT/run/calls.sqlite)."
    )
)
def probe(
    model: str = typer.Option(..., help="Model slug (an API model via OPENAI_BASE_URL / OPENAI_API_KEY, or baseline:… / scripted:…)."),
    questions: Path = typer.Option(..., help="Resolved questions (.parquet or .jsonl, seven columns) on both sides of the cutoff."),
    out: Path = typer.Option(..., help="Output folder."),
    cutoff: Optional[str] = typer.Option(None, help="Disclosed knowledge cutoff κ, YYYY-MM-DD or YYYY-MM (default: params admit.models)."),
    trials: int = typer.Option(1, min=1, help="Closed-book trials per question."),
    cache: str = typer.Option("record", help="Call cache: record | replay (offline, no key) | off."),
    cache_file: Optional[Path] = typer.Option(None, help="Call cache file (default OUT/run/calls.sqlite)."),
    seed: int = typer.Option(0, help="Seed (baseline:uniform's draws)."),
    params: Optional[Path] = typer.Option(None, help="Params file for the model's cutoff under models (default: ./params.yaml if present)."),
) -> None:
    """Closed-book forecasts around MODEL's disclosed cutoff: accuracy by month, effective cutoff, flag."""
    from oracleproto.config import load_params
    from oracleproto.errors import ConfigError
    from oracleproto.leakaudit.probe import run_probe

    with user_errors():
        entry = load_params(params).models.get(model)
        disclosed = cutoff or (entry.cutoff if entry is not None else None)
        if disclosed is None:
            raise ConfigError(f"model {model!r} has no disclosed cutoff: give --cutoff or list it under models in params")
        report = run_probe(model, questions, disclosed, out, trials=trials, cache_mode=cache, cache_path=cache_file, seed=seed)
    typer.echo(
        f"{model}: disclosed cutoff {report['disclosed_cutoff']}, change point {report['change_point_month'] or 'none'}, "
        f"effective cutoff {report['effective_cutoff'] or 'none detected'}; {'FLAGGED' if report['flagged'] else 'not flagged'}"
    )
    typer.echo(f"wrote {out}/report.json, {out}/report.md and {out}/accuracy_by_month.svg")
