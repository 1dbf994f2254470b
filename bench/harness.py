"""Harness benchmark: throughput against the ideal and harness CPU per trial.

Setup: the loopback OpenAI-compatible server runs in its own process with a fixed reply
latency (default 50 ms); every trial makes 2 web_search calls (an in-process backend that
answers at once, so only the harness is measured) and then answers, i.e. 3 model calls per
trial; the main-LLM channel has concurrency 5; the call cache records (the default mode).

Ideal throughput = concurrency / (calls per trial × latency): the model channel never idles.
Harness CPU per trial = CPU time (user + sys) of this process during the evaluation,
divided by the number of trials; the server's CPU is in the other process. A small
warm-up evaluation runs first so one-off costs (imports) are not counted per trial; the
measured evaluation still includes its own setup, plan, stores, export and manifest.

    python bench/harness.py                       # 100 questions × 3 trials
    python bench/harness.py --questions 40 --latency 0.05 --concurrency 5 --cache off
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from oracleproto.agent.settings import Budgets, Concurrency, EvalSettings, ModelSpec  # noqa: E402
from oracleproto.evaluate import EvalJob, QuestionSet, evaluate_async  # noqa: E402
from oracleproto.io import write_parquet  # noqa: E402
from oracleproto.schema import QUESTION_SCHEMA  # noqa: E402
from tests.agent.fakes import FakeSearch  # noqa: E402
from tests.test_evaluate_run import make_questions  # noqa: E402

SEARCHES = 2


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.servers.openai_server", "--latency", str(latency), "--searches", str(SEARCHES)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    match = re.match(r"PORT (\d+)", line)
    if not match:
        process.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return process, f"http://127.0.0.1:{match.group(1)}"


def evaluate_once(tmp: Path, name: str, n_questions: int, trials: int, base_url: str, concurrency: int, cache: str):
    questions = tmp / f"{name}.parquet"
    write_parquet(make_questions(n_questions, dt.date(2026, 3, 12)), questions, QUESTION_SCHEMA, sort_by=("id",))
    job = EvalJob(ModelSpec(label="bench/model", slug="bench/model", cutoff=dt.date(2025, 1, 31)), QuestionSet.load(questions))
    settings = EvalSettings(
        budgets=Budgets(trials=trials, max_search_calls=4),
        concurrency=Concurrency(llm=concurrency),
        search_backend="archive",
        archive_path="unused",
        detector="off",
        cache_mode=cache,
    )
    env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-bench-0123456789abcdef"}
    times0, wall0 = os.times(), time.perf_counter()
    summary = asyncio.run(evaluate_async([job], settings, tmp / name, env=env, search_factory=lambda c, s, e: FakeSearch()))
    times1 = os.times()
    return summary, time.perf_counter() - wall0, (times1.user - times0.user, times1.system - times0.system)


def run(n_questions: int, trials: int, latency: float, concurrency: int, cache: str) -> dict[str, float]:
    server, base_url = start_server(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up: module imports and first-use costs are paid once per process, not per trial
            evaluate_once(Path(tmp), "warmup", 4, 1, base_url, concurrency, cache)
            summary, wall, (user, system) = evaluate_once(Path(tmp), "run", n_questions, trials, base_url, concurrency, cache)
    finally:
        server.kill()
        server.wait()
    n = summary.rows
    if summary.errors or summary.parsed != n:
        raise RuntimeError(f"benchmark run was not clean: {summary.line()}")
    calls_per_trial = SEARCHES + 1
    ideal = concurrency / (calls_per_trial * latency)
    return {
        "trials": n,
        "wall_s": wall,
        "throughput": n / wall,
        "ideal": ideal,
        "ratio": (n / wall) / ideal,
        "cpu_ms_per_trial": 1000 * (user + system) / n,
        "user_ms_per_trial": 1000 * user / n,
        "sys_ms_per_trial": 1000 * system / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--cache", default="record", choices=("record", "off"))
    args = parser.parse_args()
    result = run(args.questions, args.trials, args.latency, args.concurrency, args.cache)
    print(
        f"{result['trials']} trials in {result['wall_s']:.2f} s: {result['throughput']:.2f} trials/s "
        f"(ideal {result['ideal']:.2f}, {100 * result['ratio']:.1f} %), "
        f"harness CPU {result['cpu_ms_per_trial']:.2f} ms/trial "
        f"(user {result['user_ms_per_trial']:.2f} + sys {result['sys_ms_per_trial']:.2f}) "
        f"[latency {args.latency * 1000:.0f} ms, {SEARCHES} searches/trial, concurrency {args.concurrency}, "
        f"cache {args.cache}, {os.cpu_count()} cores]"
    )


if __name__ == "__main__":
    main()
