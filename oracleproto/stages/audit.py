"""DVC stage `audit`: data/raw/ → data/questions.parquet + data/audit/."""

from pathlib import Path

from oracleproto.corpus.build import audit_params, run_audit
from oracleproto.params import load_params
from oracleproto.stages import run_stage


def main() -> None:
    run_audit(Path("data"), audit_params(load_params()), Path("data"))


if __name__ == "__main__":
    run_stage(main)
