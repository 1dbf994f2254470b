"""Check: on a trial table, the verl reward of every trial's raw output equals the scorer's
exam score of the trial (the parsed `pred` against `answer`).

    python bench/reward_parity.py [data/eval/trials.parquet]

Prints the trial count, mismatches (first five named) and the reward throughput; exits 1 on
any mismatch.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

from oracleproto.exam import exam_scores  # noqa: E402
from oracleproto.export.rewards import compute_score  # noqa: E402


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "data/eval/trials.parquet")
    columns = ["model", "q_id", "trial", "question_type", "choice_type", "options", "answer", "pred", "raw_output"]
    trials = pq.read_table(path, columns=columns)
    start = time.perf_counter()
    rewards = [
        compute_score("oracleproto", row["raw_output"], row["answer"], row)
        for row in trials.to_pylist()
    ]
    elapsed = time.perf_counter() - start
    scores = exam_scores(trials["pred"], trials["answer"]).tolist()
    keys = trials.select(["model", "q_id", "trial"]).to_pylist()
    mismatches = [(k, r, s) for k, r, s in zip(keys, rewards, scores) if r != s]
    print(f"{path}: {trials.num_rows} trials, {len(mismatches)} reward != exam score, "
          f"{trials.num_rows / max(elapsed, 1e-9):,.0f} rewards/s")
    for key, reward, score in mismatches[:5]:
        print(f"  {key}: reward {reward} vs exam score {score}")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
