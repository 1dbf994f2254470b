"""``hf:REPO_OR_DIR`` — a Hugging Face dataset, on the Hub or as a local folder, in any split
layout ``datasets`` understands (``configs:`` in the card, a ``data/`` tree, split names
from file names such as ``forecast_eval_set_example.csv`` → ``test``).

``datasets`` resolves which files make which split; the files are then read by the file
adapters, so a dataset gives exactly the raw table its files would give one by one (in
FutureX-Past's prompt layout or the seven-column layout, detected from the columns). Every
split is read unless ``hf_split`` names one; each row records its split. A local folder
never reads a file outside itself; a Hub dataset is downloaded (or taken from the cache)
first, and with no network or ``HF_HUB_OFFLINE=1`` and nothing cached it fails at once.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from oracleproto.corpus.sources.batches import BATCH_ROWS, raw_batches
from oracleproto.corpus.sources.files import file_batches
from oracleproto.corpus.sources.registry import SourceData, one_line, register_source
from oracleproto.errors import InputError
from oracleproto.io import sha256_file

FUTUREX_PAST = "futurex-ai/Futurex-Past"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_TRUE = {"1", "on", "yes", "true"}
_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def _summary(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line (datasets' messages may list hundreds of extensions)."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    return lines[0] if len(lines[0]) <= limit else lines[0][:limit] + "…"


def _offline_variable() -> str | None:
    """The variable that puts the Hub offline, if one is set. Read at call time:
    huggingface_hub reads its environment once, when it is imported."""
    return next((name for name in _OFFLINE_VARIABLES if os.environ.get(name, "").strip().lower() in _TRUE), None)


def _hub_snapshot(repo_id: str, revision: str | None, where: str) -> Path:
    """A local copy of a Hub dataset repo (downloaded, or from the cache when offline)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    offline = _offline_variable()
    # Also read at call time, as HF_HUB_OFFLINE is (None: huggingface_hub's own default).
    endpoint = os.environ.get("HF_ENDPOINT") or None
    cache = os.environ.get("HF_HUB_CACHE") or (os.environ.get("HF_HOME") and os.path.join(os.environ["HF_HOME"], "hub")) or None
    try:
        path = snapshot_download(
            repo_id, repo_type="dataset", revision=revision, local_files_only=bool(offline), endpoint=endpoint, cache_dir=cache
        )
        return Path(path)
    except LocalEntryNotFoundError as exc:
        cause = f"{offline} is set" if offline else f"the Hub is unreachable ({_summary(exc.__cause__ or exc)})"
        raise InputError(f"cannot read source {where}: no local folder {repo_id!r}, {cause} and no cached copy") from exc
    except RevisionNotFoundError as exc:
        raise InputError(f"cannot read source {where}: revision {revision!r} not found on the Hub") from exc
    except RepositoryNotFoundError as exc:
        raise InputError(f"cannot read source {where}: no local folder and no Hub dataset {repo_id!r} (private or gated? set HF_TOKEN)") from exc
    except OSError as exc:  # network and HTTP errors of huggingface_hub derive from OSError
        raise InputError(f"cannot read source {where}: {type(exc).__name__}: {_summary(exc)}") from exc


def _folder(arg: str, revision: str | None, where: str) -> tuple[Path, Path]:
    """(the dataset's folder, the folder its files must lie in). A local folder bounds
    itself; a Hub snapshot's files are links into its repo's cache folder (../../blobs)."""
    path = Path(arg)
    if path.is_dir():
        return path, path
    if path.exists():
        raise InputError(f"cannot read source {where}: not a folder (for one file use parquet:, csv: or jsonl:)")
    if not _HUB_ID.match(arg):
        raise InputError(f"cannot read source {where}: no such folder, and not a Hub dataset id like {FUTUREX_PAST}")
    snapshot = _hub_snapshot(arg, revision, where)
    return snapshot, snapshot.parents[1]


def split_files(folder: Path, bound: Path, config: str | None, where: str) -> dict[str, list[Path]]:
    """Split name → data files, as ``datasets`` resolves the folder's layout. Every file
    must lie inside ``bound``, links followed (a card may name ``../elsewhere``)."""
    import datasets  # heavy import: only when this source is used

    try:
        builder = datasets.load_dataset_builder(str(folder), name=config)
    except Exception as exc:  # datasets raises many kinds (FileNotFound, ValueError, DatasetNotFound…)
        raise InputError(f"cannot read source {where}: {type(exc).__name__}: {_summary(exc)}") from exc
    root = bound.resolve()
    layout: dict[str, list[Path]] = {}
    for split, names in (builder.config.data_files or {}).items():
        outside = [name for name in names if not Path(name).resolve().is_relative_to(root)]
        if outside:
            raise InputError(f"cannot read source {where}: split {str(split)!r} names {outside[0]}, which is outside the folder")
        layout[str(split)] = [Path(name) for name in names]
    if not layout:
        raise InputError(f"cannot read source {where}: no data files")
    return layout


def _chosen(layout: dict[str, list[Path]], split: str | None, where: str) -> dict[str, list[Path]]:
    if split is None:
        return layout
    if split not in layout:
        raise InputError(f"cannot read source {where}: no split {split!r} (it has {', '.join(map(repr, layout))}); leave ingest.hf_split empty to read all")
    return {split: layout[split]}


def _files_hash(layout: dict[str, list[Path]], folder: Path) -> str:
    """sha256 over each split's files: their paths in the folder and their bytes."""
    digest = hashlib.sha256()
    for split, files in layout.items():
        for file in files:
            digest.update(f"{split}\t{os.path.relpath(file, folder)}\t{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def _raw_rows(layout: dict[str, list[Path]], where: str) -> pa.Table:
    """All splits' raw rows as one table: files may differ in their extra columns, so their
    ``original`` records are unified (a column one file lacks is null there)."""
    batches = (batch for split, files in layout.items() for file in files for batch in file_batches(file, split))
    tables = list(raw_batches(batches))
    if not tables:
        raise InputError(f"cannot read source {where}: it holds no rows")
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowException as exc:
        raise InputError(f"cannot read source {where}: its files disagree on column types ({one_line(exc)})") from exc


@register_source("hf")
def read_hf_source(arg: str, options: dict[str, Any]) -> SourceData:
    if not arg:
        raise InputError(f"hf source needs a dataset name or folder, e.g. hf:{FUTUREX_PAST}")
    revision = options.get("hf_revision")
    where = f"hf:{arg}" + (f"@{revision}" if revision else "")
    folder, bound = _folder(arg, revision, where)
    layout = _chosen(split_files(folder, bound, options.get("hf_config"), where), options.get("hf_split") or None, where)
    rows = _raw_rows(layout, where)
    return SourceData(
        uri=where,
        batches=(rows.slice(start, BATCH_ROWS) for start in range(0, rows.num_rows, BATCH_ROWS)),
        source_hash=_files_hash(layout, folder),
        metadata={"timezone": "Asia/Shanghai", "hf_split": options.get("hf_split") or None, "splits": list(layout)},
    )
