"""DVC stage `score`: data/eval/trials.parquet → metrics/ (summary.json is the metrics file)."""

from pathlib import Path

from oracleproto.config import load_params
from oracleproto.scoring.scorer import score_file, write_outputs
from oracleproto.stages import run_stage

TRIALS = Path("data") / "eval" / "trials.parquet"
OUT = Path("metrics")


def main() -> None:
    params = load_params()
    write_outputs(score_file(TRIALS, params.score, params.audit), OUT)


if __name__ == "__main__":
    run_stage(main)
