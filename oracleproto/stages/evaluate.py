"""DVC stage `evaluate`: data/splits/ → data/eval/trials.parquet + data/eval/manifest.json.

The run state (per-model stores, call cache, log) lives in runs/evaluate/<run key>/, so a
crashed or interrupted stage resumes when re-run with the same params. On success the two
artifacts are copied into data/eval/ and the resume state is pruned (the call cache of
model calls is kept, so a forced re-run replays instead of paying again).
"""

import shutil
from pathlib import Path

from oracleproto.config import load_params
from oracleproto.harness.evaluate import evaluate
from oracleproto.harness.plan import (
    MANIFEST_FILE,
    TRIALS_FILE,
    plan_evaluation,
    prune_run_dir,
    run_dir_for,
)
from oracleproto.io import atomic_path
from oracleproto.stages import run_stage

SPLITS = Path("data/splits")
OUT = Path("data/eval")
RUNS = Path("runs/evaluate")


def main() -> None:
    settings, jobs = plan_evaluation(load_params(), SPLITS)
    run_dir = run_dir_for(jobs, settings, RUNS)
    summary = evaluate(jobs, settings, run_dir)
    for name in (TRIALS_FILE, MANIFEST_FILE):
        with atomic_path(OUT / name) as tmp:
            shutil.copyfile(run_dir / name, tmp)
    prune_run_dir(run_dir)
    print(summary.line())


if __name__ == "__main__":
    run_stage(main)
