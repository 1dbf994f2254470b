"""Fine-tune a tiny, locally built model on OracleProto's `sft` config with TRL's SFTTrainer,
on CPU, for a few steps — the whole path from the published folder to a training step.

    pip install -e ".[train]"
    python examples/train_sft.py --hub hub --steps 3

The `sft` config has rows once an API model has been evaluated on the train split
(`evaluate.splits: [train, test]` in params.yaml); offline baselines are never SFT targets.
Only `train` rows are used: `test` holds the corpus' test questions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tiny_model import build_model, build_tokenizer, texts_of  # noqa: E402

from oracleproto.errors import InputError
from oracleproto.publish.load import load_config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub", default="hub", help="the hub/ folder built by `dvc repro` (or oracleproto publish)")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    try:
        train = load_config(args.hub, "sft")["train"]
    except (InputError, KeyError) as exc:
        print(f"error: no sft train split in {args.hub} ({exc}); evaluate an API model on the train split first", file=sys.stderr)
        return 1
    train = train.select_columns(["messages", "tools"])

    from trl import SFTConfig, SFTTrainer

    tokenizer = build_tokenizer(texts_of(train))
    with tempfile.TemporaryDirectory() as out:
        config = SFTConfig(
            output_dir=out,
            max_steps=args.steps,
            per_device_train_batch_size=2,
            learning_rate=1e-3,
            assistant_only_loss=True,  # train on the assistant turns only
            report_to="none",
            logging_steps=1,
            save_strategy="no",
            use_cpu=True,
        )
        trainer = SFTTrainer(model=build_model(tokenizer), args=config, train_dataset=train, processing_class=tokenizer)
        result = trainer.train()
    print(f"sft: {result.global_step} step(s) on {train.num_rows} train row(s), final loss {result.training_loss:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
