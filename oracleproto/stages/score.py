"""DVC stage `score`: data/eval/trials.parquet → metrics/ (summary.json is the metrics file)."""

from pathlib import Path

from oracleproto.params import load_params, section
from oracleproto.scoring.scorer import options_from_params, score_file, write_outputs
from oracleproto.stages import run_stage

TRIALS = Path("data") / "eval" / "trials.parquet"
OUT = Path("metrics")


def main() -> None:
    options = options_from_params(section(load_params(), "score"))
    write_outputs(score_file(TRIALS, **options), OUT)


if __name__ == "__main__":
    run_stage(main)
