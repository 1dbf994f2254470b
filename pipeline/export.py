"""DVC stage `export`: data/eval/trials.parquet + data/splits/ → data/export/
(sft.parquet, sft_openai.jsonl, rl.parquet, summary.json)."""

import sys
from pathlib import Path

from oracleproto.export import ExportError, export_settings, run_export
from oracleproto.params import load_params
from pipeline import run_stage

TRIALS = Path("data/eval/trials.parquet")
SPLITS = Path("data/splits")
OUT = Path("data/export")


def main() -> None:
    try:
        run_export(TRIALS, SPLITS, OUT, export_settings(load_params()))
    except ExportError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    run_stage(main)
