"""GRPO on OracleProto's `rl` config with TRL's GRPOTrainer and the package's reward
(`oracleproto.export.rewards.forecast_reward`: parser Ψ + exam score, exactly as the
evaluator scores), on a tiny locally built model, on CPU, for a few steps.

    pip install -e ".[train]"
    python examples/train_grpo.py --hub hub --steps 2

Only the `train` split is used; `test` holds the corpus' test questions. The prompts offer
`web_search` (the rows' `tools` column); this closed-loop example gives the trainer no tool
to run, so a completion is scored on its boxed answer alone. For multi-turn rollouts with
the time-masked search, see examples/verl/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_model import build_model, build_tokenizer, texts_of  # noqa: E402

from oracleproto.errors import InputError
from oracleproto.export.rewards import forecast_reward  # noqa: E402
from oracleproto.publish.load import load_config

COLUMNS = ["prompt", "answer", "question_type", "options", "choice_type"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub", default="hub", help="the hub/ folder built by `dvc repro`")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--rows", type=int, default=8, help="train rows to use (a smoke run)")
    args = parser.parse_args()
    try:
        train = load_config(args.hub, "rl")["train"]
    except (InputError, KeyError) as exc:
        print(f"error: no rl train split in {args.hub} ({exc})", file=sys.stderr)
        return 1
    train = train.select_columns(COLUMNS).select(range(min(args.rows, train.num_rows)))

    from trl import GRPOConfig, GRPOTrainer

    tokenizer = build_tokenizer(texts_of(train))
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            max_steps=args.steps,
            per_device_train_batch_size=2,
            num_generations=2,
            max_completion_length=16,
            learning_rate=1e-3,
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            use_cpu=True,
        )
        trainer = GRPOTrainer(
            model=build_model(tokenizer), reward_funcs=[forecast_reward], args=config, train_dataset=train, processing_class=tokenizer
        )
        result = trainer.train()
    print(f"grpo: {result.global_step} step(s) on {train.num_rows} train row(s), final loss {result.training_loss:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
