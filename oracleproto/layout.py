"""Where each stage's outputs live, relative to its output folder: one home for the file
names that one stage writes and another reads (stages share files, not modules)."""

from __future__ import annotations

from pathlib import Path

SPLITS = ("train", "test")  # the corpus' one train/test boundary, kept by every export

# export stage (data/export/)
EXPORT_SUMMARY = Path("summary.json")


def sft_file(split: str) -> Path:
    return Path("sft") / f"{split}.parquet"


def sft_openai_file(split: str) -> Path:
    return Path("sft") / f"{split}_openai.jsonl"


def rl_file(split: str) -> Path:
    return Path("rl") / f"{split}.parquet"
