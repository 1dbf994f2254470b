"""The Hugging Face dataset repo: card, folder and publication.

``build_hub`` writes a folder that *is* the dataset repo (ECOSYSTEM §1.1): ``README.md``
(YAML ``configs:`` + card body) and ``data/<config>/<split>-00000-of-00001.parquet``
files copied byte for byte from the pipeline's outputs, so their sha256 survive
publication. ``publish`` uploads that folder with huggingface_hub and tags the commit.

The card and the folder are pure functions of their inputs (no knowledge of the project's
data/ layout, no clock, no host data): the same inputs give a byte-identical folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from oracleproto.errors import ExternalServiceError
from oracleproto.io import json_text, sha256_file, write_text

REPO_TYPE = "dataset"
README = "README.md"
PROVENANCE = "provenance.json"
QUESTIONS_CONFIG = "questions"
# Question-type buckets of the card tables, as the audit report spells them.
TYPE_BUCKETS = (
    ("yes_no/single", "yes/no"),
    ("binary_named/single", "binary named"),
    ("multiple_choice/single", "MC single"),
    ("multiple_choice/multi", "MC multi"),
)
# ASCII only and matched whole (``$`` would accept a trailing newline, ``\d`` any Unicode digit)
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*", re.ASCII)
RELEASE_TAG = re.compile(r"v[0-9]+\.[0-9]+\.[0-9]+", re.ASCII)
TOKEN_PATTERNS = (re.compile(r"(Bearer\s+)\S+", re.IGNORECASE), re.compile(r"()hf_[A-Za-z0-9]{4,}"))
REACH_TIMEOUT_S = 2.0
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")  # what the Hub's YAML data_files accepts
TRUTHY = ("1", "ON", "YES", "TRUE")
HEADING = re.compile(r"^#{1,4} ")


class HubError(ExternalServiceError):
    """A hub folder cannot be built, published or loaded; the message says what and why."""


# ---------------------------------------------------------------------------------------
# Files and configs


@dataclass(frozen=True)
class SplitFile:
    """One split of one config: the parquet file to publish and its row count."""

    config: str
    split: str
    source: Path
    rows: int

    @property
    def repo_path(self) -> str:
        return hub_data_path(self.config, self.split)


def hub_data_path(config: str, split: str) -> str:
    """Repo path of a split's single shard (the layout ``push_to_hub`` uses under data/)."""
    if not SPLIT_NAME.match(split):
        raise HubError(f"split name {split!r} is not allowed by the Hub (letters, digits, _ and dots)")
    if config == "data" or "/" in config:
        raise HubError(f"config name {config!r} is not allowed (no '/', and 'data' is reserved)")
    return f"data/{config}/{split}-00000-of-00001.parquet"


def split_file(config: str, split: str, source: str | os.PathLike[str]) -> SplitFile:
    """A split backed by an existing parquet file (the row count is read from its footer)."""
    path = Path(source)
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException) as exc:
        raise HubError(f"config {config}, split {split}: cannot read {path}: {exc}") from exc
    return SplitFile(config, split, path, rows)


def published_files(files: Iterable[SplitFile]) -> list[SplitFile]:
    """The splits that go into the repo: empty ones are left out, because one 0-row parquet
    makes ``load_dataset`` fail for its whole config (no row group to read)."""
    return [f for f in files if f.rows > 0]


def configs_yaml(files: Sequence[SplitFile], default: str) -> list[dict[str, Any]]:
    """The card's ``configs:`` entries, configs and splits in the order given."""
    entries: dict[str, dict[str, Any]] = {}
    for f in published_files(files):
        entry = entries.setdefault(f.config, {"config_name": f.config, "data_files": []})
        entry["data_files"].append({"split": f.split, "path": f"data/{f.config}/{f.split}-*"})
    if default not in entries:
        raise HubError(f"default config {default!r} has no rows to publish")
    entries[default] = {"config_name": default, "default": True, "data_files": entries[default]["data_files"]}
    return list(entries.values())


# ---------------------------------------------------------------------------------------
# Per-config statistics for the card


@dataclass(frozen=True)
class QuestionStats:
    rows: int
    by_bucket: dict[str, int]
    first_end: str | None
    last_end: str | None

    @property
    def date_range(self) -> str:
        return "—" if self.first_end is None else f"{self.first_end} → {self.last_end}"


def question_stats(tables: Iterable[pa.Table]) -> QuestionStats:
    """Rows, counts by type bucket and end_time range over question-shaped tables."""
    tables = [t.select(["question_type", "choice_type", "end_time"]) for t in tables]
    table = pa.concat_tables(tables) if tables else None
    if table is None or table.num_rows == 0:
        return QuestionStats(0, {key: 0 for key, _ in TYPE_BUCKETS}, None, None)
    buckets = pc.binary_join_element_wise(table["question_type"], table["choice_type"], "/")
    counts = {row["values"]: row["counts"] for row in pc.value_counts(buckets).to_pylist()}
    return QuestionStats(
        rows=table.num_rows,
        by_bucket={key: counts.get(key, 0) for key, _ in TYPE_BUCKETS},
        first_end=pc.min(table["end_time"]).as_py().isoformat(),
        last_end=pc.max(table["end_time"]).as_py().isoformat(),
    )


@dataclass(frozen=True)
class CutoffConfig:
    """A cutoff's split set as the card shows it."""

    name: str
    cutoff: str
    models: tuple[str, ...]
    train: QuestionStats
    test: QuestionStats

    @property
    def published(self) -> bool:
        return self.train.rows + self.test.rows > 0


def models_by_cutoff(admission_summary: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """``{cutoff ISO date: models}`` from the admission summary ``{model: {cutoff, …}}``."""
    out: dict[str, list[str]] = {}
    for model, entry in sorted(admission_summary.items()):
        out.setdefault(str(entry["cutoff"]), []).append(model)
    return {cutoff: tuple(models) for cutoff, models in out.items()}


# ---------------------------------------------------------------------------------------
# Markdown parts


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def cutoff_table(configs: Sequence[CutoffConfig]) -> str:
    """One row per cutoff: models, split sizes, counts by type, resolution-date range."""
    header = ["config", "cutoff κ", "models", "train", "test", *(label for _, label in TYPE_BUCKETS), "end_time τ range"]
    rows = []
    for c in configs:
        both = QuestionStats(
            c.train.rows + c.test.rows,
            {key: c.train.by_bucket[key] + c.test.by_bucket[key] for key, _ in TYPE_BUCKETS},
            min(filter(None, (c.train.first_end, c.test.first_end)), default=None),
            max(filter(None, (c.train.last_end, c.test.last_end)), default=None),
        )
        name = f"`{c.name}`" if c.published else f"{c.name} (empty: not a config)"
        models = ", ".join(f"`{m}`" for m in c.models) or "—"
        rows.append([name, c.cutoff, models, c.train.rows, c.test.rows, *(both.by_bucket[k] for k, _ in TYPE_BUCKETS), both.date_range])
    return markdown_table(header, rows)


@dataclass(frozen=True)
class DataFile:
    """A published data file: repo path, rows (lines for JSONL) and sha256."""

    path: str
    rows: int
    sha256: str


def files_table(data_files: Sequence[DataFile]) -> str:
    return markdown_table(["file", "rows", "sha256"], [[f"`{f.path}`", f.rows, f"`{f.sha256}`"] for f in data_files])


def audit_summary(report: Mapping[str, Any]) -> str:
    """The construction-time audit's counts and its rejections by rule."""
    lines = [
        f"- rows read from the source: {report.get('rows_in', '—')}",
        f"- rows kept: {report.get('rows_out', '—')}",
        f"- rows quarantined (kept with their reason, never dropped silently): {report.get('rows_quarantined', '—')}",
        f"- duplicates collapsed: {report.get('duplicates_collapsed', '—')}",
    ]
    by_rule = report.get("by_rule") or {}
    rules = markdown_table(["rule", "rows"], sorted(by_rule.items())) if by_rule else "No row was rejected by any rule."
    return "\n".join(lines) + "\n\n" + rules


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested mapping → sorted (dotted key, scalar) pairs."""
    pairs: list[tuple[str, Any]] = []
    for key in sorted(mapping):
        value = mapping[key]
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            pairs += flatten(value, f"{name}.")
        else:
            pairs.append((name, value))
    return pairs


def _hash_value(value: Any) -> str:
    return "null (off)" if value is None else f"`{value}`"


def _is_record_map(value: Any) -> bool:
    """A mapping of records keyed by a name, such as the run's question sources by path."""
    return isinstance(value, Mapping) and bool(value) and all(isinstance(v, Mapping) for v in value.values())


def hash_chain_table(chain: Mapping[str, Any]) -> str:
    """The run's hash chain (paper Table 22): one key/value table for the run-level hashes,
    then one table per group of records (e.g. the fingerprint of every question source).
    null means the covered artefact was off in that run (e.g. a disabled protocol)."""
    scalars = {key: value for key, value in chain.items() if not _is_record_map(value)}
    parts = [markdown_table(["hash", "value"], [[f"`{name}`", _hash_value(value)] for name, value in flatten(scalars)])]
    for group in sorted(key for key, value in chain.items() if _is_record_map(value)):
        records = chain[group]
        fields = sorted({name for record in records.values() for name, _ in flatten(record)})
        rows = [[f"`{key}`", *(_hash_value(dict(flatten(records[key])).get(f)) for f in fields)] for key in sorted(records)]
        parts.append(f"`{group}`:\n\n" + markdown_table([group, *fields], rows))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------
# Card


def embedded_markdown(text: str | None) -> str | None:
    """Markdown to embed under a card section (None if blank): a leading heading is dropped
    (the card's section heading replaces it) and the others are demoted below "##"."""
    if text is None or not text.strip():
        return None
    lines = text.strip().splitlines()
    if HEADING.match(lines[0]):
        lines = lines[1:]
    return "\n".join(("##" + line) if HEADING.match(line) else line for line in lines).strip()


def render_template(template: str, values: Mapping[str, Any], name: str) -> str:
    """Fill ``${placeholder}``s (``string.Template``: ``$$`` is a literal dollar); every
    placeholder must have a value, and a value nobody uses is an error too."""
    tmpl = string.Template(template)
    if not tmpl.is_valid():
        raise HubError(f"card template {name}: a '$' is neither $$ nor a ${{placeholder}}")
    used = set(tmpl.get_identifiers())
    missing = sorted(used - set(values))
    unused = sorted(set(values) - used)
    if missing or unused:
        raise HubError(f"card template {name}: placeholders without a value {missing}, values without a placeholder {unused}")
    return tmpl.substitute({key: str(value) for key, value in values.items()})


def size_category(rows: int) -> str:
    """The Hub's size_categories bucket of a row count."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < limit:
            return label
    return "1M<n<10M"


def card_header(metadata: Mapping[str, Any], configs: list[dict[str, Any]]) -> str:
    """The YAML front matter, built by huggingface_hub (no Jinja2 needed)."""
    from huggingface_hub import DatasetCardData

    return "---\n" + DatasetCardData(**metadata, configs=configs).to_yaml() + "\n---\n"


@dataclass(frozen=True)
class TrainingConfig:
    """A training-export config as the card's second table shows it."""

    name: str
    split: str
    rows: int
    content: str


@dataclass(frozen=True)
class CardInputs:
    """Everything the card shows; the pipeline reads it from the stage outputs."""

    repo_id: str
    pretty_name: str
    license: str
    language: tuple[str, ...]
    source: str
    source_hash: str
    timezone: str
    delta_days: int
    test_boundary: Mapping[str, Any]
    leakage: str
    questions: QuestionStats
    cutoffs: tuple[CutoffConfig, ...]
    exports: tuple[TrainingConfig, ...]
    audit_report: Mapping[str, Any]
    hash_chain: Mapping[str, Any]
    leaderboard: str | None
    files: tuple[SplitFile, ...]
    data_files: tuple[DataFile, ...]
    openai_jsonl: str | None
    citation: str


def load_code(inputs: CardInputs) -> str:
    """The "how to load" snippet, naming only configs that exist in this release."""
    published = {f.config for f in published_files(inputs.files)}
    lines = [
        "from datasets import load_dataset",
        "",
        "# the audited question table (the default configuration)",
        f'questions = load_dataset("{inputs.repo_id}", split="train")',
    ]
    cutoff = next((c for c in reversed(inputs.cutoffs) if c.name in published), None)
    if cutoff is not None:
        splits = [f.split for f in published_files(inputs.files) if f.config == cutoff.name]
        lines += ["", f"# questions admissible for a model with knowledge cutoff {cutoff.cutoff}"]
        lines += [f'{split} = load_dataset("{inputs.repo_id}", "{cutoff.name}", split="{split}")' for split in splits]
    comments = {"sft": "TRL conversational SFT: messages + tools", "rl": "verl / TRL GRPO prompts with ground truth"}
    for name, comment in comments.items():
        if name in published:
            lines += ["", f"# {comment}", f'{name} = load_dataset("{inputs.repo_id}", "{name}", split="train")']
    return "\n".join(lines)


def other_table(inputs: CardInputs) -> str:
    published = {f.config for f in published_files(inputs.files)}
    q = inputs.questions
    by_type = ", ".join(f"{label} {q.by_bucket[key]}" for key, label in TYPE_BUCKETS)
    rows = [[f"`{QUESTIONS_CONFIG}` (default)", "train", q.rows, f"the audited questions: {by_type}; τ {q.date_range}"]]
    for e in inputs.exports:
        name = f"`{e.name}`" if e.name in published else f"{e.name} (empty: not a config)"
        rows.append([name, e.split, e.rows, e.content])
    return markdown_table(["config", "split", "rows", "content"], rows)


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def interval_text(stat: Mapping[str, Any]) -> str:
    if stat.get("ci_low") is None:
        return "–"
    return f"[{percent(stat['ci_low'])}, {percent(stat['ci_high'])}]"


def leak_audit_text(report: Mapping[str, Any]) -> str:
    """The residual leak rate of a labelled leak audit (``oracleproto leak-audit report``)."""
    residual, through = report["residual_leak_rate"], report["leak_pass_through"]
    text = (
        f"**Residual leak rate** (leaks among the search results shown to the model): {percent(residual['rate'])} "
        f"({residual['successes']} of {residual['n']} labelled, Wilson 95 % {interval_text(residual)})."
    )
    if through["estimate"] is not None:
        text += f" Share of all leaks that reached the model: {percent(through['estimate'])} (95 % {interval_text(through)})."
    return text


def probe_table(reports: Sequence[Mapping[str, Any]]) -> str:
    """Each probed model's disclosed and effective cutoff (``oracleproto probe``)."""
    lines = ["| model | disclosed cutoff | probed effective cutoff | flagged |", "|---|---|---|---|"]
    for report in sorted(reports, key=lambda r: r["model"]):
        effective = report["effective_cutoff"] or "none detected"
        lines.append(f"| {report['model']} | {report['disclosed_cutoff']} | {effective} | {'yes' if report['flagged'] else 'no'} |")
    return "\n".join(lines)


def leakage_text(audit: Mapping[str, Any] | None, probes: Sequence[Mapping[str, Any]]) -> str:
    parts = [leak_audit_text(audit)] if audit else []
    if probes:
        parts.append("Cutoff probes (closed-book accuracy by month around each disclosed cutoff):\n\n" + probe_table(probes))
    return "\n\n".join(parts) or "No leak audit or cutoff probe was published with this release (`oracleproto leak-audit`, `oracleproto probe`)."


def boundary_text(boundary: Mapping[str, Any]) -> str:
    """The corpus' one train/test boundary, in a sentence."""
    if not boundary.get("test_questions"):
        return "No question is held out for test in this release (`test_fraction` = 0)."
    return (
        f"**One train/test boundary for the whole corpus.** The newest {boundary['test_fraction']:.0%} of the "
        f"audited questions by (end_time, id) — {boundary['test_questions']} questions, from "
        f"{boundary['first_test_end_time']} (id `{boundary['first_test_id']}`) on — are `test` in every "
        "configuration that admits them and `train` in none, so no configuration, export or union of them puts "
        "a test question into a training split. Train on `train` splits only; evaluate on `test`."
    )


def card_text(template: str, inputs: CardInputs) -> str:
    """README.md: YAML header (configs, licence, …) and the card body from ``template``."""
    configs = configs_yaml(inputs.files, default=QUESTIONS_CONFIG)
    header = card_header(
        {
            "license": inputs.license,
            "language": list(inputs.language),
            "pretty_name": inputs.pretty_name,
            "task_categories": ["question-answering", "text-generation"],
            "tags": ["forecasting", "temporal-masking", "leakage-control", "llm-evaluation"],
            "size_categories": [size_category(inputs.questions.rows)],
        },
        configs,
    )
    openai_note = (
        f"The same rows, in order, in the OpenAI chat fine-tuning format: {inputs.openai_jsonl}."
        if inputs.openai_jsonl
        else ""
    )
    body = render_template(
        template,
        {
            "pretty_name": inputs.pretty_name,
            "source": inputs.source,
            "source_hash": inputs.source_hash,
            "questions_config": QUESTIONS_CONFIG,
            "n_questions": inputs.questions.rows,
            "questions_range": inputs.questions.date_range,
            "load_code": load_code(inputs),
            "cutoff_table": cutoff_table(inputs.cutoffs),
            "other_table": other_table(inputs),
            "timezone": inputs.timezone,
            "openai_note": openai_note,
            "delta_days": inputs.delta_days,
            "test_boundary": boundary_text(inputs.test_boundary),
            "leakage": inputs.leakage,
            "audit_summary": audit_summary(inputs.audit_report),
            "leaderboard": embedded_markdown(inputs.leaderboard) or "No leaderboard in this release (the score stage wrote none).",
            "hash_chain": hash_chain_table(inputs.hash_chain),
            "files_table": files_table(inputs.data_files),
            "license_text": (
                f"This repository is released under `{inputs.license}`. The questions derive from "
                f"`{inputs.source}`, whose own terms also apply to them."
            ),
            "citation": inputs.citation.strip(),
        },
        "README.md",
    )
    return header + "\n" + body


# ---------------------------------------------------------------------------------------
# Folder



@dataclass(frozen=True)
class HubFile:
    path: str  # repo path, '/'-separated
    size: int
    sha256: str


def hub_listing(hub_dir: str | os.PathLike[str]) -> list[HubFile]:
    """Every file of the folder, sorted by repo path."""
    root = Path(hub_dir)
    if not root.is_dir():
        raise HubError(f"hub folder {root} does not exist (run `dvc repro publish` first)")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return [HubFile(p.relative_to(root).as_posix(), p.stat().st_size, sha256_file(p)) for p in files]


def hub_digest(listing: Sequence[HubFile]) -> str:
    """One sha256 over the sorted ``<sha256>  <path>`` lines: names the whole release."""
    body = "".join(f"{f.sha256}  {f.path}\n" for f in listing)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def split_copies(files: Iterable[SplitFile]) -> dict[str, Path]:
    """Repo path → source file of every published split."""
    return {f.repo_path: f.source for f in published_files(files)}


def build_hub(out_dir: str | os.PathLike[str], copies: Mapping[str, Path], texts: Mapping[str, str]) -> list[HubFile]:
    """Write the repo folder from scratch: every ``copies`` source copied byte for byte to
    its repo path, plus the text files (README.md, provenance.json). Nothing stale survives."""
    root = Path(out_dir)
    if root.exists():
        shutil.rmtree(root)
    for repo_path, source in sorted(copies.items()):
        target = root / repo_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    for repo_path, text in sorted(texts.items()):
        write_text(text, root / repo_path)
    return hub_listing(root)


def provenance(repo_id: str, hash_chain: Mapping[str, Any], source: Mapping[str, Any], data_files: Sequence[DataFile]) -> str:
    """Machine-readable twin of the card's provenance section (provenance.json)."""
    return json_text(
        {
            "repo_id": repo_id,
            "source": dict(source),
            "hash_chain": dict(hash_chain),
            "files": {f.path: {"rows": f.rows, "sha256": f.sha256} for f in data_files},
        }
    )


# ---------------------------------------------------------------------------------------
# Publication


def check_release(repo_id: str, tag: str) -> None:
    """A repo id and a release tag, refused before any network call: our whole-string ASCII
    patterns, then the Hub's own validator (which also rejects ``--`` and ``..``)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if not REPO_ID.fullmatch(repo_id):
        raise HubError(f"repo id {repo_id!r} is not ORG/NAME (ASCII letters, digits, '.', '_', '-')")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise HubError(f"repo id {repo_id!r} is not valid on the Hub: {exc}") from None
    if not RELEASE_TAG.fullmatch(tag):
        raise HubError(f"tag {tag!r} is not a release tag vX.Y.Z (ASCII digits)")


def redact_tokens(text: str, *secrets: str) -> str:
    """``text`` with every bearer credential and ``hf_…`` token removed, whatever echoed it."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    for pattern in TOKEN_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + "[redacted]", text)
    return text


def check_hub_reachable(what: str) -> None:
    """Fail in seconds, with one line, when the Hub cannot be used: offline mode, or no
    answer from the endpoint to one request without retries (instead of huggingface_hub's
    retries with backoff, ~24 s of "Retrying in Ns")."""
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    if offline_mode():
        raise HubError(f"{what} needs the Hub but HF_HUB_OFFLINE is set: unset it, or use a local folder")
    try:
        get_session().head(constants.ENDPOINT, timeout=REACH_TIMEOUT_S)
    except hub_http_client().TransportError as exc:
        raise HubError(
            f"{what}: cannot reach the Hub at {constants.ENDPOINT} ({type(exc).__name__}); "
            "working offline? set HF_HUB_OFFLINE=1 and use a local folder"
        ) from None


def offline_mode() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub reads it, also when set after its import."""
    from huggingface_hub import constants

    return constants.is_offline_mode() or os.environ.get("HF_HUB_OFFLINE", "").upper() in TRUTHY


def delete_patterns(listing: Sequence[HubFile]) -> list[str]:
    """Remote paths this release replaces: everything under the folder's top-level
    directories (stale shards go; README.md is overwritten; .gitattributes is kept)."""
    return sorted({f"{f.path.split('/')[0]}/**" for f in listing if "/" in f.path})


@dataclass(frozen=True)
class ReleasePlan:
    repo_id: str
    tag: str
    hub_dir: Path
    listing: list[HubFile]

    @property
    def digest(self) -> str:
        return hub_digest(self.listing)

    @property
    def commit_message(self) -> str:
        return f"OracleProto {self.tag}"

    @property
    def commit_description(self) -> str:
        return f"hub folder sha256 {self.digest} ({len(self.listing)} files)"

    def operations(self) -> list[str]:
        """What ``publish`` does, one line per call, then one line per file."""
        lines = [
            f"upload_folder repo_id={self.repo_id} repo_type={REPO_TYPE} folder={self.hub_dir} "
            f"delete_patterns={delete_patterns(self.listing)} commit_message={self.commit_message!r}",
            f"create_tag repo_id={self.repo_id} repo_type={REPO_TYPE} tag={self.tag} revision=<commit of upload_folder>",
        ]
        return lines + [f"{f.sha256}  {f.size:>12}  {f.path}" for f in self.listing]


def plan_release(hub_dir: str | os.PathLike[str], repo_id: str, tag: str) -> ReleasePlan:
    check_release(repo_id, tag)
    listing = hub_listing(hub_dir)
    if README not in {f.path for f in listing}:
        raise HubError(f"hub folder {hub_dir} has no {README}: it is not a dataset repo")
    return ReleasePlan(repo_id, tag, Path(hub_dir), listing)


@dataclass(frozen=True)
class Published:
    commit: str
    commit_url: str


def hub_http_client() -> Any:
    """The HTTP client module huggingface_hub uses: httpx2 from 2.0 on, httpx before
    (transformers 5 and verl 0.9 keep users on the 1.x line)."""
    try:
        import httpx2
    except ImportError:
        import httpx as httpx2
    return httpx2


def publish(plan: ReleasePlan, token: str) -> Published:
    """``upload_folder`` then ``create_tag`` on the uploaded commit. Hub failures become a
    HubError naming the step; no token ever appears in a message (the server may echo it)."""
    check_hub_reachable("publishing")
    try:
        return _upload_and_tag(plan, token)
    except HubError as exc:
        raise HubError(redact_tokens(str(exc), token)) from None


def _upload_and_tag(plan: ReleasePlan, token: str) -> Published:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    http = hub_http_client()
    api = HfApi(token=token)
    step = "upload_folder"
    try:
        info = api.upload_folder(
            repo_id=plan.repo_id,
            repo_type=REPO_TYPE,
            folder_path=str(plan.hub_dir),
            commit_message=plan.commit_message,
            commit_description=plan.commit_description,
            delete_patterns=delete_patterns(plan.listing),
        )
        step = "create_tag"
        api.create_tag(
            plan.repo_id,
            repo_type=REPO_TYPE,
            tag=plan.tag,
            tag_message=plan.commit_description,
            revision=info.oid,
        )
    except OfflineModeIsEnabled as exc:
        raise HubError(f"{step}: the Hub is unreachable in offline mode ({exc})") from exc
    except RepositoryNotFoundError as exc:
        raise HubError(
            f"{step}: dataset repo {plan.repo_id} not found or not writable with this token; "
            f"create it first (hf repos create {plan.repo_id} --repo-type dataset)"
        ) from exc
    except (HfHubHTTPError, http.HTTPStatusError) as exc:  # 1.x can let a bare status error through
        if getattr(getattr(exc, "response", None), "status_code", None) == 404:
            raise HubError(
                f"{step}: dataset repo {plan.repo_id} not found or not writable with this token; "
                f"create it first (hf repos create {plan.repo_id} --repo-type dataset)"
            ) from exc
        raise HubError(f"{step} on {plan.repo_id} failed: {exc}") from exc
    except http.TransportError as exc:
        raise HubError(f"{step}: cannot reach the Hub ({type(exc).__name__}: {exc})") from exc
    return Published(commit=info.oid, commit_url=info.commit_url)
