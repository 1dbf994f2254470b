"""DVC stage `audit`: data/raw/ → data/questions.parquet + data/audit/."""

from pathlib import Path

from oracleproto.config import load_params
from oracleproto.corpus.build import audit_config, run_audit
from oracleproto.stages import run_stage


def main() -> None:
    run_audit(Path("data"), audit_config(load_params()), Path("data"))


if __name__ == "__main__":
    run_stage(main)
