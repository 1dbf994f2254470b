"""DVC stage `score`: data/eval/trials.parquet → metrics/ (summary.json is the metrics file)."""

import sys
from pathlib import Path

from oracleproto.io import SourceReadError
from oracleproto.metrics.scorer import options_from_params, score_file, write_outputs
from oracleproto.metrics.validate import TrialTableError
from oracleproto.params import ParamsError, load_params, section

TRIALS = Path("data") / "eval" / "trials.parquet"
OUT = Path("metrics")


def main() -> None:
    options = options_from_params(section(load_params(), "score"))
    write_outputs(score_file(TRIALS, **options), OUT)


if __name__ == "__main__":
    try:
        main()
    except (SourceReadError, TrialTableError, ParamsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
