"""Benchmark: N synthetic FutureX raw rows through ingest → audit → admit for 6 cutoffs.

    python bench/corpus.py                 # 1,000,000 rows (the issue's target: ≤ 20 s, ≤ 1.5 GiB)
    python bench/corpus.py --rows 100000

The rows are generated first (not timed) into a parquet in FutureX-Past's raw layout: all four
strata, 3-14 options for multiple choice, 1 % malformed (unparseable prompts, ground truths out
of range or empty, conflicting duplicate ids, post-resolution wording). Each stage then runs in
a fresh child process, as `dvc repro` runs them; the figures are the sum of the stages' wall
times (imports included) and the largest stage's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracleproto.corpus.sources.futurex import render_prompt  # noqa: E402

CUTOFFS = {f"model-{i}": f"{2023 + i // 2}-{6 if i % 2 else 12:02d}" for i in range(6)}


def generate(n: int, path: Path, seed: int = 0) -> None:
    rng = random.Random(seed)
    ids, prompts, gts, ends, levels = [], [], [], [], []
    start = 19000  # days since epoch ≈ 2022-01-08
    for i in range(n):
        end = start + rng.randrange(1600)
        end_iso = time.strftime("%Y-%m-%d", time.gmtime(end * 86400))
        kind = i % 4
        if kind == 0:
            options, qtype, gt = ["Yes", "No"], "yes_no", [rng.choice(["Yes", "No"])]
        elif kind == 1:
            options, qtype, gt = [f"Team {i}", f"Club {i}"], "binary_named", [rng.choice("AB")]
        else:
            k = rng.randint(3, 14)
            options, qtype = [f"Option {j} for {i}" for j in range(k)], "multiple_choice"
            m = 1 if kind == 2 else rng.randint(1, k)
            gt = sorted(rng.sample([chr(65 + j) for j in range(k)], m))
        event = f"Will synthetic event {i} resolve as described by {end_iso}?"
        prompt = render_prompt(event, options, end_iso, qtype)
        qid = f"{i:024x}"
        roll = rng.random()
        if roll < 0.002:
            prompt = "corrupted prompt without the event block"
        elif roll < 0.004:
            gt = ["Z"] if qtype != "yes_no" else ["Maybe"]
        elif roll < 0.006:
            gt = []
        elif roll < 0.008:
            qid = f"{i - 1:024x}"  # collides with the previous row's id, different content
        elif roll < 0.010:
            prompt = render_prompt(f"The result was known: {event}", options, end_iso, qtype)
        ids.append(qid)
        prompts.append(prompt)
        gts.append(repr(gt))
        ends.append(end_iso)
        levels.append(1 if qtype != "multiple_choice" else 2)
    table = pa.table({"id": ids, "prompt": prompts, "ground_truth": gts, "end_time": ends, "level": levels})
    pq.write_table(table, path, row_group_size=200_000)


# One stage per process, as `dvc repro` runs them (python -m oracleproto.stages.<stage>: the
# stage runner, then the library call).
CHILD = """
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from oracleproto.config import parse_params
from oracleproto.corpus import build as b
from oracleproto.corpus.admit import admission_config
from oracleproto.stages import run_stage
stage, src, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
params = parse_params(json.loads(sys.argv[4])).overridden({"ingest": {"source": "parquet:" + src}})
result = {}

def main():
    if stage == "ingest":
        b.ingest(params.ingest, out)
    elif stage == "audit":
        result.update(b.run_audit(out, b.audit_config(params), out))
    else:
        b.run_admit(out / b.QUESTIONS, admission_config(params), out)

run_stage(main, batched=stage == "ingest")  # as oracleproto/stages/<stage>.py call it
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall_s": time.perf_counter() - t0, "peak_rss_mib": rss, "audit": result or None}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--generate-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_to:
        generate(args.rows, args.generate_to)
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "futurex_raw.parquet"
        t0 = time.perf_counter()
        # Generated in its own process: Linux carries a parent's peak RSS into the children
        # it forks, so a large parent would inflate the stages' figures.
        subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--generate-to", str(src)], check=True)
        gen_s = time.perf_counter() - t0
        params = {"ingest": {"levels": [1, 2]}, "audit": {"post_resolution_phrases": ["the result was"]},
                  "models": CUTOFFS, "admit": {"delta_days": 1, "test_fraction": 0.2}}
        stages = {}
        for stage in ("ingest", "audit", "admit"):
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, stage, str(src), str(Path(tmp) / "out"), json.dumps(params)],
                capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1],
            )
            stages[stage] = json.loads(proc.stdout.strip().splitlines()[-1])
        audit = stages["audit"]["audit"]
        wall = sum(r["wall_s"] for r in stages.values())
        rss = max(r["peak_rss_mib"] for r in stages.values())
        print(f"rows: {args.rows:,} (generated in {gen_s:.1f} s, source {src.stat().st_size / 2**20:.0f} MiB)")
        print(f"ingest → audit → admit ({len(CUTOFFS)} cutoffs), one process per stage: wall {wall:.2f} s, peak RSS {rss:.0f} MiB")
        print("stages (wall incl. imports / peak RSS): " + ", ".join(
            f"{k} {r['wall_s']:.2f} s / {r['peak_rss_mib']:.0f} MiB" for k, r in stages.items()))
        print(f"questions {audit['rows_out']:,}, quarantined {audit['rows_quarantined']:,}, collapsed {audit['duplicates_collapsed']:,}")
        print("by_rule:", json.dumps(audit["by_rule"], sort_keys=True))


if __name__ == "__main__":
    main()
