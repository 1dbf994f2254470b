"""DVC stage `admit`: data/questions.parquet → data/splits/ (one split set per cutoff)."""

from pathlib import Path

from oracleproto.build import QUESTIONS, run_admit
from oracleproto.params import load_params, section
from pipeline import run_stage


def main() -> None:
    run_admit(Path("data") / QUESTIONS, section(load_params(), "admit"), Path("data"))


if __name__ == "__main__":
    run_stage(main)
