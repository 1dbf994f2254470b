"""DVC stage `ingest`: the source named in params → data/raw/."""

from pathlib import Path

from oracleproto.corpus.build import ingest
from oracleproto.params import load_params, section
from oracleproto.stages import run_stage


def main() -> None:
    params = section(load_params(), "ingest")
    ingest(params.get("source") or "sample", params, Path("data"))


if __name__ == "__main__":
    run_stage(main)
