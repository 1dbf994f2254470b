"""Benchmark: export (SFT + OpenAI JSONL + RL) and publish (hub folder) at a realistic size,
then load every config offline, check determinism and the reward/scorer parity.

    python bench/export_publish.py [--models 8] [--trials 5] [--out /tmp/oracleproto-bench]

The corpus is the committed sample (data/sample) built with the repo's params.yaml; the
trial table is synthetic but shaped like the evaluator's (two searches of five results per
trial, seeded answers), written with TRIAL_SCHEMA.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from oracleproto.config import Publish, load_params  # noqa: E402
from oracleproto.corpus.build import build as build_corpus  # noqa: E402
from oracleproto.exam import exam_scores  # noqa: E402
from oracleproto.export.rewards import compute_score  # noqa: E402
from oracleproto.export.trajectories import ExportSettings, run_export  # noqa: E402
from oracleproto.io import read_parquet, write_json, write_parquet  # noqa: E402
from oracleproto.layout import SPLITS, sft_file, sft_openai_file
from oracleproto.letters import letters  # noqa: E402
from oracleproto.parse import parse_answer  # noqa: E402
from oracleproto.schema import TRIAL_SCHEMA  # noqa: E402
from oracleproto.stages.publish import Layout  # noqa: E402
from oracleproto.stages.publish import build as build_hub


def boxed(question: dict, rng: random.Random) -> str:
    k = len(question["options"])
    if question["question_type"] == "yes_no":
        return rng.choice(["Yes", "No", "yes?"])
    if question["question_type"] == "binary_named":
        return rng.choice(question["options"] + ["A"])
    if question["choice_type"] == "single":
        return rng.choice(letters(k))
    return ", ".join(sorted(rng.sample(letters(k), rng.randint(1, min(3, k)))))


def trial_rows(questions: list[dict], n_models: int, n_trials: int) -> list[dict]:
    rng = random.Random(0)
    tool = {"type": "function", "function": {"name": "web_search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
    rows = []
    for m in range(n_models):
        model = f"vendor/model-{m}"
        for q in questions:
            for t in range(1, n_trials + 1):
                raw = f"Weighing it up. \\boxed{{{boxed(q, rng)}}}"
                messages = [{"role": "user", "content": f"Forecast: {q['event']}"}]
                for s in range(2):
                    call = {"id": f"call_{s}", "type": "function", "function": {"name": "web_search", "arguments": json.dumps({"query": f"{q['event'][:30]} {s}"})}}
                    results = [{"title": f"Doc {i}", "url": f"https://news.example/{q['id']}/{s}/{i}", "content": "x" * 400} for i in range(5)]
                    messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                                 {"role": "tool", "tool_call_id": call["id"], "name": "web_search", "content": json.dumps({"results": results})}]
                messages.append({"role": "assistant", "content": raw})
                row = {name: None for name in TRIAL_SCHEMA.names}
                row.update(
                    model=model, q_id=q["id"], question_type=q["question_type"], choice_type=q["choice_type"],
                    options=q["options"], answer=q["answer"], trial=t, cost_usd=0.0, raw_output=raw,
                    pred=parse_answer(raw, q["question_type"], q["options"], q["choice_type"]),
                    end_time=q["end_time"], messages=json.dumps(messages), tools=json.dumps([tool]),
                    search_calls=json.dumps([{"query": "q", "detector_verdicts": ["keep"] * 5}] * 2),
                )
                rows.append(row)
    return rows


def timed(label: str, fn):
    start = time.perf_counter()
    value = fn()
    print(f"{label}: {time.perf_counter() - start:.2f} s")
    return value


def run(out: Path, n_models: int, n_trials: int) -> str:
    if out.exists():
        shutil.rmtree(out)
    data = out / "data"
    with contextlib.chdir(ROOT):
        build_corpus(load_params(ROOT / "params.yaml"), data)
    questions = read_parquet(data / "questions.parquet").to_pylist()
    rows = trial_rows(questions, n_models, n_trials)
    trials = pa.Table.from_pylist(rows, schema=TRIAL_SCHEMA)
    write_parquet(trials, data / "eval" / "trials.parquet", TRIAL_SCHEMA, sort_by=("model", "q_id", "trial"))
    write_json({"hash_chain": {"config_snapshot_hash": "0" * 64}}, data / "eval" / "manifest.json")
    print(f"trials: {trials.num_rows} ({(data / 'eval' / 'trials.parquet').stat().st_size / 1e6:.1f} MB parquet)")

    summary = timed("export (select + sft + openai jsonl + rl)", lambda: run_export(
        data / "eval" / "trials.parquet", data / "splits", data / "export", ExportSettings(sft_mode="correct")))
    sft_mb = sum((data / "export" / sft_file(s)).stat().st_size for s in SPLITS) / 1e6
    jsonl_mb = sum((data / "export" / sft_openai_file(s)).stat().st_size for s in SPLITS) / 1e6
    print(f"  sft rows {summary['sft']['train_rows']} + {summary['sft']['test_rows']}, "
          f"rl rows {summary['rl']['train_rows']} + {summary['rl']['test_rows']}; "
          f"sft parquet {sft_mb:.2f} MB, openai jsonl {jsonl_mb:.2f} MB")
    layout = Layout(data=data, metrics=out / "metrics", cards=ROOT / "cards", hub=out / "hub")
    listing = timed("publish (hub folder + card)", lambda: build_hub(layout, Publish()))
    print(f"  hub: {len(listing)} files, {sum(f.size for f in listing) / 1e6:.2f} MB")

    def parity():
        rewards = [
            compute_score("b", r["raw_output"], r["answer"], {"question_type": r["question_type"], "options": r["options"], "choice_type": r["choice_type"]})
            for r in rows
        ]
        return sum(a != b for a, b in zip(rewards, exam_scores(trials["pred"], trials["answer"]).tolist()))

    mismatches = timed(f"reward (compute_score) on all {len(rows)} trials", parity)
    print(f"  reward != scorer exam score on {mismatches} trial(s)")

    def load_all():
        import datasets

        total = 0
        for config in datasets.get_dataset_config_names(str(layout.hub)):
            for split in datasets.get_dataset_split_names(str(layout.hub), config):
                total += datasets.load_dataset(str(layout.hub), config, split=split).num_rows
        return total

    rows_loaded = timed("load_dataset of every config/split (offline, cold cache)", load_all)
    print(f"  rows loaded {rows_loaded}")
    from oracleproto.publish.hub import hub_digest

    return hub_digest(listing)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("/tmp/oracleproto-bench"))
    args = parser.parse_args()
    os.environ.setdefault("HF_HOME", str(args.out / "hf"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    first = run(args.out / "a", args.models, args.trials)
    second = run(args.out / "b", args.models, args.trials)
    print(f"hub digest run 1 {first}\nhub digest run 2 {second}\nidentical: {first == second}")


if __name__ == "__main__":
    main()
