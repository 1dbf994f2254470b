"""DVC stage `export`: data/eval/trials.parquet + data/splits/ → data/export/
(sft/ and rl/, each with train and test splits, and summary.json)."""

from pathlib import Path

from oracleproto.config import load_params
from oracleproto.export.trajectories import export_settings, run_export
from oracleproto.stages import run_stage

TRIALS = Path("data/eval/trials.parquet")
SPLITS = Path("data/splits")
OUT = Path("data/export")


def main() -> None:
    run_export(TRIALS, SPLITS, OUT, export_settings(load_params()))


if __name__ == "__main__":
    run_stage(main)
