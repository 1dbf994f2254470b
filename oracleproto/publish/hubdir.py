"""Building ``hub/`` — the Hugging Face dataset repo — from the pipeline's outputs.

Reads data/questions.parquet, data/audit/report.json, data/splits/ (cutoff-*/{train,test}
.parquet, admission_log.parquet, summary.json), data/export/ (sft.parquet,
sft_openai.jsonl, rl.parquet, summary.json), data/eval/manifest.json (hash chain),
metrics/leaderboard.md when present, and the card templates in cards/.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.io import SourceReadError, read_parquet, table_metadata
from oracleproto.params import ParamsError
from oracleproto.publish import hub

OPENAI_REPO_PATH = "openai/sft.jsonl"


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


@dataclass(frozen=True)
class PublishParams:
    repo_id: str = "MaYiding/OracleProto"
    pretty_name: str = "OracleProto"
    license: str = "apache-2.0"
    language: tuple[str, ...] = ("en",)

    @classmethod
    def from_section(cls, params: Mapping[str, Any]) -> "PublishParams":
        unknown = sorted(set(params) - {"repo_id", "pretty_name", "license", "language"})
        if unknown:
            raise ParamsError(f"params publish: unknown key(s) {', '.join(unknown)} (known: repo_id, pretty_name, license, language)")
        language = params.get("language", list(cls.language))
        if not isinstance(language, list) or not all(isinstance(code, str) for code in language):
            raise ParamsError(f"params publish.language must be a list of language codes, got {language!r}")
        values = {key: params.get(key, getattr(cls, key)) for key in ("repo_id", "pretty_name", "license")}
        for key, value in values.items():
            if not isinstance(value, str) or not value.strip():
                raise ParamsError(f"params publish.{key} must be a non-empty string, got {value!r}")
        return cls(**values, language=tuple(language))


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourceReadError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise SourceReadError(f"cannot read {path}: not JSON ({exc.msg})") from exc


def cutoff_configs(layout: Layout) -> tuple[list[hub.SplitFile], list[hub.CutoffConfig]]:
    models = hub.models_by_cutoff(read_json(layout.splits / "summary.json"))
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
    summary = read_json(layout.export / "summary.json")
    sft, rl = summary["sft"], summary["rl"]
    files = [hub.split_file("sft", "train", layout.export / "sft.parquet"), hub.split_file("rl", "train", layout.export / "rl.parquet")]
    sft_models = ", ".join(f"`{m}`" for m in sft["rows_by_model"]) or "no model"
    configs = [
        hub.TrainingConfig(
            "sft", "train", files[0].rows,
            f"TRL conversational traces (messages with tool calls + tools) of {sft_models}; trial selection `{sft['mode']}`",
        ),
        hub.TrainingConfig(
            "rl", "train", files[1].rows,
            f"verl / TRL GRPO prompts, one per admissible `{rl['split']}` question per cutoff "
            f"({len(rl['rows_by_cutoff'])} cutoffs), with rule-based ground truth",
        ),
    ]  # fmt: skip
    return files, configs


def data_copies(layout: Layout, files: Sequence[hub.SplitFile], sft_rows: int) -> dict[str, Path]:
    """Repo path → pipeline output copied verbatim: every non-empty split, and the OpenAI
    JSONL twin of the sft config when it has rows."""
    copies = hub.split_copies(files)
    if sft_rows:
        copies[OPENAI_REPO_PATH] = layout.export / "sft_openai.jsonl"
    return copies


def card_inputs(layout: Layout, publish: PublishParams) -> tuple[hub.CardInputs, dict[str, Path]]:
    """What the card shows, and the files the hub folder copies."""
    questions_path = layout.data / "questions.parquet"
    questions_meta = table_metadata(questions_path)
    question_file = hub.split_file(hub.QUESTIONS_CONFIG, "train", questions_path)
    split_files, cutoffs = cutoff_configs(layout)
    export_files, exports = training_configs(layout)
    files = (question_file, *split_files, *export_files)
    copies = data_copies(layout, files, export_files[0].rows)
    rows = {f.repo_path: f.rows for f in files} | {OPENAI_REPO_PATH: export_files[0].rows}
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
        questions=hub.question_stats([read_parquet(questions_path)]),
        cutoffs=tuple(cutoffs),
        exports=tuple(exports),
        audit_report=read_json(layout.data / "audit" / "report.json"),
        hash_chain=manifest["hash_chain"],
        leaderboard=leaderboard.read_text(encoding="utf-8") if leaderboard.exists() else None,
        files=files,
        data_files=tuple(hub.DataFile(path, rows[path], hub.sha256_file(source)) for path, source in sorted(copies.items())),
        openai_jsonl=OPENAI_REPO_PATH if OPENAI_REPO_PATH in copies else None,
        citation=(layout.cards / "citation.bib").read_text(encoding="utf-8"),
    )
    return inputs, copies


def build(layout: Layout, publish: PublishParams) -> list[hub.HubFile]:
    """Write ``layout.hub`` from the stage outputs; returns its listing."""
    inputs, copies = card_inputs(layout, publish)
    source = {"uri": inputs.source, "sha256": inputs.source_hash, "rows": inputs.questions.rows}
    texts = {
        hub.README: hub.card_text((layout.cards / "README.md").read_text(encoding="utf-8"), inputs),
        hub.PROVENANCE: hub.provenance(publish.repo_id, inputs.hash_chain, source, inputs.data_files),
    }
    return hub.build_hub(layout.hub, copies, texts)
