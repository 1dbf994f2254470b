"""Building ``hub/`` — the Hugging Face dataset repo — from the pipeline's outputs.

Reads data/questions.parquet, data/audit/report.json, data/splits/ (cutoff-*/{train,test}
.parquet, admission_log.parquet, summary.json), data/export/ (
sft/ and rl/ {train,test} splits, summary.json), data/eval/manifest.json (hash chain),
metrics/leaderboard.md when present, and the card templates in cards/.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.admission import load_probe_report
from oracleproto.config import Publish
from oracleproto.errors import InputError
from oracleproto.io import read_parquet, table_metadata
from oracleproto.layout import (
    EXPORT_SUMMARY,
    SPLITS,
    rl_file,
    sft_file,
    sft_openai_file,
)
from oracleproto.publish import hub


@dataclass(frozen=True)
class Layout:
    """Where the stage reads and writes (the repo's layout; tests point it at a tmp dir)."""

    data: Path = Path("data")
    metrics: Path = Path("metrics")
    cards: Path = Path("cards")
    hub: Path = Path("hub")

    @property
    def splits(self) -> Path:
        return self.data / "splits"

    @property
    def export(self) -> Path:
        return self.data / "export"


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"cannot read {path}: not JSON ({exc.msg})") from exc


def cutoff_configs(layout: Layout) -> tuple[list[hub.SplitFile], list[hub.CutoffConfig]]:
    models = hub.models_by_cutoff(read_json(layout.splits / "summary.json")["models"])
    files: list[hub.SplitFile] = []
    configs = []
    for split_dir in sorted(p for p in layout.splits.glob("cutoff-*") if p.is_dir()):
        cutoff = split_dir.name.removeprefix("cutoff-")
        stats = {}
        for split in ("train", "test"):
            path = split_dir / f"{split}.parquet"
            files.append(hub.split_file(split_dir.name, split, path))
            stats[split] = hub.question_stats([read_parquet(path)])
        configs.append(hub.CutoffConfig(split_dir.name, cutoff, models.get(cutoff, ()), stats["train"], stats["test"]))
    return files, configs


def training_configs(layout: Layout) -> tuple[list[hub.SplitFile], list[hub.TrainingConfig]]:
    """The ``sft`` and ``rl`` configs, each with the corpus' ``train`` and ``test`` splits."""
    summary = read_json(layout.export / EXPORT_SUMMARY)
    sft, rl = summary["sft"], summary["rl"]
    sft_models = ", ".join(f"`{m}`" for m in sft["rows_by_model"]) or "no model"
    rl_kind = "with the `web_search` tool schema and its χ for the trainer's tool" if rl["tools"] else "closed-book (no tools)"
    files, configs = [], []
    for split in SPLITS:
        files += [hub.split_file("sft", split, layout.export / sft_file(split)), hub.split_file("rl", split, layout.export / rl_file(split))]
        configs += [
            hub.TrainingConfig(
                "sft", split, sft[f"{split}_rows"],
                f"TRL conversational traces of {sft_models} on {split} questions; trial selection `{sft['mode']}`; "
                f"tool calls carry exactly the schema's arguments ({sft['flagged']} flagged trial(s) in all)",
            ),
            hub.TrainingConfig(
                "rl", split, rl[f"{split}_rows"],
                f"verl / TRL GRPO prompts, one per admitted {split} question per cutoff, {rl_kind}",
            ),
        ]  # fmt: skip
    return files, configs


def openai_repo_path(split: str) -> str:
    return f"openai/sft_{split}.jsonl"


def data_copies(layout: Layout, files: Sequence[hub.SplitFile], sft_rows: Mapping[str, int]) -> dict[str, Path]:
    """Repo path → pipeline output copied verbatim: every non-empty split, and the OpenAI
    JSONL twin of each sft split that has rows."""
    copies = hub.split_copies(files)
    for split, rows in sft_rows.items():
        if rows:
            copies[openai_repo_path(split)] = layout.export / sft_openai_file(split)
    return copies


def card_inputs(layout: Layout, publish: Publish) -> tuple[hub.CardInputs, dict[str, Path]]:
    """What the card shows, and the files the hub folder copies."""
    questions_path = layout.data / "questions.parquet"
    questions_meta = table_metadata(questions_path)
    question_file = hub.split_file(hub.QUESTIONS_CONFIG, "train", questions_path)
    split_files, cutoffs = cutoff_configs(layout)
    export_files, exports = training_configs(layout)
    files = (question_file, *split_files, *export_files)
    sft_rows = {f.split: f.rows for f in export_files if f.config == "sft"}
    copies = data_copies(layout, files, sft_rows)
    rows = {f.repo_path: f.rows for f in files} | {openai_repo_path(split): n for split, n in sft_rows.items()}
    manifest_path = layout.data / "eval" / "manifest.json"
    manifest = read_json(manifest_path)
    if not isinstance(manifest.get("hash_chain"), dict):
        raise hub.HubError(f"{manifest_path}: no 'hash_chain' object (written by the evaluate stage)")
    leaderboard = layout.metrics / "leaderboard.md"
    inputs = hub.CardInputs(
        repo_id=publish.repo_id,
        pretty_name=publish.pretty_name,
        license=publish.license,
        language=publish.language,
        source=questions_meta.get("source", "unknown"),
        source_hash=questions_meta.get("source_hash", "unknown"),
        timezone=questions_meta.get("timezone", "unknown"),
        delta_days=table_metadata(layout.splits / "admission_log.parquet")["delta_days"],
        test_boundary=read_json(layout.splits / "summary.json")["test_boundary"],
        leakage=hub.leakage_text(
            read_json(Path(publish.leak_audit_report)) if publish.leak_audit_report else None,
            [load_probe_report(path) for path in publish.probe_reports],
        ),
        questions=hub.question_stats([read_parquet(questions_path)]),
        cutoffs=tuple(cutoffs),
        exports=tuple(exports),
        audit_report=read_json(layout.data / "audit" / "report.json"),
        hash_chain=manifest["hash_chain"],
        leaderboard=leaderboard.read_text(encoding="utf-8") if leaderboard.exists() else None,
        files=files,
        data_files=tuple(hub.DataFile(path, rows[path], hub.sha256_file(source)) for path, source in sorted(copies.items())),
        openai_jsonl=", ".join(f"`{p}`" for p in sorted(copies) if p.startswith("openai/")) or None,
        citation=(layout.cards / "citation.bib").read_text(encoding="utf-8"),
    )
    return inputs, copies


def build(layout: Layout, publish: Publish) -> list[hub.HubFile]:
    """Write ``layout.hub`` from the stage outputs; returns its listing."""
    inputs, copies = card_inputs(layout, publish)
    source = {"uri": inputs.source, "sha256": inputs.source_hash, "rows": inputs.questions.rows}
    texts = {
        hub.README: hub.card_text((layout.cards / "README.md").read_text(encoding="utf-8"), inputs),
        hub.PROVENANCE: hub.provenance(publish.repo_id, inputs.hash_chain, source, inputs.data_files),
    }
    return hub.build_hub(layout.hub, copies, texts)
