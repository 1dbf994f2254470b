"""DVC stage `ingest`: the source named in params → data/raw/."""

from pathlib import Path

from oracleproto.config import load_params
from oracleproto.corpus.build import ingest
from oracleproto.stages import run_stage


def main() -> None:
    ingest(load_params().ingest, Path("data"))


if __name__ == "__main__":
    run_stage(main, batched=True)  # the source is converted batch by batch
