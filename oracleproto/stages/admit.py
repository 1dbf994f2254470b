"""DVC stage `admit`: data/questions.parquet → data/splits/ (one split set per cutoff)."""

from pathlib import Path

from oracleproto.corpus.build import QUESTIONS, run_admit
from oracleproto.params import load_params, section
from oracleproto.stages import run_stage


def main() -> None:
    run_admit(Path("data") / QUESTIONS, section(load_params(), "admit"), Path("data"))


if __name__ == "__main__":
    run_stage(main)
