"""DVC stage `admit`: data/questions.parquet → data/splits/ (one split set per cutoff)."""

from pathlib import Path

from oracleproto.config import load_params
from oracleproto.corpus.admit import admission_config
from oracleproto.corpus.build import QUESTIONS, run_admit
from oracleproto.stages import run_stage


def main() -> None:
    run_admit(Path("data") / QUESTIONS, admission_config(load_params()), Path("data"))


if __name__ == "__main__":
    run_stage(main)
