"""Benchmark of `oracleproto score` on a synthetic trial table.

Default: 10 models × 33,334 questions × 3 trials = 1,000,020 trials, all four strata
(yes_no, binary_named, MC single and multi with 3–14 options), 5 % parse failures,
2 % call errors, 1 % cutoff skips. The table is generated (seeded) into a temp dir, then
`python -m oracleproto score` runs in a child process; wall time and the child's peak RSS
are reported, plus an in-process breakdown of the stages.

    python bench/score.py                      # statistics off (--bootstrap 0)
    python bench/score.py --bootstrap 5000     # intervals and all 45 pairs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from oracleproto.lettersets import format_letter_set  # noqa: E402


def synthetic_trials(n_models: int, n_questions: int, n_trials: int, seed: int = 0, beliefs: bool = False) -> pa.Table:
    rng = np.random.default_rng(seed)
    stratum = rng.choice(4, size=n_questions, p=[0.4, 0.1, 0.35, 0.15])  # yes_no, binary, mc single, mc multi
    k = np.where(stratum < 2, 2, rng.integers(3, 15, size=n_questions))
    full = (np.uint64(1) << k.astype(np.uint64)) - np.uint64(1)
    single_gold = np.uint64(1) << rng.integers(0, k).astype(np.uint64)
    multi_gold = rng.integers(0, 2**14, size=n_questions, dtype=np.uint64) & full
    multi_gold = np.where(np.bitwise_count(multi_gold) >= 2, multi_gold, np.uint64(3))  # A, B when too few letters
    gold = np.where(stratum == 3, multi_gold, single_gold)
    qtype = np.array(["yes_no", "binary_named", "multiple_choice", "multiple_choice"], dtype=object)[stratum]
    ctype = np.where(stratum == 3, "multi", "single").astype(object)
    labels = [f"option {i}" for i in range(14)]
    options = pa.array([["Yes", "No"] if s == 0 else labels[:kk] for s, kk in zip(stratum, k)], pa.list_(pa.string()))
    q_ids = np.array([f"q{i:06d}" for i in range(n_questions)], dtype=object)

    n = n_models * n_questions * n_trials
    model = np.repeat(np.arange(n_models), n_questions * n_trials)
    question = np.tile(np.repeat(np.arange(n_questions), n_trials), n_models)
    trial = np.tile(np.arange(1, n_trials + 1), n_models * n_questions)
    skill = 0.45 + 0.02 * model  # models differ a little
    right = rng.random(n) < skill
    random_single = np.uint64(1) << rng.integers(0, k[question]).astype(np.uint64)
    random_multi = rng.integers(1, 2**14, size=n, dtype=np.uint64) & full[question]
    random_multi = np.where(random_multi == 0, np.uint64(1), random_multi)
    guess = np.where(stratum[question] == 3, random_multi, random_single)
    pred_mask = np.where(right, gold[question], guess)
    roll = rng.random(n)
    cutoff, call_error, parse_failure = roll < 0.01, (roll >= 0.01) & (roll < 0.03), (roll >= 0.03) & (roll < 0.08)
    distinct, inverse = np.unique(pred_mask, return_inverse=True)
    pred_text = pa.array([format_letter_set(int(m)) for m in distinct], pa.string()).take(pa.array(inverse.ravel()))
    pred = pa.array(np.where(cutoff | call_error | parse_failure, None, pred_text.to_numpy(zero_copy_only=False)), pa.string())
    error = np.full(n, None, dtype=object)
    error[cutoff] = "skipped_training_cutoff"
    error[call_error] = rng.choice(["network", "rate_limit", "server_5xx"], size=int(call_error.sum()))
    gold_text = np.array([format_letter_set(int(m)) for m in gold], dtype=object)
    columns = {
        "model": pa.array(np.array([f"model-{m:02d}" for m in range(n_models)], dtype=object)[model], pa.string()),
        "q_id": pa.array(q_ids[question], pa.string()),
        "question_type": pa.array(qtype[question], pa.string()),
        "choice_type": pa.array(ctype[question], pa.string()),
        "options": options.take(pa.array(question)),
        "answer": pa.array(gold_text[question], pa.string()),
        "trial": pa.array(trial, pa.int64()),
        "pred": pred,
        "error": pa.array(error, pa.string()),
        "cost_usd": pa.array(np.where(cutoff, 0.0, rng.random(n) * 0.002), pa.float64()),
    }
    return pa.table(columns)


def run_cli(trials: Path, out: Path, bootstrap: int) -> dict:
    command = [sys.executable, "-m", "oracleproto", "score", "--trials", str(trials), "--out", str(out), "--bootstrap", str(bootstrap)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "cli_wall_s": round(wall, 2),
        "cli_cpu_s": round(cpu, 2),  # user + sys of the child: wall is inflated when other jobs share the cores
        "cli_peak_rss_mib": round(after.ru_maxrss / 1024, 1),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }


def in_process_breakdown(trials: Path, out: Path, bootstrap: int) -> dict:
    from oracleproto.config import Score
    from oracleproto.scoring.prepare import prepare
    from oracleproto.scoring.probabilistic import belief_stats
    from oracleproto.scoring.registry import ScoreContext, compute_all
    from oracleproto.scoring.scorer import ScoreResult, read_trials, write_outputs
    from oracleproto.scoring.statistics import bootstrap as run_bootstrap
    from oracleproto.scoring.validate import validate_trials

    times = {}
    t = time.perf_counter()
    table = read_trials(trials)
    times["read_s"] = time.perf_counter() - t
    t = time.perf_counter()
    table = validate_trials(table)
    times["validate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    data = prepare(table)
    context = ScoreContext(data, belief_stats(data, table, None), Score().weights)
    times["prepare_s"] = time.perf_counter() - t
    t = time.perf_counter()
    values = compute_all(context)
    times["metrics_s"] = time.perf_counter() - t
    t = time.perf_counter()
    statistics = run_bootstrap(context, bootstrap, 0)
    times["statistics_s"] = time.perf_counter() - t
    t = time.perf_counter()
    write_outputs(ScoreResult(context, values, statistics), out)
    times["write_s"] = time.perf_counter() - t
    return {name: round(value, 2) for name, value in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--questions", type=int, default=33_334)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--breakdown", action="store_true", help="also time the stages in-process")
    parser.add_argument(
        "--nested", action="store_true",
        help="model m drops the first m/20 of the questions (later cutoffs see fewer questions): pairs then differ in their shared sets",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trials.parquet"
        table = synthetic_trials(args.models, args.questions, args.trials)
        if args.nested:
            model_index = pa.compute.cast(pa.compute.utf8_slice_codeunits(table["model"], 6), pa.int64()).to_numpy()
            question_index = pa.compute.cast(pa.compute.utf8_slice_codeunits(table["q_id"], 1), pa.int64()).to_numpy()
            table = table.filter(pa.array(question_index >= model_index * (args.questions // 20)))
        pq.write_table(table, path)
        rows = pq.read_metadata(path).num_rows
        report = {"trials": rows, "models": args.models, "questions": args.questions, "nested": args.nested, "bootstrap": args.bootstrap, "cpus": os.cpu_count()}
        report.update(run_cli(path, Path(tmp) / "out", args.bootstrap))
        if args.breakdown:
            report.update(in_process_breakdown(path, Path(tmp) / "out2", args.bootstrap))
        print(json.dumps(report))


if __name__ == "__main__":
    main()
